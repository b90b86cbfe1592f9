// SPDX-License-Identifier: MIT
#include "cli_safety_support.hpp"

#include "process_runner.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace hpcprof::test::safety {

namespace fs = std::filesystem;

std::vector<std::string> callsOn(const TraceQuery& q, const std::string& suffix) {
    return q.rows("SELECT name, COUNT(*), COALESCE(SUM(bytes), 0) FROM event_view"
                  " WHERE object LIKE '%" + suffix + "' GROUP BY name ORDER BY name");
}

void checkIoSampleCalls(const TraceQuery& q, const std::string& folder) {
    std::string at = folder.empty() ? "/" : "/" + folder + "/";
    using V = std::vector<std::string>;
    CHECK(callsOn(q, at + "posix.dat") == V{"close|2|0", "open|2|0", "pread|1|512",
                                            "pwrite|2|8192", "read|5|20000", "write|3|11100"});
    CHECK(callsOn(q, at + "stdio.dat") ==
          V{"fclose|2|0", "fopen|2|0", "fread|3|2560", "fwrite|5|2560"});
    CHECK(callsOn(q, at + "thread.dat") ==
          V{"close|1|0", "fsync|1|0", "open|1|0", "write|7|2331"});
    CHECK(callsOn(q, at + "child.dat") == V{"close|1|0", "open|1|0", "write|4|1000"});
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

bool hasProcessFolder(const fs::path& rawDir) {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(rawDir, ec))
        if (e.path().filename().string().rfind("proc-", 0) == 0) return true;
    return false;
}

Gate::Gate(const std::string& path) : m_path(path) {
    if (mkfifo(path.c_str(), 0666) != 0) FAIL("mkfifo " << path << ": " << std::strerror(errno));
    chmod(path.c_str(), 0666);
}

std::string Gate::waitCommand() const { return "read x < '" + m_path + "'"; }

bool Gate::release() {
    // O_NONBLOCK: ENXIO until the shell has the FIFO open for reading.
    int fd = -1;
    waitUntil([&] {
        fd = ::open(m_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return fd >= 0;
    });
    if (fd < 0) return false;
    ssize_t n = ::write(fd, "go\n", 3);
    ::close(fd);
    return n == 3;
}

namespace {
bool becomeNobody() {
    return setgroups(0, nullptr) == 0 && setresgid(kNobody, kNobody, kNobody) == 0 &&
           setresuid(kNobody, kNobody, kNobody) == 0;
}
} // namespace

int asNobody(const std::function<int()>& fn) {
    int code = runInChild([&] { return becomeNobody() ? fn() : 255; });
    return code < 0 || code > 128 ? -1 : code; // 255: not nobody; above 128: killed by a signal
}

NobodyLoop::NobodyLoop(const std::string& stopFile, const std::function<void()>& iteration)
    : m_stopFile(stopFile) {
    m_pid = fork();
    if (m_pid == 0) {
        if (!becomeNobody()) _exit(255);
        while (::access(m_stopFile.c_str(), F_OK) != 0) iteration();
        _exit(0);
    }
}

NobodyLoop::~NobodyLoop() { stop(); }

void NobodyLoop::stop() {
    if (m_pid <= 0) return;
    std::ofstream(m_stopFile) << "stop";
    waitForExit(m_pid);
    m_pid = -1;
}

SmallTmpfs::SmallTmpfs(const fs::path& path, long kib) : m_path(path) {
    fs::create_directories(path);
    std::string options = "size=" + std::to_string(kib) + "k,mode=0777";
    m_mounted = ::mount("tmpfs", path.c_str(), "tmpfs", 0, options.c_str()) == 0;
}

SmallTmpfs::~SmallTmpfs() {
    if (m_mounted) ::umount2(m_path.c_str(), MNT_DETACH);
}

bool SmallTmpfs::resize(long kib) {
    std::string options = "size=" + std::to_string(kib) + "k";
    return ::mount("tmpfs", m_path.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) == 0;
}

std::vector<std::string> listing(const fs::path& folder) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder, ec)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

long diskKib(const fs::path& folder) {
    long blocks = 0;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(folder, ec)) {
        struct stat st{};
        if (::lstat(e.path().c_str(), &st) == 0) blocks += st.st_blocks;
    }
    return blocks / 2;
}

pid_t findProcess(const std::vector<std::string>& words) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        std::string name = e.path().filename();
        if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
        std::ifstream in(e.path() / "cmdline", std::ios::binary);
        std::string cmdline((std::istreambuf_iterator<char>(in)), {});
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (std::all_of(words.begin(), words.end(),
                        [&](const std::string& w) { return cmdline.find(w) != std::string::npos; }))
            return pid_t(std::stol(name));
    }
    return -1;
}

int lineCount(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

int occurrences(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

} // namespace hpcprof::test::safety
