// SPDX-License-Identifier: MIT
#include "proc_backends.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/syscalls.hpp"
#include "runtime/text_append.hpp"

namespace hpcprof::agent::counters {

namespace raw = schema::raw;
namespace sys = agent::sys;

namespace {

enum RusageCode {
    kUserTime,
    kSystemTime,
    kTaskClock,
    kVoluntary,
    kInvoluntary,
    kContextSwitches,
    kMinorFaults,
    kMajorFaults,
    kPageFaults,
};

struct Known {
    const char* name;
    int code;
    raw::CounterUnit unit;
};
constexpr Known kRusage[] = {
    {"user_time", kUserTime, raw::CounterUnit::Ns},
    {"system_time", kSystemTime, raw::CounterUnit::Ns},
    {"task_clock", kTaskClock, raw::CounterUnit::Ns},
    {"voluntary_context_switches", kVoluntary, raw::CounterUnit::Count},
    {"involuntary_context_switches", kInvoluntary, raw::CounterUnit::Count},
    {"context_switches", kContextSwitches, raw::CounterUnit::Count},
    {"minor_faults", kMinorFaults, raw::CounterUnit::Count},
    {"major_faults", kMajorFaults, raw::CounterUnit::Count},
    {"page_faults", kPageFaults, raw::CounterUnit::Count},
};

// Builds "/proc/self/task/<tid>/<leaf>".
void taskPath(char* out, int tid, const char* leaf) {
    std::strcpy(out, "/proc/self/task/");
    char num[16];
    int n = 0;
    unsigned v = unsigned(tid);
    do {
        num[n++] = char('0' + v % 10);
        v /= 10;
    } while (v);
    char* p = out + std::strlen(out);
    while (n) *p++ = num[--n];
    *p++ = '/';
    std::strcpy(p, leaf);
}

int openTaskFile(int tid, const char* leaf) {
    char path[64];
    taskPath(path, tid, leaf);
    return sys::open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t readAll(int fd, char* buf, size_t cap) {
    if (fd < 0) return -1;
    // Raw system calls: the agent's own reads must not show up as the program's I/O.
    ssize_t n = ::syscall(SYS_pread64, fd, buf, cap - 1, 0);
    if (n < 0) return n;
    buf[n] = 0;
    return n;
}

bool parseNumber(const char* p, uint64_t& out) {
    while (*p == ' ' || *p == '\t') ++p;
    if (*p < '0' || *p > '9') return false;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + uint64_t(*p++ - '0');
    out = v;
    return true;
}

uint64_t tvNs(const timeval& tv) { return uint64_t(tv.tv_sec) * 1'000'000'000ull + uint64_t(tv.tv_usec) * 1000ull; }

} // namespace

bool findNumberAfter(const char* text, const char* key, uint64_t& out) {
    const char* p = std::strstr(text, key);
    // "voluntary_ctxt_switches" is also the tail of "nonvoluntary_ctxt_switches": need line start.
    while (p && p != text && p[-1] != '\n') p = std::strstr(p + 1, key);
    if (!p) return false;
    return parseNumber(p + std::strlen(key), out);
}

bool statField(const char* text, int field, uint64_t& out) {
    const char* p = std::strrchr(text, ')');
    if (!p) return false;
    ++p; // fields after the command name start at field 3 (state)
    int f = 2;
    while (*p) {
        while (*p == ' ') ++p;
        ++f;
        if (f == field) return parseNumber(p, out);
        while (*p && *p != ' ') ++p;
    }
    return false;
}

Offer RusageBackend::offer(const char* counter) {
    Offer o;
    for (const auto& k : kRusage)
        if (std::strcmp(k.name, counter) == 0) {
            o.ok = true;
            o.code = k.code;
            o.unit = k.unit;
        }
    return o;
}

void RusageBackend::add(const Offer& offer, uint8_t slot) {
    CounterListBackend::add(offer, slot);
    bool switches = offer.code == kVoluntary || offer.code == kInvoluntary || offer.code == kContextSwitches;
    m_needsStatus |= switches;
    m_needsStat |= !switches;
}

void RusageBackend::attach(ThreadSlot& t, int tid) {
    t.statFd = m_needsStat ? openTaskFile(tid, "stat") : -1;
    t.statusFd = m_needsStatus ? openTaskFile(tid, "status") : -1;
}

void RusageBackend::detach(ThreadSlot& t) {
    if (t.statFd >= 0) sys::close(t.statFd);
    if (t.statusFd >= 0) sys::close(t.statusFd);
    t.statFd = t.statusFd = -1;
}

namespace {

// The rusage values, and which of them were read.
struct RusageValues {
    uint64_t v[9] = {};
    bool ok[9] = {};
    // The sums the backend offers besides the kernel's own fields.
    void derive() {
        v[kTaskClock] = v[kUserTime] + v[kSystemTime];
        ok[kTaskClock] = ok[kUserTime] && ok[kSystemTime];
        v[kContextSwitches] = v[kVoluntary] + v[kInvoluntary];
        ok[kContextSwitches] = ok[kVoluntary] && ok[kInvoluntary];
        v[kPageFaults] = v[kMinorFaults] + v[kMajorFaults];
        ok[kPageFaults] = ok[kMinorFaults] && ok[kMajorFaults];
    }
};

bool ownRusage(RusageValues& r) {
    rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) return false;
    r.v[kUserTime] = tvNs(ru.ru_utime);
    r.v[kSystemTime] = tvNs(ru.ru_stime);
    r.v[kVoluntary] = uint64_t(ru.ru_nvcsw);
    r.v[kInvoluntary] = uint64_t(ru.ru_nivcsw);
    r.v[kMinorFaults] = uint64_t(ru.ru_minflt);
    r.v[kMajorFaults] = uint64_t(ru.ru_majflt);
    for (bool& b : r.ok) b = true;
    return true;
}

} // namespace

void RusageBackend::read(ThreadSlot& t, uint64_t* values) {
    // Another thread's counters: the same kernel fields from its /proc files.
    RusageValues r;
    char buf[2048];
    static const long kTickNs = 1'000'000'000L / sysconf(_SC_CLK_TCK);
    if (readAll(t.statFd, buf, sizeof(buf)) > 0) {
        uint64_t ut, st;
        r.ok[kMinorFaults] = statField(buf, 10, r.v[kMinorFaults]);
        r.ok[kMajorFaults] = statField(buf, 12, r.v[kMajorFaults]);
        if (statField(buf, 14, ut) && statField(buf, 15, st)) {
            r.v[kUserTime] = ut * uint64_t(kTickNs);
            r.v[kSystemTime] = st * uint64_t(kTickNs);
            r.ok[kUserTime] = r.ok[kSystemTime] = true;
        }
    }
    if (readAll(t.statusFd, buf, sizeof(buf)) > 0) {
        r.ok[kVoluntary] = findNumberAfter(buf, "voluntary_ctxt_switches:", r.v[kVoluntary]);
        r.ok[kInvoluntary] = findNumberAfter(buf, "nonvoluntary_ctxt_switches:", r.v[kInvoluntary]);
    }
    r.derive();
    for (int i = 0; i < m_count; ++i)
        values[m_slots[i]] = r.ok[m_codes[i]] ? r.v[m_codes[i]] : raw::kCounterMissing;
}

void RusageBackend::readUnattached(int, bool self, bool, uint64_t* values) {
    // getrusage(RUSAGE_THREAD) is the calling thread's only; another thread's needs /proc.
    RusageValues r;
    if (!self || !ownRusage(r)) return;
    r.derive();
    for (int i = 0; i < m_count; ++i)
        if (r.ok[m_codes[i]]) values[m_slots[i]] = r.v[m_codes[i]];
}

bool threadCpuNs(int tid, bool self, uint64_t& ns) {
    // Another thread's CPU clock: the id glibc's pthread_getcpuclockid builds from a thread id
    // (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)); the kernel answers it for threads of the
    // caller's own process.
    clockid_t id = self ? CLOCK_THREAD_CPUTIME_ID : clockid_t((~unsigned(tid) << 3) | 6u);
    timespec ts;
    if (clock_gettime(id, &ts) != 0) return false;
    ns = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
    return true;
}

namespace {

enum SchedCode { kOnCpu = 0, kRunQueueWait = 1 };

// "<on-cpu ns> <run-queue wait ns> <timeslices>": the second field.
bool parseWait(const char* text, uint64_t& waitNs) {
    uint64_t onCpu = 0;
    const char* p = text;
    if (!parseNumber(p, onCpu)) return false;
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;
    return parseNumber(p, waitNs);
}

} // namespace

Offer SchedstatBackend::offer(const char* counter) {
    Offer o;
    int code = std::strcmp(counter, "task_clock") == 0 ? kOnCpu
               : std::strcmp(counter, "cpu_wait") == 0 ? kRunQueueWait
                                                       : -1;
    if (code < 0) return o;
    if (code == kOnCpu) {
        uint64_t ns = 0;
        if (!threadCpuNs(0, true, ns)) {
            setReason(o.reason, "clock_gettime(CLOCK_THREAD_CPUTIME_ID): ");
            appendReason(o.reason, std::strerror(errno));
            return o;
        }
    } else {
        int fd = sys::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            setReason(o.reason, "/proc/thread-self/schedstat: ");
            appendReason(o.reason, std::strerror(errno));
            appendReason(o.reason, " (kernel without CONFIG_SCHED_INFO?)");
            return o;
        }
        sys::close(fd);
    }
    o.ok = true;
    o.code = code;
    o.unit = raw::CounterUnit::Ns;
    return o;
}

void SchedstatBackend::add(const Offer& offer, uint8_t slot) {
    CounterListBackend::add(offer, slot);
    m_wantsWait |= offer.code == kRunQueueWait;
}

void SchedstatBackend::attach(ThreadSlot& t, int tid) {
    t.schedFd = m_wantsWait ? openTaskFile(tid, "schedstat") : -1;
}

void SchedstatBackend::detach(ThreadSlot& t) {
    if (t.schedFd >= 0) sys::close(t.schedFd);
    t.schedFd = -1;
}

void SchedstatBackend::fill(uint64_t cpuNs, bool cpuOk, uint64_t waitNs, bool waitOk, uint64_t* values) const {
    for (int i = 0; i < m_count; ++i) {
        bool ok = m_codes[i] == kOnCpu ? cpuOk : waitOk;
        if (ok) values[m_slots[i]] = m_codes[i] == kOnCpu ? cpuNs : waitNs;
    }
}

void SchedstatBackend::read(ThreadSlot& t, uint64_t* values) {
    for (int i = 0; i < m_count; ++i) values[m_slots[i]] = raw::kCounterMissing;
    uint64_t cpu = 0, wait = 0;
    bool cpuOk = threadCpuNs(t.tid.load(std::memory_order_relaxed), false, cpu);
    char buf[96];
    bool waitOk = readAll(t.schedFd, buf, sizeof(buf)) > 0 && parseWait(buf, wait);
    fill(cpu, cpuOk, wait, waitOk, values);
}

void SchedstatBackend::readUnattached(int tid, bool self, bool mayOpenFiles, uint64_t* values) {
    uint64_t cpu = 0, wait = 0;
    bool cpuOk = threadCpuNs(tid, self, cpu);
    bool waitOk = false;
    if (m_wantsWait && self && mayOpenFiles) {
        // A single-threaded process: nothing of the program's can run while this descriptor
        // exists (it is closed before this call returns), and pread moves no offset.
        int fd = sys::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
        char buf[96];
        waitOk = fd >= 0 && readAll(fd, buf, sizeof(buf)) > 0 && parseWait(buf, wait);
        if (fd >= 0) sys::close(fd);
    }
    fill(cpu, cpuOk, wait, waitOk, values);
}

void setReason(char* reason, const char* text) {
    reason[0] = 0;
    appendReason(reason, text);
}

void appendReason(char* reason, const char* text) {
    size_t n = std::strlen(reason);
    while (*text && n + 1 < size_t(kReasonSize)) reason[n++] = *text++;
    reason[n] = 0;
}

void appendNumber(char* reason, long long v) {
    char out[24];
    agent::appendNumber(out, int64_t(v));
    appendReason(reason, out);
}

} // namespace hpcprof::agent::counters
