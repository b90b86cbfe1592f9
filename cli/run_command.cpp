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

#include "messages.hpp"

#include "agent_locator.hpp"
#include "rank_coordination.hpp"
#include "raw_dir_claim.hpp"
#include "settings_check.hpp"
#include "collector/runtime/clock.hpp"
#include "collector/runtime/config.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/store/merge.hpp"
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

/// Candidate i of the default output name: hpcprof-YYYYmmdd-HHMMSS[-i].hpcprof.
std::string defaultOutputName(const std::string& stamp, int i) {
    return i == 0 ? fmt::format("hpcprof-{}.hpcprof", stamp)
                  : fmt::format("hpcprof-{}-{}.hpcprof", stamp, i);
}

std::string timeStamp() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    return stamp;
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

// GPU and OpenMP sources. CUDA and NVTX dlopen their tool library by path, NCCL its profiler
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
                       var, report::printable(existing));
            return;
        }
        setenv(var, agent.c_str(), 1);
    };
    claim("CUDA_INJECTION64_PATH", collector::SourceBit::Cuda);
    claim("NVTX_INJECTION64_PATH", collector::SourceBit::Nvtx);
    if (("," + sources + ",").find(",nccl_plugin,") != std::string::npos)
        claim("NCCL_PROFILER_PLUGIN", collector::SourceBit::NcclPlugin);
    // OpenMP: libomp finds the agent's ompt_start_tool in the address space; a tool the user
    // names in OMP_TOOL_LIBRARIES keeps the runtime (the agent yields, interpose/openmp).
    const char* ompTools = std::getenv("OMP_TOOL_LIBRARIES");
    if ((bits & uint32_t(collector::SourceBit::OpenMp)) && ompTools && *ompTools &&
        std::string(ompTools).find(agent) == std::string::npos)
        fmt::print(stderr, "hpcprof: note: OMP_TOOL_LIBRARIES is set ({}); leaving OpenMP to that tool\n",
                   report::printable(ompTools));
}

/// The output and its claimed raw folder, or the exit code of a refusal (already explained).
struct ClaimedOutput {
    std::string output;
    std::optional<RankLaunch> perRank;
    fs::path rawDir;
    RawDirClaim claim;
    int refusal = 0;
};

ClaimedOutput claimOutput(const RunOptions& o) {
    ClaimedOutput c;
    auto fail = [&](const std::string& message) {
        printMessage("run", message);
        c.refusal = kExitUsage;
        return std::move(c);
    };
    // Without -o, the first free name of this second; a name another run holds (or left raw
    // data under) is skipped, never taken over.
    std::string stamp = o.output.empty() ? timeStamp() : std::string();
    for (int i = 0;; ++i) {
        bool chosen = !o.output.empty();
        c.output = chosen ? o.output : defaultOutputName(stamp, i);
        std::error_code ec;
        if (!chosen && i > 1000) return fail("no free default output name in this folder (use -o)");
        if (!chosen && fs::exists(c.output, ec)) continue;
        if (Status s = schema::checkOutputPath(c.output, o.force); !s.ok()) return fail(s.message());
        // One wrapper per rank (mpirun/srun start hpcprof itself) shares one raw folder per job.
        c.perRank = detectRankLaunch(c.output);
        ClaimRequest request;
        request.output = c.output;
        request.root = fs::absolute(c.output + ".raw", ec);
        request.jobId = c.perRank ? c.perRank->jobId : std::string();
        request.force = chosen && o.force;
        request.command = joinCommand(o.command);
        c.rawDir = c.perRank ? c.perRank->rawDir : request.root;
        // The agent keeps the folder's path in a fixed buffer (settings.def: HPCPROF_RAW_DIR).
        const auto& rawDirRule = collector::settingSpec(collector::Setting::RawDir);
        if (double(c.rawDir.string().size()) > rawDirRule.max)
            return fail(fmt::format("the raw folder path {} is longer than the agent accepts ({} "
                                    "characters): choose a shorter -o",
                                    c.rawDir.string(), rawDirRule.max));
        ClaimResult claimed = claimRawDir(request);
        if (claimed.outcome == ClaimOutcome::Claimed) {
            if (!claimed.note.empty()) printMessage("run", "note: " + claimed.note);
            c.claim = std::move(claimed.claim);
            break;
        }
        if (chosen || claimed.outcome == ClaimOutcome::Failed) return fail(claimed.message);
    }
    if (c.perRank) {
        std::error_code ec;
        fs::create_directories(c.rawDir, ec);
        if (ec || ::access(c.rawDir.c_str(), W_OK) != 0)
            return fail(fmt::format("cannot write raw data into {}: {}", c.rawDir.string(),
                                    ec ? ec.message() : std::strerror(errno)));
    }
    return c;
}

} // namespace

int runCommand(const RunOptions& o) {
    if (o.command.empty()) {
        fmt::print(stderr, "hpcprof run: no command given (usage: hpcprof run [options] -- CMD [ARGS...])\n");
        return kExitUsage;
    }
    if (std::string why = checkSourceList(o.sources); !why.empty()) {
        printMessage("run", why);
        return kExitUsage;
    }
    std::string agent = locateAgent();
    if (agent.empty()) {
        fmt::print(stderr, "hpcprof run: cannot find libhpcprof.so next to the hpcprof executable "
                           "(set HPCPROF_AGENT to its path)\n");
        return kExitUsage;
    }
    // An agent path that names no file would only make every process print a loader error and
    // record nothing: refused, like any set-up error, before the command runs.
    if (std::error_code ec; !fs::is_regular_file(agent, ec)) {
        fmt::print(stderr, "hpcprof run: HPCPROF_AGENT={} names no file (unset it to use the "
                           "agent next to hpcprof)\n",
                   report::printable(agent));
        return kExitUsage;
    }
    // Everything that can refuse does so here, before the command runs.
    ClaimedOutput claimed = claimOutput(o);
    if (claimed.refusal) return claimed.refusal;
    const std::string& output = claimed.output;
    const std::optional<RankLaunch>& perRank = claimed.perRank;
    const fs::path& rawDir = claimed.rawDir;

    uint64_t tscHz = collector::measureTscHz(20'000'000);
    setPreload(agent, o.sources);
    setenv("HPCPROF_RAW_DIR", rawDir.c_str(), 1);
    setenv("HPCPROF_SOURCES", o.sources.c_str(), 1);
    if (!o.counters.empty()) setenv("HPCPROF_COUNTERS", o.counters.c_str(), 1);
    if (!o.counterPeriodMs.empty()) setenv("HPCPROF_COUNTER_PERIOD_MS", o.counterPeriodMs.c_str(), 1);
    setGpuInjection(agent, o.sources);
    if (tscHz) setenv("HPCPROF_TSC_HZ", std::to_string(tscHz).c_str(), 1);
    // The environment as the agent will read it: a bad value is named once, here (in the
    // per-rank form by rank 0's wrapper only), and the agent uses the default for it.
    if (!perRank || perRank->rank == 0)
        for (const auto& w : environmentWarnings()) fmt::print(stderr, "hpcprof: warning: {}\n", report::printable(w));
    // Nothing was recorded when the command could not start: its raw folder goes (the
    // per-rank form's folder is shared with the job's other wrappers, which decide).
    auto dropRawFolder = [&] {
        if (!perRank) claimed.claim.removeFolder();
    };

    // A close-on-exec pipe tells the parent whether exec worked, and why not.
    int execPipe[2];
    if (pipe2(execPipe, O_CLOEXEC) != 0) {
        fmt::print(stderr, "hpcprof run: pipe: {}\n", std::strerror(errno));
        dropRawFolder();
        return kExitUsage;
    }
    std::vector<char*> argv;
    for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    auto started = std::chrono::steady_clock::now();
    pid_t child = fork();
    if (child < 0) {
        fmt::print(stderr, "hpcprof run: fork: {}\n", std::strerror(errno));
        dropRawFolder();
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
        printMessage("run", "cannot run '" + o.command[0] + "': " + std::strerror(execErr));
        dropRawFolder();
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
                       perRank->rank, report::printable(output), report::printable(rawDir.string()),
                       report::printable(output));
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
                   report::printable(merged.status().message()), report::printable(rawDir.string()),
                   report::printable(rawDir.string()), report::printable(output));
        claimed.claim.setState("unconverted");
        return exitCode != 0 ? exitCode : kExitTraceFailed;
    }
    if (merged->processes == 0)
        fmt::print(stderr, "hpcprof: warning: no process was recorded (is the command a static or "
                           "setuid binary? LD_PRELOAD does not reach those)\n");
    for (const auto& w : merged->warnings) fmt::print(stderr, "hpcprof: warning: {}\n", report::printable(w));
    // Per-rank form: every wrapper of the job has finished its rank (the done markers), so the
    // whole folder is this job's to remove.
    if (o.keepRaw)
        claimed.claim.setState("kept");
    else
        claimed.claim.removeFolder();

    if (!o.quiet) {
        auto trace = analyzer::Trace::open(output);
        auto summary = trace ? analyzer::summarizeIo(trace.value()) : Result<analyzer::IoSummary>(trace.status());
        if (summary)
            printIoSummary(stderr, output, summary.value());
        else
            fmt::print(stderr, "hpcprof: trace written to {} (summary failed: {})\n",
                       report::printable(output), report::printable(summary.status().message()));
        (void)elapsed;
    }
    return exitCode;
}

} // namespace hpcprof::cli
