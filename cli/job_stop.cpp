// SPDX-License-Identifier: MIT
#include "job_stop.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;
namespace raw = schema::raw;

namespace {

volatile sig_atomic_t g_stopRequested = 0;

void requestStop(int) { g_stopRequested = 1; }

int64_t clockNs(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string hostName() {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    return host;
}

/// Boot-time ns when `pid` started (/proc/PID/stat field 22), -1 when it is gone or a zombie.
int64_t processStartNs(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t close = text.rfind(')');
    if (close == std::string::npos || close + 2 >= text.size()) return -1;
    std::istringstream fields(text.substr(close + 2));
    std::string state, f;
    fields >> state;
    if (state == "Z" || state == "X") return -1;
    for (int i = 4; i < 22 && fields >> f; ++i) {
    }
    long long ticks = 0;
    if (!(fields >> ticks)) return -1;
    return int64_t(ticks) * (1'000'000'000 / sysconf(_SC_CLK_TCK));
}

/// This host's processes of the job that have not reached an exit path and still run: each
/// process folder's header names its pid and start; a pid now used by another process (its
/// start differs by more than a second) is not the job's.
std::vector<pid_t> liveJobProcesses(const fs::path& rawDir) {
    std::vector<pid_t> pids;
    const std::string host = hostName();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(rawDir, ec)) {
        std::ifstream in(entry.path() / "process.bin", std::ios::binary);
        raw::ProcessHeader h{};
        if (!in.read(reinterpret_cast<char*>(&h), sizeof(h)) || h.magic != raw::kProcessMagic)
            continue;
        if (h.endState != raw::EndState::Running || host != std::string(h.host, strnlen(h.host, sizeof(h.host))))
            continue;
        // /proc's start time counts from boot, like CLOCK_BOOTTIME; the header's is monotonic.
        int64_t started = processStartNs(h.pid);
        int64_t expected = h.start.monotonicNs + (clockNs(CLOCK_BOOTTIME) - clockNs(CLOCK_MONOTONIC));
        if (started >= 0 && std::llabs(started - expected) < 1'000'000'000) pids.push_back(h.pid);
    }
    return pids;
}

/// Waits up to `ms` (-1: without limit) for `child`; true when it ended (status in `status`).
/// `stoppable`: SIGUSR1 ends the wait too.
bool waitFor(pid_t child, int64_t ms, bool stoppable, int& status) {
    const int64_t deadline = clockNs(CLOCK_MONOTONIC) + ms * 1'000'000;
    while (true) {
        pid_t r = waitpid(child, &status, WNOHANG);
        if (r == child || (r < 0 && errno != EINTR)) return true;
        if (ms >= 0 && clockNs(CLOCK_MONOTONIC) >= deadline) return false;
        if (stoppable && g_stopRequested) return false;
        usleep(20'000);
    }
}

void signalJob(pid_t child, const fs::path& rawDir, int sig) {
    ::kill(child, sig);
    for (pid_t p : liveJobProcesses(rawDir)) ::kill(p, sig);
}

} // namespace

std::optional<int64_t> parseDuration(const std::string& text) {
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (...) {
        return std::nullopt;
    }
    const std::string unit = text.substr(used);
    double ms = unit.empty() || unit == "s" ? value * 1000
                : unit == "ms"              ? value
                : unit == "m"               ? value * 60'000
                : unit == "h"               ? value * 3'600'000
                                            : -1;
    if (ms < 0 || value < 0) return std::nullopt;
    return int64_t(ms);
}

void installStopSignal() {
    struct sigaction sa{};
    sa.sa_handler = requestStop;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, nullptr);
}

int waitOrStop(pid_t child, int64_t timeoutMs, const fs::path& rawDir, int64_t& stoppedRealtimeNs) {
    int status = 0;
    stoppedRealtimeNs = 0;
    if (waitFor(child, timeoutMs > 0 ? timeoutMs : -1, true, status)) return status;
    stoppedRealtimeNs = clockNs(CLOCK_REALTIME);
    fmt::print(stderr, "hpcprof: {}: ending the job and writing its trace with the calls each "
                       "rank is inside\n",
               g_stopRequested ? "SIGUSR1 received" : "time limit reached");
    // Ranks first: a launcher that dies first may leave them orphaned, or kill them itself.
    signalJob(child, rawDir, SIGTERM);
    if (waitFor(child, 2000, false, status) && liveJobProcesses(rawDir).empty()) return status;
    signalJob(child, rawDir, SIGKILL);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    for (int i = 0; i < 50 && !liveJobProcesses(rawDir).empty(); ++i) usleep(20'000);
    return status;
}

} // namespace hpcprof::cli
