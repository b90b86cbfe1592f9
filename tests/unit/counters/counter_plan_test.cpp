// SPDX-License-Identifier: MIT
// The counters source in the agent: plan building with fallbacks and reasons (fake backends),
// the /proc parsers, and the real software backends on this machine.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#if HPCPROF_TEST_COUNTER_SDE
#include <sde_lib.h>
#endif

#include "counters/boundary.hpp"
#include "counters/counter_plan.hpp"
#include "counters/papi_backend.hpp"
#include "counters/perf_backend.hpp"
#include "counters/proc_backends.hpp"
#include "counters/sampler.hpp"

using namespace hpcprof::agent::counters;
namespace raw = hpcprof::schema::raw;

namespace {

/// A backend that counts the names it is given and refuses others with a fixed reason.
class FakeBackend final : public Backend {
public:
    FakeBackend(raw::CounterSource src, std::string knows, std::string refuses)
        : m_src(src), m_knows(std::move(knows)), m_refuses(std::move(refuses)) {}
    const char* name() const override { return m_src == raw::CounterSource::PerfSw ? "perf_sw" : "rusage"; }
    raw::CounterSource source() const override { return m_src; }
    Offer offer(const char* counter) override {
        Offer o;
        std::string c = "," + std::string(counter) + ",";
        if (("," + m_knows + ",").find(c) != std::string::npos) {
            o.ok = true;
            o.code = 7;
        } else if (("," + m_refuses + ",").find(c) != std::string::npos) {
            setReason(o.reason, "no permission");
        }
        return o;
    }
    void add(const Offer&, uint8_t slot) override { slots += std::to_string(slot) + ","; }
    bool used() const override { return !slots.empty(); }
    void attach(ThreadSlot&, int) override {}
    void detach(ThreadSlot&) override {}
    void read(ThreadSlot&, uint64_t*) override {}
    std::string slots;

private:
    raw::CounterSource m_src;
    std::string m_knows, m_refuses;
};

const PlannedCounter* find(const CounterPlan& p, const char* name) {
    for (int i = 0; i < p.count; ++i)
        if (std::strcmp(p.counters[i].name, name) == 0) return &p.counters[i];
    return nullptr;
}

void spinMs(int ms) {
    timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        x = x + 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

} // namespace

TEST_CASE("the counter plan takes the first backend that can count, and keeps why others could not",
          "[counters][plan]") {
    FakeBackend perf(raw::CounterSource::PerfSw, "task_clock", "context_switches");
    FakeBackend rusage(raw::CounterSource::Rusage, "task_clock,context_switches,voluntary_context_switches", "");
    Backend* order[] = {nullptr, &perf, &rusage};
    CounterPlan plan;
    buildPlan("task_clock,context_switches,PAPI_TOT_INS,bogus,voluntary_context_switches", order, 3,
              "built without PAPI", plan);
    REQUIRE(plan.count == 5);
    CHECK(plan.slots == 3);

    const PlannedCounter* tc = find(plan, "task_clock");
    REQUIRE(tc);
    CHECK(tc->source == raw::CounterSource::PerfSw);
    CHECK(tc->slot == 0);
    CHECK(tc->flags == 0);

    const PlannedCounter* cs = find(plan, "context_switches"); // perf refused, rusage counts it
    REQUIRE(cs);
    CHECK(cs->source == raw::CounterSource::Rusage);
    CHECK(cs->slot == 1);
    CHECK(cs->flags == raw::kCounterFallback);
    CHECK(std::string(cs->reason) == "perf_sw: no permission");

    const PlannedCounter* papi = find(plan, "PAPI_TOT_INS");
    REQUIRE(papi);
    CHECK(papi->slot == raw::kNoCounterSlot);
    CHECK(std::string(papi->reason) == "built without PAPI");

    const PlannedCounter* bogus = find(plan, "bogus");
    REQUIRE(bogus);
    CHECK(bogus->source == raw::CounterSource::None);
    CHECK(std::string(bogus->reason) == "unknown counter name");
    CHECK(perf.slots == "0,");
    CHECK(rusage.slots == "1,2,");
}

TEST_CASE("an alternative list uses the first name that can be counted", "[counters][plan]") {
    FakeBackend perf(raw::CounterSource::PerfSw, "b", "a");
    Backend* order[] = {&perf};
    CounterPlan plan;
    buildPlan("a|b,none,c|a", order, 1, "", plan);
    REQUIRE(plan.count == 2);
    CHECK(std::string(plan.counters[0].name) == "b");
    CHECK(plan.counters[0].slot == 0);
    CHECK(std::string(plan.counters[1].name) == "c");
    CHECK(plan.counters[1].slot == raw::kNoCounterSlot);
    CHECK(std::string(plan.counters[1].reason) == "unknown counter name; a: perf_sw: no permission");
    // Alternatives that fail alike are reported once ("d|e", both unknown).
    CounterPlan same;
    buildPlan("d|e", order, 1, "", same);
    REQUIRE(same.count == 1);
    CHECK(std::string(same.counters[0].name) == "d");
    CHECK(std::string(same.counters[0].reason) == "unknown counter name");
}

TEST_CASE("counter lists: default asks for PAPI, software does not, boundaries parse", "[counters][plan]") {
    CHECK(wantsPapi("default"));
    CHECK_FALSE(wantsPapi("software"));
    CHECK(wantsPapi("task_clock,sde:::HPCTEST::ops"));
    CHECK_FALSE(wantsPapi("none"));
    CHECK(isPapiEventName("perf::TASK-CLOCK"));
    CHECK_FALSE(isPapiEventName("task_clock"));
    CHECK(parseBoundaries("mpi,io") == (kCounterBoundaryMpi | kCounterBoundaryIo));
    CHECK(parseBoundaries("") == 0);
    CHECK(parseBoundaries("io") == kCounterBoundaryIo);
    CHECK(parseBoundaries("nccl,nvtx") == (kCounterBoundaryNccl | kCounterBoundaryNvtx));
    CHECK(parseBoundaries("all") == (kCounterBoundaryMpi | kCounterBoundaryIo | kCounterBoundaryNccl | kCounterBoundaryNvtx));
    CHECK(SamplerOptions{}.boundaries == (kCounterBoundaryMpi | kCounterBoundaryNccl));
}

namespace {
/// A PAPI stand-in: counts every PAPI_* name.
class FakePapi final : public Backend {
public:
    const char* name() const override { return "papi"; }
    raw::CounterSource source() const override { return raw::CounterSource::Papi; }
    Offer offer(const char* counter) override {
        Offer o;
        o.ok = std::strncmp(counter, "PAPI_", 5) == 0;
        return o;
    }
    void add(const Offer&, uint8_t) override { ++added; }
    bool used() const override { return added > 0; }
    void attach(ThreadSlot&, int) override {}
    void detach(ThreadSlot&) override {}
    void read(ThreadSlot&, uint64_t*) override {}
    int added = 0;
};

const char* fakeEnv(const char* name) {
    if (std::strcmp(name, "OMPI_COMM_WORLD_LOCAL_SIZE") == 0) return "8";
    if (std::strcmp(name, "LOCAL_WORLD_SIZE") == 0) return "3";
    return nullptr;
}
const char* slurmEnv(const char* name) {
    if (std::strcmp(name, "SLURM_NTASKS_PER_NODE") == 0) return "2(x3)"; // not one number: unknown
    return nullptr;
}
} // namespace

TEST_CASE("on a host with more ranks than CPUs the default list leaves hardware counters out",
          "[counters][plan]") {
    char reason[kReasonSize] = {};
    CHECK_FALSE(refusesGroupHardwareCounters(0, 2, reason)); // not a rank
    CHECK_FALSE(refusesGroupHardwareCounters(2, 2, reason));
    REQUIRE(refusesGroupHardwareCounters(8, 2, reason));
    CHECK(std::string(reason).find("(8 ranks, 2 CPUs)") != std::string::npos);

    FakePapi papi;
    FakeBackend rusage(raw::CounterSource::Rusage, "task_clock,context_switches", "");
    Backend* order[] = {&papi, &rusage};
    CounterPlan plan;
    buildPlan("default,PAPI_BR_MSP", order, 2, "", plan, reason);
    // Refused by the rule, with its reason, without asking PAPI.
    for (const char* name : {"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_L3_TCM"}) {
        INFO(name);
        const PlannedCounter* c = find(plan, name);
        REQUIRE(c);
        CHECK(c->slot == raw::kNoCounterSlot);
        CHECK(std::string(c->reason) == reason);
    }
    // Named as well as brought by the group: counted, once.
    const PlannedCounter* br = find(plan, "PAPI_BR_MSP");
    REQUIRE(br);
    CHECK(br->source == raw::CounterSource::Papi);
    CHECK(papi.added == 1);
    int brEntries = 0;
    for (int i = 0; i < plan.count; ++i) brEntries += std::strcmp(plan.counters[i].name, "PAPI_BR_MSP") == 0;
    CHECK(brEntries == 1);
    CHECK_FALSE(wantsPapi("default", true));
    CHECK(wantsPapi("default,PAPI_TOT_INS", true));
    // Named on their own they are counted: the user asked.
    CounterPlan named;
    buildPlan("PAPI_TOT_INS,software", order, 2, "", named, reason);
    REQUIRE(find(named, "PAPI_TOT_INS"));
    CHECK(find(named, "PAPI_TOT_INS")->source == raw::CounterSource::Papi);
    CHECK(papi.added == 2);
    // Without the rule the default asks PAPI.
    FakePapi papi2;
    Backend* order2[] = {&papi2, &rusage};
    CounterPlan fits;
    buildPlan("default", order2, 2, "", fits);
    CHECK(papi2.added == 4);
}

TEST_CASE("the ranks per host come from the launcher's environment", "[counters][plan]") {
    CHECK(localRanksFromEnvironment(fakeEnv) == 8); // Open MPI's first
    ::setenv("HPCPROF_COUNTER_PERIOD_MS", "20", 1);
    SamplerOptions o = optionsFromEnvironment();
    ::unsetenv("HPCPROF_COUNTER_PERIOD_MS");
    CHECK(o.periodNs == 20'000'000);
    CHECK(o.periodGiven);
    CHECK_FALSE(optionsFromEnvironment().periodGiven);
    ::setenv("HPCPROF_COUNTER_PERIOD_MS", "-5", 1); // invalid: the default, not "given"
    CHECK_FALSE(optionsFromEnvironment().periodGiven);
    ::unsetenv("HPCPROF_COUNTER_PERIOD_MS");
    // A given period is kept; the default one, and the default boundary gap, stretch with
    // ranks per CPU (rounded up).
    SamplerOptions given = o;
    given.localRanks = localRanksFromEnvironment(fakeEnv);
    stretchForOversubscription(given, 2);
    CHECK(given.periodNs == 20'000'000);
    CHECK(given.minGapNs == 4'000'000);
    auto stretched = [](int ranks, int cpus) {
        SamplerOptions d;
        d.localRanks = ranks;
        stretchForOversubscription(d, cpus);
        return std::pair<uint64_t, uint64_t>{d.periodNs / 1'000'000, d.minGapNs / 1'000};
    };
    CHECK(stretched(8, 2) == std::pair<uint64_t, uint64_t>{40, 4000});
    CHECK(stretched(8, 3) == std::pair<uint64_t, uint64_t>{30, 3000});
    CHECK(stretched(8, 8) == std::pair<uint64_t, uint64_t>{10, 1000});
    CHECK(stretched(8, 16) == std::pair<uint64_t, uint64_t>{10, 1000});
    CHECK(stretched(0, 2) == std::pair<uint64_t, uint64_t>{10, 1000});
    CHECK(localRanksFromEnvironment(slurmEnv) == 0);
    CHECK(localRanksFromEnvironment([](const char*) -> const char* { return nullptr; }) == 0);
}

TEST_CASE("the /proc parsers find context switches and stat fields", "[counters][proc]") {
    const char* status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t345\n";
    uint64_t v = 0;
    REQUIRE(findNumberAfter(status, "voluntary_ctxt_switches:", v));
    CHECK(v == 12);
    REQUIRE(findNumberAfter(status, "nonvoluntary_ctxt_switches:", v));
    CHECK(v == 345);
    CHECK_FALSE(findNumberAfter(status, "missing:", v));
    // Field 2 is "(comm)" and may contain spaces and parentheses.
    const char* stat = "42 (a b) c) S 1 42 42 0 -1 4194560 77 0 5 0 13 9 0 0 20 0 1";
    REQUIRE(statField(stat, 10, v));
    CHECK(v == 77);
    REQUIRE(statField(stat, 12, v));
    CHECK(v == 5);
    REQUIRE(statField(stat, 14, v));
    CHECK(v == 13);
    REQUIRE(statField(stat, 15, v));
    CHECK(v == 9);
}

TEST_CASE("getrusage and /proc give the same voluntary context switches for a thread", "[counters][backends]") {
    RusageBackend rusage;
    Offer o = rusage.offer("voluntary_context_switches");
    REQUIRE(o.ok);
    rusage.add(o, 0);
    ThreadSlot slot;
    rusage.attach(slot, int(gettid()));
    CHECK(slot.statusFd >= 0);
    CHECK(slot.statFd < 0); // only the file the counter needs
    uint64_t before[kMaxCounters], self[kMaxCounters], other[kMaxCounters];
    rusage.readUnattached(int(gettid()), true, false, before);
    for (int i = 0; i < 20; ++i) usleep(200); // each sleep blocks: one voluntary switch at least
    rusage.readUnattached(int(gettid()), true, false, self);
    rusage.read(slot, other);
    rusage.detach(slot);
    CHECK(self[0] - before[0] >= 20);
    CHECK(other[0] == self[0]);
    // Another thread's getrusage cannot be had without its /proc files: left as it was.
    uint64_t untouched[kMaxCounters] = {raw::kCounterMissing};
    rusage.readUnattached(int(gettid()), false, false, untouched);
    CHECK(untouched[0] == raw::kCounterMissing);
}

namespace {
std::atomic<int> g_spinnerTid{0};
std::atomic<bool> g_spinnerStop{false};
void* spinner(void*) {
    g_spinnerTid = int(gettid());
    while (!g_spinnerStop) spinMs(1);
    return nullptr;
}
} // namespace

TEST_CASE("task_clock is any thread's CPU clock, read without a descriptor", "[counters][backends]") {
    SchedstatBackend sched;
    Offer o = sched.offer("task_clock");
    REQUIRE(o.ok);
    sched.add(o, 0);
    auto cpuNs = [](clockid_t id) {
        timespec t;
        clock_gettime(id, &t);
        return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
    };
    // Our own: between two readings of the thread's CPU clock taken around it.
    uint64_t a[kMaxCounters], b[kMaxCounters];
    uint64_t before = cpuNs(CLOCK_THREAD_CPUTIME_ID);
    sched.readUnattached(int(gettid()), true, false, a);
    spinMs(20);
    sched.readUnattached(int(gettid()), true, false, b);
    uint64_t after = cpuNs(CLOCK_THREAD_CPUTIME_ID);
    CHECK(before <= a[0]);
    CHECK(a[0] < b[0]);
    CHECK(b[0] <= after);
    // Another thread of the process: its clock, not ours, and it moves while it spins.
    pthread_t t;
    g_spinnerStop = false;
    REQUIRE(pthread_create(&t, nullptr, spinner, nullptr) == 0);
    while (g_spinnerTid == 0) usleep(100);
    clockid_t theirs;
    REQUIRE(pthread_getcpuclockid(t, &theirs) == 0);
    before = cpuNs(theirs);
    sched.readUnattached(g_spinnerTid, false, false, a);
    for (int i = 0; i < 200 && cpuNs(theirs) < before + 2'000'000; ++i) usleep(10'000); // a loaded machine
    sched.readUnattached(g_spinnerTid, false, false, b);
    after = cpuNs(theirs);
    g_spinnerStop = true;
    pthread_join(t, nullptr);
    CHECK(before <= a[0]);
    CHECK(a[0] < b[0]);
    CHECK(b[0] <= after);
    uint64_t gone = 0;
    CHECK_FALSE(threadCpuNs(g_spinnerTid, false, gone)); // ended: no clock, and no guess
    g_spinnerTid = 0;
}

TEST_CASE("cpu_wait comes from schedstat through the sampler's descriptor, or a file opened in the call",
          "[counters][backends]") {
    SchedstatBackend sched;
    Offer o = sched.offer("cpu_wait");
    if (!o.ok) {
        WARN("SKIPPED: no schedstat here: " << o.reason);
        return;
    }
    sched.add(o, 1);
    ThreadSlot slot;
    slot.tid = int(gettid());
    sched.attach(slot, int(gettid()));
    REQUIRE(slot.schedFd >= 0);
    uint64_t held[kMaxCounters], opened[kMaxCounters], none[kMaxCounters];
    for (auto* v : {held, opened, none}) v[1] = raw::kCounterMissing;
    sched.read(slot, held);
    sched.readUnattached(int(gettid()), true, true, opened);
    sched.readUnattached(int(gettid()), true, false, none);
    sched.detach(slot);
    CHECK(slot.schedFd == -1);
    CHECK(held[1] != raw::kCounterMissing);
    CHECK(opened[1] >= held[1]);
    CHECK(none[1] == raw::kCounterMissing); // a multi-threaded process: no descriptor, no value
}

TEST_CASE("perf_event task clock counts a spinning thread, and not a sleeping one", "[counters][backends]") {
    PerfBackend perf;
    Offer o = perf.offer("task_clock");
    if (!o.ok) {
        WARN("SKIPPED: perf_event_open refused here: " << o.reason);
        return;
    }
    CHECK(o.unit == raw::CounterUnit::Ns);
    perf.add(o, 0);
    ThreadSlot slot;
    perf.attach(slot, int(gettid()));
    REQUIRE(slot.perfCount == 1);
    uint64_t a[kMaxCounters], b[kMaxCounters], c[kMaxCounters];
    perf.read(slot, a);
    usleep(50'000);
    perf.read(slot, b);
    spinMs(50);
    perf.read(slot, c);
    uint64_t untouched[kMaxCounters] = {raw::kCounterMissing};
    perf.readUnattached(int(gettid()), true, true, untouched); // needs its descriptors
    perf.detach(slot);
    CHECK(b[0] - a[0] < 5'000'000);
    CHECK(c[0] - b[0] >= 1'000'000);
    CHECK(c[0] - b[0] <= 60'000'000);
    CHECK(untouched[0] == raw::kCounterMissing);
}

TEST_CASE("unknown names are not offered by the real backends", "[counters][backends]") {
    PerfBackend perf;
    RusageBackend rusage;
    SchedstatBackend sched;
    CHECK_FALSE(perf.offer("bogus").ok);
    CHECK(std::string(perf.offer("bogus").reason).empty());
    CHECK_FALSE(rusage.offer("bogus").ok);
    CHECK_FALSE(sched.offer("bogus").ok);
    CHECK(rusage.offer("involuntary_context_switches").ok);
}

TEST_CASE("PAPI counts this program's software-defined event exactly", "[counters][backends][papi]") {
#if HPCPROF_TEST_COUNTER_SDE
    char why[kReasonSize] = {};
    auto papi = makePapiBackend(why);
    if (!papi) {
        WARN("SKIPPED: PAPI could not be loaded: " << why);
        return;
    }
    // Asked before the library registers its counter (as the agent does at start-up).
    Offer o = papi->offer("sde:::HPCTEST_UNIT::ops");
    REQUIRE(o.ok);
    CHECK(o.processWide);
    papi->add(o, 3);
    Offer missing = papi->offer("PAPI_NOT_AN_EVENT");
    CHECK_FALSE(missing.ok);
    CHECK(std::string(missing.reason).rfind("PAPI: ", 0) == 0);
    static long long ops = 0;
    papi_handle_t h = papi_sde_init("HPCTEST_UNIT");
    papi_sde_register_counter(h, "ops", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &ops);
    for (int i = 0; i < 1000; ++i) ops++;
    uint64_t values[kMaxCounters];
    for (auto& v : values) v = raw::kCounterMissing;
    REQUIRE(papi->readProcess(values));
    CHECK(values[3] == 1000);
    CHECK(values[0] == raw::kCounterMissing);
#else
    WARN("SKIPPED: built without PAPI/libsde");
#endif
}
