// SPDX-License-Identifier: MIT
#include "run_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "messages.hpp"
#include "node_capture.hpp"

#include "agent_locator.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/class_summary.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/launch/config.hpp"
#include "hpcprof/report/writers.hpp"
#include "hpcprof/launch/tsc_frequency.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/store/merge.hpp"
#include "rank_coordination.hpp"
#include "raw_dir_claim.hpp"
#include "settings_check.hpp"
#include "progress.hpp"
#include "job_stop.hpp"
#include "summary_printer.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

pid_t g_child = -1;
bool g_timeoutGiven = false; // --timeout: SIGUSR1 ends the job rather than going on to it

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
    if (g_timeoutGiven) installStopSignal(); // SIGUSR1 ends the job instead (job_stop.hpp)
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
    if ((agent::parseSources(sources.c_str()) & uint32_t(agent::SourceBit::Mpi)) &&
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
    uint32_t bits = agent::parseSources(sources.c_str());
    auto claim = [&](const char* var, agent::SourceBit bit) {
        if (!(bits & uint32_t(bit))) return;
        const char* existing = std::getenv(var);
        if (existing && *existing && agent != existing) {
            fmt::print(stderr, "hpcprof: note: {} is already set ({}); leaving it to that tool\n",
                       var, report::printable(existing));
            return;
        }
        setenv(var, agent.c_str(), 1);
    };
    claim("CUDA_INJECTION64_PATH", agent::SourceBit::Cuda);
    claim("NVTX_INJECTION64_PATH", agent::SourceBit::Nvtx);
    if (("," + sources + ",").find(",nccl_plugin,") != std::string::npos)
        claim("NCCL_PROFILER_PLUGIN", agent::SourceBit::NcclPlugin);
    // OpenMP: libomp finds the agent's ompt_start_tool in the address space; a tool the user
    // names in OMP_TOOL_LIBRARIES keeps the runtime (the agent yields, agent/openmp).
    const char* ompTools = std::getenv("OMP_TOOL_LIBRARIES");
    if ((bits & uint32_t(agent::SourceBit::OpenMp)) && ompTools && *ompTools &&
        std::string(ompTools).find(agent) == std::string::npos)
        fmt::print(stderr, "hpcprof: note: OMP_TOOL_LIBRARIES is set ({}); leaving OpenMP to that tool\n",
                   report::printable(ompTools));
}

/// The output and its claimed raw folder, or the exit code of a refusal (already explained).
struct ClaimedOutput {
    std::string output;
    std::optional<RankLaunch> perRank;
    std::optional<NodeLayout> node; ///< per-rank form with a known node layout: node-local raw data
    fs::path rawDir;
    RawDirClaim claim;
    int refusal = 0;
};

/// What to claim for output `c.output`, and where the raw data goes (sets c.perRank, c.node,
/// c.rawDir).
ClaimRequest claimRequest(const RunOptions& o, ClaimedOutput& c, bool force) {
    std::error_code ec;
    // One wrapper per rank (mpirun/srun start hpcprof itself) shares one raw folder per job.
    c.perRank = detectRankLaunch(c.output);
    c.node = c.perRank ? detectNodeLayout(*c.perRank, c.output, o.rawDir) : std::nullopt;
    ClaimRequest request;
    request.output = c.output;
    // Node-local capture: only the shards come to the shared folder (<output>.shards).
    request.root = c.node ? c.node->shardsRoot : fs::absolute(c.output + ".raw", ec);
    request.jobId = c.perRank ? c.perRank->jobId : std::string();
    request.force = force;
    request.command = joinCommand(o.command);
    c.rawDir = c.node ? c.node->localDir : c.perRank ? c.perRank->rawDir : request.root;
    return request;
}

/// The agent keeps the raw folder's path in a fixed buffer (settings.def: HPCPROF_RAW_DIR).
Status checkRawDirLength(const fs::path& rawDir) {
    const auto& rule = agent::settingSpec(agent::Setting::RawDir);
    if (double(rawDir.string().size()) <= rule.max) return {};
    return Status::error(fmt::format("the raw folder path {} is longer than the agent accepts ({} "
                                     "characters): choose a shorter -o",
                                     rawDir.string(), rule.max));
}

/// Creates `dir` (and its parents) if needed; an error unless this process may write into it.
Status makeWritableFolder(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || ::access(dir.c_str(), W_OK) != 0)
        return Status::error(fmt::format("cannot write raw data into {}: {}", dir.string(),
                                         ec ? ec.message() : std::strerror(errno)));
    return {};
}

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
        ClaimRequest request = claimRequest(o, c, chosen && o.force);
        if (Status s = checkRawDirLength(c.rawDir); !s.ok()) return fail(s.message());
        ClaimResult claimed = claimRawDir(request);
        if (claimed.outcome == ClaimOutcome::Claimed) {
            if (!claimed.note.empty()) printMessage("run", "note: " + claimed.note);
            c.claim = std::move(claimed.claim);
            break;
        }
        if (chosen || claimed.outcome == ClaimOutcome::Failed) return fail(claimed.message);
    }
    if (c.perRank)
        if (Status s = makeWritableFolder(c.rawDir); !s.ok()) return fail(s.message());
    return c;
}

/// The checks that need no output yet: a command, known sources, an agent that exists. The
/// agent's path, or empty after saying why not.
std::string checkCommandAndAgent(const RunOptions& o) {
    if (o.command.empty()) {
        fmt::print(stderr, "hpcprof run: no command given (usage: hpcprof run [options] -- CMD [ARGS...])\n");
        return {};
    }
    if (std::string why = checkSourceList(o.sources); !why.empty()) {
        printMessage("run", why);
        return {};
    }
    std::string agent = locateAgent();
    if (agent.empty()) {
        fmt::print(stderr, "hpcprof run: cannot find libhpcprof.so next to the hpcprof executable "
                           "(set HPCPROF_AGENT to its path)\n");
        return {};
    }
    // An agent path that names no file would only make every process print a loader error and
    // record nothing: refused, like any set-up error, before the command runs.
    if (std::error_code ec; !fs::is_regular_file(agent, ec)) {
        fmt::print(stderr, "hpcprof run: HPCPROF_AGENT={} names no file (unset it to use the "
                           "agent next to hpcprof)\n",
                   report::printable(agent));
        return {};
    }
    return agent;
}

/// Sets the environment the agent reads in the command's processes; returns the TSC frequency
/// measured here (0: none), which the merge falls back on.
uint64_t prepareAgentEnvironment(const RunOptions& o, const std::string& agent,
                                 const ClaimedOutput& claimed) {
    // 2 ms of spinning: the merge uses this rate only for processes that lived under 10 ms
    // (their own start and last clock pairs give the rest theirs, clock_mapping.cpp), where
    // clock-reading errors of some 30 ns over 2 ms (15 ppm) come to under a nanosecond. The
    // 20 ms it spun before were CPU and latency every run (every rank's wrapper) paid.
    uint64_t tscHz = agent::measureTscHz(2'000'000);
    setPreload(agent, o.sources);
    setenv("HPCPROF_RAW_DIR", claimed.rawDir.c_str(), 1);
    setenv("HPCPROF_SOURCES", o.sources.c_str(), 1);
    if (!o.counters.empty()) setenv("HPCPROF_COUNTERS", o.counters.c_str(), 1);
    if (!o.counterPeriodMs.empty()) setenv("HPCPROF_COUNTER_PERIOD_MS", o.counterPeriodMs.c_str(), 1);
    setGpuInjection(agent, o.sources);
    if (tscHz) setenv("HPCPROF_TSC_HZ", std::to_string(tscHz).c_str(), 1);
    // The environment as the agent will read it: a bad value is named once, here (in the
    // per-rank form by rank 0's wrapper only), and the agent uses the default for it.
    if (!claimed.perRank || claimed.perRank->rank == 0)
        for (const auto& w : environmentWarnings()) fmt::print(stderr, "hpcprof: warning: {}\n", report::printable(w));
    return tscHz;
}

/// Forks and execs the command with hpcprof's signals forwarded to it. Its pid, or -1 after
/// saying why (pipe or fork failed). `execReadEnd`: a close-on-exec pipe's read end that tells
/// the parent whether exec worked, and why not.
pid_t startCommand(const std::vector<std::string>& command, int& execReadEnd) {
    int execPipe[2];
    if (pipe2(execPipe, O_CLOEXEC) != 0) {
        fmt::print(stderr, "hpcprof run: pipe: {}\n", std::strerror(errno));
        return -1;
    }
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    pid_t child = fork();
    if (child < 0) {
        fmt::print(stderr, "hpcprof run: fork: {}\n", std::strerror(errno));
        return -1;
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
    execReadEnd = execPipe[0];
    return child;
}

/// The errno of a failed exec, read from the pipe (closed here); nothing when exec worked.
std::optional<int> readExecError(int execReadEnd) {
    int execErr = 0;
    ssize_t n;
    do {
        n = read(execReadEnd, &execErr, sizeof(execErr));
    } while (n < 0 && errno == EINTR);
    close(execReadEnd);
    if (n == sizeof(execErr)) return execErr;
    return std::nullopt;
}

/// --timeout: when to end the job (-1: never, 0: only on SIGUSR1), its raw folder (which lists
/// the job's processes), and when it was ended (0: it ended by itself).
struct JobStop {
    int64_t timeoutMs = -1;
    std::filesystem::path rawDir;
    mutable int64_t stoppedRealtimeNs = 0;
};

/// Waits for the command to end (through interruptions by forwarded signals), or ends the job
/// at the time limit (`stop`); its wait status.
int waitForCommand(pid_t child, const JobStop& stop) {
    int status = 0;
    if (stop.timeoutMs >= 0) {
        status = waitOrStop(child, stop.timeoutMs, stop.rawDir, stop.stoppedRealtimeNs);
    } else {
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
    }
    g_child = -1;
    return status;
}

/// How the command ended. `ran` false: it never ran, and `exitCode` is hpcprof's own (the
/// reason already printed).
struct CommandEnd {
    bool ran = false;
    int exitCode = 0; ///< the command's, as a shell gives it (128 + signal when killed)
};

CommandEnd runToEnd(const std::vector<std::string>& command, const JobStop& stop) {
    int execReadEnd = -1;
    pid_t child = startCommand(command, execReadEnd);
    if (child < 0) return {false, kExitUsage};
    std::optional<int> execErr = readExecError(execReadEnd);
    int status = waitForCommand(child, stop);
    if (execErr) {
        printMessage("run", "cannot run '" + command[0] + "': " + std::strerror(*execErr));
        return {false, *execErr == ENOENT ? kExitNotFound : kExitCannotExecute};
    }
    int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFSIGNALED(status))
        fmt::print(stderr, "hpcprof: command killed by signal {} ({})\n", WTERMSIG(status),
                   strsignal(WTERMSIG(status)));
    return {true, exitCode};
}

/// Per-rank form, a wrapper that is not the last to finish: says who writes the trace.
void printRankDone(const ClaimedOutput& claimed) {
    fmt::print(stderr, "hpcprof: rank {} done; the last rank to finish writes {} (if a "
                       "rank was killed: hpcprof merge {} -o {})\n",
               claimed.perRank->rank, report::printable(claimed.output),
               report::printable(claimed.rawDir.string()), report::printable(claimed.output));
}

/// Converts the raw folder into the trace, then deletes the folder (or, with --keep-raw, marks
/// it kept). False when no trace was written: the raw data stays, marked unconverted, and the
/// message says how to convert it by hand.
bool writeTrace(const RunOptions& o, ClaimedOutput& claimed, uint64_t tscHz,
                std::vector<schema::IoGroup>& io, int64_t stoppedRealtimeNs) {
    const std::string rawDir = claimed.rawDir.string();
    store::MergeOptions mo;
    mo.rawDir = claimed.rawDir;
    mo.output = claimed.output;
    mo.force = o.force;
    mo.fallbackTscHz = tscHz;
    mo.command = joinCommand(o.command);
    mo.stoppedRealtimeNs = stoppedRealtimeNs;
    Progress progress("converting the capture");
    mo.onProgress = [&progress](const char* step, int64_t done, int64_t total) {
        progress.update(step, done, total);
    };
    auto merged = store::mergeRawDirectory(mo);
    progress.finish();
    if (!merged) {
        fmt::print(stderr, "hpcprof: {}\nhpcprof: raw data kept in {} (convert with: hpcprof merge "
                           "{} -o {})\n",
                   report::printable(merged.status().message()), report::printable(rawDir),
                   report::printable(rawDir), report::printable(claimed.output));
        claimed.claim.setState("unconverted");
        return false;
    }
    if (merged->processes == 0)
        fmt::print(stderr, "hpcprof: warning: no process was recorded (is the command a static or "
                           "setuid binary? LD_PRELOAD does not reach those)\n");
    for (const auto& w : merged->warnings) fmt::print(stderr, "hpcprof: warning: {}\n", report::printable(w));
    io = std::move(merged->io);
    if (o.lanes) analyzer::keepClassSummary(claimed.output); // best effort: the GUI's first screen reads it (docs/gui.md)
    // Per-rank form: every wrapper of the job has finished its rank (the done markers), so the
    // whole folder is this job's to remove.
    if (o.keepRaw)
        claimed.claim.setState("kept");
    else
        claimed.claim.removeFolder();
    return true;
}

/// After hpcprof run ended the job (--timeout, SIGUSR1): the hang diagnosis, on stderr, so that
/// a batch script's log says where each rank was stuck without running hpcprof report.
void printHangDiagnosis(const std::string& output) {
    auto trace = analyzer::Trace::open(output);
    auto analysis = trace ? analyzer::analyzeTrace(trace.value()) : Result<analyzer::Analysis>(trace.status());
    if (!analysis) {
        fmt::print(stderr, "hpcprof: no hang diagnosis: {}\n", report::printable(analysis.status().message()));
        return;
    }
    std::string text = report::sectionText(*analysis, "hang");
    fmt::print(stderr, "{}", text.empty() ? "hpcprof: no rank was inside a call when the job was ended\n" : text);
}

/// The per-rank form on known nodes: this rank's share of the node's and the job's conversion
/// (node_capture.hpp); the exit code.
int finishNodeRank(const RunOptions& o, ClaimedOutput& claimed, uint64_t tscHz, int exitCode) {
    NodeRun nodeRun{*claimed.perRank, *claimed.node, claimed.output, joinCommand(o.command),
                    tscHz, o.force, o.keepRaw, o.quiet};
    NodeOutcome outcome = finishOnNode(nodeRun, claimed.claim);
    if (outcome == NodeOutcome::Failed) return exitCode != 0 ? exitCode : kExitTraceFailed;
    if (outcome == NodeOutcome::TraceWritten && !o.quiet) printTraceSummary(stderr, claimed.output);
    return exitCode;
}

} // namespace

CLI::App* addRunCommand(CLI::App& app, RunOptions& run) {
    auto* cmd = app.add_subcommand("run", "Run a command under the profiler and write a trace");
    cmd->add_option("-o,--output", run.output, "Trace file (default: hpcprof-<time>.hpcprof)");
    cmd->add_option("--sources", run.sources,
                    "Comma list of sources to record: " + sourceNamesText())
        ->capture_default_str();
    cmd->add_option("--counters", run.counters,
                    "CPU counters: default, software, none, or names (PAPI_TOT_INS,task_clock,...)");
    cmd->add_option("--counter-period", run.counterPeriodMs, "Counter timer period in ms (0 = off)")
        ->check(acceptedBy(agent::Setting::CounterPeriodMs));
    cmd->add_flag("--force", run.force, "Replace an existing trace");
    cmd->add_flag("--keep-raw", run.keepRaw, "Keep the raw capture directory (TRACE.raw)");
    cmd->add_flag("--lanes", run.lanes, kLanesFlagHelp);
    cmd->add_flag("-q,--quiet", run.quiet, "Do not print the summary");
    cmd->add_option("--raw-dir", run.rawDir,
                    "Per-rank launch on several nodes: node-local folder for raw data "
                    "(default: $TMPDIR, else /tmp)");
    cmd->add_option("--timeout", run.timeout,
                    "End the job after DURATION (90, 90s, 1500ms, 5m, 2h; 0 = no limit) and write "
                    "its trace with the calls each rank is inside; SIGUSR1 to hpcprof does the same")
        ->check([](const std::string& v) {
            return parseDuration(v) ? std::string() : "not a duration: " + v;
        });
    cmd->add_option("command", run.command, "The command to run, after --")->required();
    cmd->positionals_at_end();
    return cmd;
}

// The run's life: check the options, claim the output, start the command, wait for it, merge
// (the last wrapper of a per-rank job only), print the summary.
int runCommand(const RunOptions& o) {
    std::string agent = checkCommandAndAgent(o);
    if (agent.empty()) return kExitUsage;
    // Everything that can refuse does so here, before the command runs.
    ClaimedOutput claimed = claimOutput(o);
    if (claimed.refusal) return claimed.refusal;
    uint64_t tscHz = prepareAgentEnvironment(o, agent, claimed);

    JobStop stop;
    if (!o.timeout.empty()) {
        stop.timeoutMs = parseDuration(o.timeout).value_or(0);
        stop.rawDir = claimed.rawDir;
        g_timeoutGiven = true;
    }
    CommandEnd end = runToEnd(o.command, stop);
    if (!end.ran) {
        // Nothing was recorded when the command could not start: its raw folder goes (the
        // per-rank form's folder is shared with the job's other wrappers, which decide).
        if (!claimed.perRank) claimed.claim.removeFolder();
        return end.exitCode;
    }
    if (claimed.node) return finishNodeRank(o, claimed, tscHz, end.exitCode);
    if (claimed.perRank && !finishRankAndElectMerger(*claimed.perRank)) {
        if (!o.quiet) printRankDone(claimed);
        return end.exitCode;
    }
    std::vector<schema::IoGroup> io; // the summary's input, summed by the conversion
    if (!writeTrace(o, claimed, tscHz, io, stop.stoppedRealtimeNs))
        return end.exitCode != 0 ? end.exitCode : kExitTraceFailed;
    if (!o.quiet) printRunSummary(stderr, claimed.output, io);
    if (stop.stoppedRealtimeNs != 0) printHangDiagnosis(claimed.output);
    return end.exitCode;
}

} // namespace hpcprof::cli
