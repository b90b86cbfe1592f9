// SPDX-License-Identifier: MIT
#include "proc_backends.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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

void RusageBackend::attach(ThreadSlot& t, int tid) {
    t.statFd = openTaskFile(tid, "stat");
    t.statusFd = openTaskFile(tid, "status");
}

void RusageBackend::detach(ThreadSlot& t) {
    if (t.statFd >= 0) sys::close(t.statFd);
    if (t.statusFd >= 0) sys::close(t.statusFd);
    t.statFd = t.statusFd = -1;
}

void RusageBackend::read(ThreadSlot& t, bool self, uint64_t* values) {
    uint64_t v[9] = {};
    bool ok[9] = {};
    if (self) {
        rusage ru;
        if (getrusage(RUSAGE_THREAD, &ru) == 0) {
            v[kUserTime] = tvNs(ru.ru_utime);
            v[kSystemTime] = tvNs(ru.ru_stime);
            v[kVoluntary] = uint64_t(ru.ru_nvcsw);
            v[kInvoluntary] = uint64_t(ru.ru_nivcsw);
            v[kMinorFaults] = uint64_t(ru.ru_minflt);
            v[kMajorFaults] = uint64_t(ru.ru_majflt);
            for (bool& b : ok) b = true;
        }
    } else {
        char buf[2048];
        static const long kTickNs = 1'000'000'000L / sysconf(_SC_CLK_TCK);
        if (readAll(t.statFd, buf, sizeof(buf)) > 0) {
            uint64_t ut, st;
            ok[kMinorFaults] = statField(buf, 10, v[kMinorFaults]);
            ok[kMajorFaults] = statField(buf, 12, v[kMajorFaults]);
            if (statField(buf, 14, ut) && statField(buf, 15, st)) {
                v[kUserTime] = ut * uint64_t(kTickNs);
                v[kSystemTime] = st * uint64_t(kTickNs);
                ok[kUserTime] = ok[kSystemTime] = true;
            }
        }
        if (readAll(t.statusFd, buf, sizeof(buf)) > 0) {
            ok[kVoluntary] = findNumberAfter(buf, "voluntary_ctxt_switches:", v[kVoluntary]);
            ok[kInvoluntary] = findNumberAfter(buf, "nonvoluntary_ctxt_switches:", v[kInvoluntary]);
        }
    }
    v[kTaskClock] = v[kUserTime] + v[kSystemTime];
    ok[kTaskClock] = ok[kUserTime] && ok[kSystemTime];
    v[kContextSwitches] = v[kVoluntary] + v[kInvoluntary];
    ok[kContextSwitches] = ok[kVoluntary] && ok[kInvoluntary];
    v[kPageFaults] = v[kMinorFaults] + v[kMajorFaults];
    ok[kPageFaults] = ok[kMinorFaults] && ok[kMajorFaults];
    for (int i = 0; i < m_count; ++i)
        values[m_slots[i]] = ok[m_codes[i]] ? v[m_codes[i]] : raw::kCounterMissing;
}

Offer SchedstatBackend::offer(const char* counter) {
    Offer o;
    int code = std::strcmp(counter, "task_clock") == 0 ? 0 : std::strcmp(counter, "cpu_wait") == 0 ? 1 : -1;
    if (code < 0) return o;
    int fd = sys::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        setReason(o.reason, "/proc/thread-self/schedstat: ");
        appendReason(o.reason, std::strerror(errno));
        appendReason(o.reason, " (kernel without CONFIG_SCHED_INFO?)");
        return o;
    }
    sys::close(fd);
    o.ok = true;
    o.code = code;
    o.unit = raw::CounterUnit::Ns;
    return o;
}

void SchedstatBackend::attach(ThreadSlot& t, int tid) { t.schedFd = openTaskFile(tid, "schedstat"); }

void SchedstatBackend::detach(ThreadSlot& t) {
    if (t.schedFd >= 0) sys::close(t.schedFd);
    t.schedFd = -1;
}

bool readSchedRuntime(int schedFd, uint64_t& runtimeNs) {
    char buf[96];
    return schedFd >= 0 && readAll(schedFd, buf, sizeof(buf)) > 0 && parseNumber(buf, runtimeNs);
}

void SchedstatBackend::read(ThreadSlot& t, bool, uint64_t* values) {
    // "<on-cpu ns> <run-queue wait ns> <timeslices>"
    char buf[96];
    uint64_t v[2] = {};
    bool ok = false;
    if (readAll(t.schedFd, buf, sizeof(buf)) > 0) {
        const char* p = buf;
        ok = parseNumber(p, v[0]);
        while (*p && *p != ' ') ++p;
        ok = ok && parseNumber(p, v[1]);
    }
    for (int i = 0; i < m_count; ++i) values[m_slots[i]] = ok ? v[m_codes[i]] : raw::kCounterMissing;
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
