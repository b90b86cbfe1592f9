// SPDX-License-Identifier: MIT
// Cost of one counter read per backend, as a region boundary pays it (the thread reading its
// own counters) and as the sampler thread pays it per thread and period (another thread's).
//   counter_bench [iterations]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "counters/papi_backend.hpp"
#include "counters/perf_backend.hpp"
#include "counters/proc_backends.hpp"

using namespace hpcprof::agent::counters;

namespace {

double nsPerRead(Backend& b, ThreadSlot& slot, bool self, int n) {
    uint64_t values[kMaxCounters];
    b.read(slot, self, values); // warm up
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) b.read(slot, self, values);
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

void bench(Backend& b, const char* const* counters, int count, int n) {
    int added = 0;
    for (int i = 0; i < count; ++i) {
        Offer o = b.offer(counters[i]);
        if (o.ok && !o.processWide) b.add(o, uint8_t(added++));
        else if (!o.ok) std::printf("  %-8s %-30s unavailable: %s\n", b.name(), counters[i], o.reason);
    }
    if (added == 0) return;
    ThreadSlot slot;
    b.attach(slot, int(gettid()));
    std::printf("%-9s %d counters: %8.0f ns per boundary read (own thread), %8.0f ns per sampler read\n",
                b.name(), added, nsPerRead(b, slot, true, n), nsPerRead(b, slot, false, n));
    b.detach(slot);
}

} // namespace

int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    const char* perfCounters[] = {"task_clock", "context_switches", "cpu_migrations", "page_faults"};
    const char* rusageCounters[] = {"voluntary_context_switches", "involuntary_context_switches"};
    const char* schedCounters[] = {"cpu_wait"};
    const char* papiCounters[] = {"PAPI_TOT_INS", "PAPI_TOT_CYC", "perf::TASK-CLOCK"};
    PerfBackend perf;
    RusageBackend rusage;
    SchedstatBackend sched;
    bench(perf, perfCounters, 4, n);
    bench(rusage, rusageCounters, 2, n);
    bench(sched, schedCounters, 1, n);
    char why[kReasonSize] = {};
    if (auto papi = makePapiBackend(why))
        bench(*papi, papiCounters, 3, n);
    else
        std::printf("papi      unavailable: %s\n", why);
    return 0;
}
