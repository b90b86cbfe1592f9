// SPDX-License-Identifier: MIT
#include "run_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "agent_locator.hpp"
#include "rank_coordination.hpp"
#include "collector/runtime/clock.hpp"
#include "collector/runtime/config.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "merge.hpp"
#include "summary_printer.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

pid_t g_child = -1;

// Signals sent to hpcprof with kill() go on to the command. Terminal signals (Ctrl-C) already
// reach the command through its process group, so they are not sent a second time.
void forwardSignal(int sig, siginfo_t* info, void*) {
    if (g_child <= 0) return;
    if (info && info->si_code == SI_KERNEL) return;
    ::kill(g_child, sig);
}

void installForwarding() {
    struct sigaction sa{};
    sa.sa_sigaction = forwardSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT})
        sigaction(sig, &sa, nullptr);
}

std::string defaultOutputName() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    std::string base = fmt::format("hpcprof-{}", stamp);
    std::string name = base + ".hpcprof";
    for (int i = 1; fs::exists(name) || fs::exists(name + ".raw"); ++i)
        name = fmt::format("{}-{}.hpcprof", base, i);
    return name;
}

std::string joinCommand(const std::vector<std::string>& cmd) {
    std::string out;
    for (const auto& a : cmd) {
        if (!out.empty()) out += ' ';
        out += a;
    }
    return out;
}

// The agent first, then the MPI module built for this MPI ABI (when present and wanted): the
// module records through the agent's exported interface.
void setPreload(const std::string& agent, const std::string& sources) {
    const char* existing = std::getenv("LD_PRELOAD");
    std::string value = agent;
    fs::path mpiModule = fs::path(agent).parent_path() / "libhpcprof_mpi.so";
    std::error_code ec;
    if ((collector::parseSources(sources.c_str()) & uint32_t(collector::SourceBit::Mpi)) &&
        fs::exists(mpiModule, ec))
        value += ":" + mpiModule.string();
    if (existing && *existing) value += ":" + std::string(existing);
    setenv("LD_PRELOAD", value.c_str(), 1);
}

// GPU sources (issue 5). CUDA and NVTX dlopen their tool library by path, NCCL its profiler
// plugin; all three point at the preloaded agent itself, so glibc hands back the loaded object
// and every entry point shares one recorder. A variable the user already set (another tool) is
// left alone. The NCCL plugin is opt-in: only when --sources names nccl_plugin explicitly.
void setGpuInjection(const std::string& agent, const std::string& sources) {
    uint32_t bits = collector::parseSources(sources.c_str());
    auto claim = [&](const char* var, collector::SourceBit bit) {
        if (!(bits & uint32_t(bit))) return;
        const char* existing = std::getenv(var);
        if (existing && *existing && agent != existing) {
            fmt::print(stderr, "hpcprof: note: {} is already set ({}); leaving it to that tool\n",
                       var, existing);
            return;
        }
        setenv(var, agent.c_str(), 1);
    };
    claim("CUDA_INJECTION64_PATH", collector::SourceBit::Cuda);
    claim("NVTX_INJECTION64_PATH", collector::SourceBit::Nvtx);
    if (("," + sources + ",").find(",nccl_plugin,") != std::string::npos)
        claim("NCCL_PROFILER_PLUGIN", collector::SourceBit::NcclPlugin);
}

} // namespace

int runCommand(const RunOptions& o) {
    if (o.command.empty()) {
        fmt::print(stderr, "hpcprof run: no command given (usage: hpcprof run [options] -- CMD [ARGS...])\n");
        return kExitUsage;
    }
    if (collector::parseSources(o.sources.c_str()) == 0) {
        fmt::print(stderr, "hpcprof run: --sources '{}' names no known source (known: io, mpi, socket, rdma, cuda, nvtx, nccl, nccl_plugin, all)\n",
                   o.sources);
        return kExitUsage;
    }
    std::string agent = locateAgent();
    if (agent.empty()) {
        fmt::print(stderr, "hpcprof run: cannot find libhpcprof.so next to the hpcprof executable "
                           "(set HPCPROF_AGENT to its path)\n");
        return kExitUsage;
    }
    std::string output = o.output.empty() ? defaultOutputName() : o.output;
    std::error_code ec;
    if (fs::exists(output, ec) && !o.force) {
        fmt::print(stderr, "hpcprof run: {} already exists (use --force to replace it, or -o)\n",
                   output);
        return kExitUsage;
    }
    // One wrapper per rank (mpirun/srun start hpcprof itself) shares one raw folder per job.
    std::optional<RankLaunch> perRank = detectRankLaunch(output);
    fs::path rawDir = perRank ? perRank->rawDir : fs::absolute(output + ".raw", ec);
    bool rawReady;
    if (perRank) {
        fs::create_directories(rawDir, ec);
        rawReady = !ec && ::access(rawDir.c_str(), W_OK) == 0;
    } else {
        fs::remove_all(rawDir, ec);
        rawReady = fs::create_directory(rawDir, ec) && !ec;
    }
    if (!rawReady) {
        fmt::print(stderr, "hpcprof run: cannot write raw data next to {}: {}\n", output,
                   ec ? ec.message() : std::strerror(errno));
        return kExitUsage;
    }

    uint64_t tscHz = collector::measureTscHz(20'000'000);
    setPreload(agent, o.sources);
    setenv("HPCPROF_RAW_DIR", rawDir.c_str(), 1);
    setenv("HPCPROF_SOURCES", o.sources.c_str(), 1);
    if (!o.counters.empty()) setenv("HPCPROF_COUNTERS", o.counters.c_str(), 1);
    if (!o.counterPeriodMs.empty()) setenv("HPCPROF_COUNTER_PERIOD_MS", o.counterPeriodMs.c_str(), 1);
    setGpuInjection(agent, o.sources);
    if (tscHz) setenv("HPCPROF_TSC_HZ", std::to_string(tscHz).c_str(), 1);

    // A close-on-exec pipe tells the parent whether exec worked, and why not.
    int execPipe[2];
    if (pipe2(execPipe, O_CLOEXEC) != 0) {
        fmt::print(stderr, "hpcprof run: pipe: {}\n", std::strerror(errno));
        return kExitUsage;
    }
    std::vector<char*> argv;
    for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    auto started = std::chrono::steady_clock::now();
    pid_t child = fork();
    if (child < 0) {
        fmt::print(stderr, "hpcprof run: fork: {}\n", std::strerror(errno));
        return kExitUsage;
    }
    if (child == 0) {
        close(execPipe[0]);
        execvp(argv[0], argv.data());
        int err = errno;
        ssize_t ignored = write(execPipe[1], &err, sizeof(err));
        (void)ignored;
        _exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
    }
    g_child = child;
    installForwarding();
    close(execPipe[1]);
    int execErr = 0;
    ssize_t n;
    do {
        n = read(execPipe[0], &execErr, sizeof(execErr));
    } while (n < 0 && errno == EINTR);
    close(execPipe[0]);

    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = -1;
    auto elapsed = std::chrono::steady_clock::now() - started;
    if (n == sizeof(execErr)) {
        fmt::print(stderr, "hpcprof run: cannot run '{}': {}\n", o.command[0], std::strerror(execErr));
        fs::remove_all(rawDir, ec);
        return execErr == ENOENT ? kExitNotFound : kExitCannotExecute;
    }
    int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFSIGNALED(status))
        fmt::print(stderr, "hpcprof: command killed by signal {} ({})\n", WTERMSIG(status),
                   strsignal(WTERMSIG(status)));

    if (perRank && !finishRankAndElectMerger(*perRank)) {
        if (!o.quiet)
            fmt::print(stderr, "hpcprof: rank {} done; the last rank to finish writes {} (if a "
                               "rank was killed: hpcprof merge {} -o {})\n",
                       perRank->rank, output, rawDir.string(), output);
        return exitCode;
    }

    store::MergeOptions mo;
    mo.rawDir = rawDir;
    mo.output = output;
    mo.force = o.force;
    mo.fallbackTscHz = tscHz;
    mo.command = joinCommand(o.command);
    auto merged = store::mergeRawDirectory(mo);
    if (!merged) {
        fmt::print(stderr, "hpcprof: {}\nhpcprof: raw data kept in {} (convert with: hpcprof merge "
                           "{} -o {})\n",
                   merged.status().message(), rawDir.string(), rawDir.string(), output);
        return exitCode != 0 ? exitCode : kExitTraceFailed;
    }
    if (merged->processes == 0)
        fmt::print(stderr, "hpcprof: warning: no process was recorded (is the command a static or "
                           "setuid binary? LD_PRELOAD does not reach those)\n");
    for (const auto& w : merged->warnings) fmt::print(stderr, "hpcprof: warning: {}\n", w);
    if (!o.keepRaw) {
        fs::remove_all(rawDir, ec);
        if (perRank) fs::remove(rawDir.parent_path(), ec); // only if no other job's data is left
    }

    if (!o.quiet) {
        auto trace = analyzer::Trace::open(output);
        auto summary = trace ? analyzer::summarizeIo(trace.value()) : Result<analyzer::IoSummary>(trace.status());
        if (summary)
            printIoSummary(stderr, output, summary.value());
        else
            fmt::print(stderr, "hpcprof: trace written to {} (summary failed: {})\n", output,
                       summary.status().message());
        (void)elapsed;
    }
    return exitCode;
}

} // namespace hpcprof::cli
