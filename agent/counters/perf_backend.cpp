// SPDX-License-Identifier: MIT
#include "perf_backend.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/syscalls.hpp"

namespace hpcprof::agent::counters {

namespace raw = schema::raw;
namespace sys = agent::sys;

namespace {

struct Known {
    const char* name;
    int config;
    bool kernelSide; // fires in kernel context: reads 0 with exclude_kernel
    raw::CounterUnit unit;
};
constexpr Known kKnown[] = {
    {"task_clock", PERF_COUNT_SW_TASK_CLOCK, false, raw::CounterUnit::Ns},
    {"context_switches", PERF_COUNT_SW_CONTEXT_SWITCHES, true, raw::CounterUnit::Count},
    {"cpu_migrations", PERF_COUNT_SW_CPU_MIGRATIONS, true, raw::CounterUnit::Count},
    {"page_faults", PERF_COUNT_SW_PAGE_FAULTS, true, raw::CounterUnit::Count},
};

int openEvent(int config, int tid, int groupFd, bool excludeKernel) {
    perf_event_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = uint64_t(config);
    a.read_format = PERF_FORMAT_GROUP;
    a.exclude_kernel = excludeKernel ? 1 : 0;
    a.exclude_hv = 1;
    return int(syscall(SYS_perf_event_open, &a, tid, -1, groupFd, PERF_FLAG_FD_CLOEXEC));
}

int paranoidLevel() {
    int fd = sys::open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -100;
    char buf[16] = {};
    ssize_t n = sys::read(fd, buf, sizeof(buf) - 1);
    sys::close(fd);
    return n > 0 ? atoi(buf) : -100;
}

} // namespace

bool PerfBackend::probe(int config, bool excludeKernel, int& err) {
    int fd = openEvent(config, 0, -1, excludeKernel);
    if (fd < 0) {
        err = errno;
        return false;
    }
    sys::close(fd);
    return true;
}

Offer PerfBackend::offer(const char* counter) {
    Offer o;
    const Known* k = nullptr;
    for (const auto& x : kKnown)
        if (std::strcmp(x.name, counter) == 0) k = &x;
    if (!k) return o;
    if (m_count >= kMaxPerfEvents) {
        setReason(o.reason, "perf_sw: too many events");
        return o;
    }
    int err = 0;
    bool ok = probe(k->config, m_excludeKernel, err);
    if (!ok && (err == EACCES || err == EPERM) && !m_excludeKernel) {
        // Unprivileged with perf_event_paranoid >= 2: only user space may be counted.
        if (probe(k->config, true, err)) {
            m_excludeKernel = true;
            ok = true;
        }
    }
    if (!ok) {
        setReason(o.reason, "perf_event_open: ");
        appendReason(o.reason, std::strerror(err));
        appendReason(o.reason, " (perf_event_paranoid=");
        appendNumber(o.reason, paranoidLevel());
        appendReason(o.reason, ")");
        return o;
    }
    if (m_excludeKernel && k->kernelSide) {
        setReason(o.reason, "perf_event_paranoid=");
        appendNumber(o.reason, paranoidLevel());
        appendReason(o.reason, ": only user space may be counted without CAP_PERFMON, and this "
                               "event fires in the kernel (it would always read 0)");
        return o;
    }
    o.ok = true;
    o.code = k->config;
    o.unit = k->unit;
    return o;
}

void PerfBackend::attach(ThreadSlot& t, int tid) {
    t.perfCount = 0;
    int leader = -1;
    for (int i = 0; i < m_count; ++i) {
        int fd = openEvent(m_codes[i], tid, leader, m_excludeKernel);
        t.perfFds[i] = fd;
        if (fd < 0) break; // a broken group is read as missing values
        if (leader < 0) leader = fd;
        ++t.perfCount;
    }
}

void PerfBackend::detach(ThreadSlot& t) {
    for (int i = 0; i < t.perfCount; ++i) sys::close(t.perfFds[i]);
    t.perfCount = 0;
}

void PerfBackend::read(ThreadSlot& t, uint64_t* values) {
    for (int i = 0; i < m_count; ++i) values[m_slots[i]] = raw::kCounterMissing;
    if (t.perfCount == 0) return;
    // PERF_FORMAT_GROUP: { nr, value[nr] } for the whole group in one system call.
    uint64_t buf[1 + kMaxPerfEvents];
    ssize_t n = sys::read(t.perfFds[0], buf, sizeof(buf));
    if (n < ssize_t(sizeof(uint64_t))) return;
    uint64_t nr = buf[0];
    for (int i = 0; i < m_count && uint64_t(i) < nr && i < t.perfCount; ++i)
        values[m_slots[i]] = buf[1 + i];
}

} // namespace hpcprof::agent::counters
