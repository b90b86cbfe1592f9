// SPDX-License-Identifier: MIT
// What each counter backend costs: one read as a region boundary pays it (the thread reading
// its own counters, without descriptors), one read as the sampler thread pays it per thread and
// tick (through the descriptors it holds), and what the backend's per-thread resources cost the
// counted threads at every context switch: two threads on one CPU pass a byte back and forth
// through pipes, without and with the backend attached to both (side by side, alternating,
// medians).
//   counter_bench [reads] [round trips]
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "counters/papi_backend.hpp"
#include "counters/perf_backend.hpp"
#include "counters/proc_backends.hpp"

using namespace hpcprof::agent::counters;

namespace {

using Clock = std::chrono::steady_clock;

double nsSince(Clock::time_point t0, int n) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
}

double nsPerBoundaryRead(Backend& b, int n) {
    uint64_t values[kMaxCounters];
    int tid = int(gettid());
    b.readUnattached(tid, true, false, values); // warm up
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) b.readUnattached(tid, true, false, values);
    return nsSince(t0, n);
}

double nsPerSamplerRead(Backend& b, ThreadSlot& slot, int n) {
    uint64_t values[kMaxCounters];
    b.read(slot, values);
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) b.read(slot, values);
    return nsSince(t0, n);
}

// Two threads pinned to CPU 0 pass a byte back and forth: every round trip is two context
// switches. With `b`, each thread is attached first (as the sampler attaches every thread).
struct PingPong {
    Backend* backend = nullptr;
    int toPeer[2] = {-1, -1}, toMain[2] = {-1, -1};
    int rounds = 0;

    static void pin() {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        sched_setaffinity(0, sizeof(one), &one);
    }
    static void* peer(void* arg) {
        auto* p = static_cast<PingPong*>(arg);
        pin();
        ThreadSlot slot;
        if (p->backend) p->backend->attach(slot, int(gettid()));
        char c;
        while (read(p->toPeer[0], &c, 1) == 1 && c != 'q')
            if (write(p->toMain[1], &c, 1) != 1) break;
        if (p->backend) p->backend->detach(slot);
        return nullptr;
    }
    // ns per round trip
    double run() {
        if (pipe(toPeer) != 0 || pipe(toMain) != 0) return -1;
        cpu_set_t old;
        sched_getaffinity(0, sizeof(old), &old);
        pin();
        ThreadSlot slot;
        if (backend) backend->attach(slot, int(gettid()));
        pthread_t t;
        pthread_create(&t, nullptr, peer, this);
        char c = 'x';
        for (int i = 0; i < 1000; ++i) // warm up
            if (write(toPeer[1], &c, 1) != 1 || read(toMain[0], &c, 1) != 1) return -1;
        auto t0 = Clock::now();
        for (int i = 0; i < rounds; ++i)
            if (write(toPeer[1], &c, 1) != 1 || read(toMain[0], &c, 1) != 1) return -1;
        double ns = nsSince(t0, rounds);
        c = 'q';
        if (write(toPeer[1], &c, 1) != 1) return -1;
        pthread_join(t, nullptr);
        if (backend) backend->detach(slot);
        for (int fd : {toPeer[0], toPeer[1], toMain[0], toMain[1]}) close(fd);
        sched_setaffinity(0, sizeof(old), &old);
        return ns;
    }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

void bench(Backend& b, const char* const* counters, int count, int reads, int rounds) {
    int added = 0;
    for (int i = 0; i < count; ++i) {
        Offer o = b.offer(counters[i]);
        if (o.ok && !o.processWide) b.add(o, uint8_t(added++));
        else if (!o.ok) std::printf("  %-9s %-30s unavailable: %s\n", b.name(), counters[i], o.reason);
    }
    if (added == 0) return;
    ThreadSlot slot;
    b.attach(slot, int(gettid()));
    slot.tid = int(gettid());
    double boundary = nsPerBoundaryRead(b, reads), sampler = nsPerSamplerRead(b, slot, reads);
    b.detach(slot);
    std::vector<double> without, with;
    for (int rep = 0; rep < 5; ++rep) {
        PingPong plain{nullptr, {-1, -1}, {-1, -1}, rounds}, counted{&b, {-1, -1}, {-1, -1}, rounds};
        without.push_back(plain.run());
        with.push_back(counted.run());
    }
    double a = median(without), c = median(with);
    std::printf("%-9s %d counters: %6.0f ns per boundary read, %6.0f ns per sampler read; "
                "context-switch round trip %6.0f -> %6.0f ns (%+.0f ns per switch)\n",
                b.name(), added, boundary, sampler, a, c, (c - a) / 2);
}

} // namespace

int main(int argc, char** argv) {
    int reads = argc > 1 ? std::atoi(argv[1]) : 20000;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 50000;
    const char* perfCounters[] = {"task_clock", "context_switches", "cpu_migrations", "page_faults"};
    const char* rusageCounters[] = {"voluntary_context_switches", "involuntary_context_switches", "page_faults"};
    const char* schedCounters[] = {"task_clock", "cpu_wait"};
    const char* papiCounters[] = {"PAPI_TOT_INS", "PAPI_TOT_CYC", "perf::TASK-CLOCK"};
    std::printf("counter_bench: %d reads, %d round trips, 5 alternating runs (medians)\n", reads, rounds);
    SchedstatBackend sched;
    RusageBackend rusage;
    PerfBackend perf;
    bench(sched, schedCounters, 2, reads, rounds);
    bench(rusage, rusageCounters, 3, reads, rounds);
    bench(perf, perfCounters, 4, reads, rounds);
    char why[kReasonSize] = {};
    if (auto papi = makePapiBackend(why))
        bench(*papi, papiCounters, 3, reads, rounds);
    else
        std::printf("papi      unavailable: %s\n", why);
    return 0;
}
