// SPDX-License-Identifier: MIT
/// Plain result structs of the analyses (attribution, cross-rank, steps, findings). Report
/// writers, the diff and the GUI consume them; nothing here formats or draws. All times are ns.
/// The exact definitions of every number are in docs/analysis.md.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpcprof/analyzer/counter_types.hpp"
#include "hpcprof/analyzer/rdma_types.hpp"

namespace hpcprof::analyzer {

/// The exclusive classes of the breakdown: at every instant of a rank's window exactly one holds.
/// Setup (MPI start-up and shutdown, communicator and window creation/free) is its own class,
/// never communication; it is last so that the older classes keep their values.
enum class TimeClass : uint8_t { Compute, Communication, Io, Memory, Sync, Idle, Setup };
inline constexpr int kTimeClassCount = 7;
/// JSON / report name of a class: compute, comm, io, memory, sync, idle, setup.
const char* timeClassName(TimeClass c);

/// How the analysis window is chosen (`--window`). Default: the steps when they come from
/// ProfilerStep ranges, --steps or a range family of an imported profiler trace, else the first
/// to last activity of the ranks (docs/analysis.md, Window); Whole: `--window all`, the whole
/// recorded span.
struct WindowSpec {
    enum class Kind { Default, Whole, TimeRange, RangeName } kind = Kind::Default;
    int64_t begin = 0, end = 0; ///< TimeRange, ns from the trace origin, end exclusive
    std::string pattern;        ///< RangeName: range name, a trailing '*' matches any suffix
    std::string text;           ///< as the user wrote it (for reports)
};

/// Rule thresholds and machine facts the analyses need; defaults are documented in
/// docs/advice-rules.md.
struct AnalysisOptions {
    WindowSpec window;
    int overviewBuckets = 100;
    size_t topItems = 10;
    /// Link bandwidth for the collective-bandwidth rule, bytes/s; 0 = metadata key
    /// `link_bandwidth_bytes_per_s` if the trace has it, else 12.5e9 (100 Gb/s).
    double linkBandwidthBytesPerS = 0;
    /// Copy bandwidth between ranks on one host, bytes/s, which the collective-bandwidth rule
    /// compares with when every rank runs on the same host; 0 = 10 GB/s.
    double memoryBandwidthBytesPerS = 0;
    /// Worker threads for the per-rank pass; 0 = the hardware's concurrency (at most 8). The
    /// result does not depend on it.
    int threads = 0;
    /// POP metrics on the whole window, MPI start-up and shutdown included (`--include-setup`);
    /// by default they are computed between each rank's MPI_Init and MPI_Finalize.
    bool popIncludesSetup = false;
    /// `--steps NAME`: the step family (docs/analysis.md, Steps); "collectives" for the
    /// collective pattern; empty: chosen by what a step is.
    std::string steps;
    /// Every rank's steps are listed in the result (StepStats::ranks) when the job has at most
    /// this many rank-steps (ranks x steps); beyond, each rank keeps its `slowestRankSteps`
    /// slowest with its statistics (docs/analysis.md, "Steps"), so that the result does not grow
    /// with ranks x steps. SIZE_MAX: always every step.
    size_t maxRankStepItems = 100'000;
    size_t slowestRankSteps = 10;
};

/// Per-rank facts gathered during the scan that the advice rules use as evidence.
struct RankFacts {
    int64_t commCalls = 0, smallCommCalls = 0, smallCommNs = 0;   ///< bytes < 64 KiB
    int64_t smallCommWaitNs = 0; ///< of smallCommNs: waiting for late partners (wait states)
    /// Each small call at its name's 10th-percentile duration, summed: the most packing or
    /// fusing them can remove (families/communication/small_call_floor.hpp)
    int64_t smallCommFloorNs = 0;
    /// POSIX/MPI-IO data calls (read/write family) on application data files; small: < 64 KiB
    int64_t ioCalls = 0, smallIoCalls = 0, smallIoNs = 0;
    int64_t ioBytes = 0;
    int64_t dataIoExposedNs = 0; ///< exposed I/O time spent on application data files
    int64_t syncCalls = 0, syncNs = 0;
    int64_t kernels = 0, shortKernels = 0, kernelNs = 0;          ///< short: < 10 us
    int64_t fp32GemmKernels = 0, fp32GemmNs = 0;
    int64_t pageableCopies = 0, pageableCopyNs = 0;
    int64_t syncCopies = 0, syncCopyNs = 0;                       ///< blocking cudaMemcpy calls
    int64_t gpuActiveBegin = 0, gpuActiveEnd = 0;                 ///< first/last GPU activity
    int64_t gpuGaps = 0, gpuGapNs = 0;                            ///< gaps inside the active span
    int64_t shortGpuGaps = 0, shortGpuGapNs = 0;                  ///< gaps < 20 us
    int64_t largeCollectives = 0, largeCollectiveBytes = 0;       ///< calls moving >= 1 MiB
    int64_t largeCollectiveTransferNs = 0;                        ///< their duration minus wait
    std::map<std::string, std::vector<int64_t>> examples;         ///< up to 3 event ids per fact
};

struct RankBreakdown {
    int64_t rank = 0;
    int64_t processId = 0;
    int64_t pid = 0;
    std::string host;
    std::string cwd;           ///< working directory its process started in; empty = unknown
    bool gpu = false;          ///< GPU reference timeline (the rank has GPU stream tracks)
    int64_t windowNs = 0;      ///< length of the rank's window (the sum of the exclusive classes)
    int64_t activeNs = 0;      ///< part of the window the process existed in
    int64_t exclusive[kTimeClassCount] = {}; ///< by TimeClass, sums to windowNs
    int64_t commTotalNs = 0, commOverlappedNs = 0;
    int64_t ioTotalNs = 0, ioOverlappedNs = 0;
    int64_t memoryTotalNs = 0, syncTotalNs = 0;
    int64_t setupTotalNs = 0;  ///< set-up calls on any thread of the rank, in the window
    int64_t gpuIdleNs = 0;     ///< GPU ranks: active time with no GPU activity at all
    /// The part of the window the program computes in: from the end of its MPI_Init to the start
    /// of its MPI_Finalize (the window's ends where it has none). POP metrics use it unless the
    /// report includes set-up (docs/analysis.md, "POP metrics").
    int64_t regionBegin = 0, regionEnd = 0;
    int64_t regionNs = 0;                          ///< window time inside the region
    int64_t regionExclusive[kTimeClassCount] = {}; ///< the breakdown inside the region
    int64_t waitNs = 0;        ///< time waiting for late partners (wait states)
    /// Its blocking waits for its own workers (ProcessEntry::waitedForNs, summed): part of its
    /// io and sync time.
    int64_t workerWaitNs = 0;
    int64_t transferNs = 0;    ///< exposed communication minus wait (clamped at 0)
    int64_t events = 0;
    /// The rank stopped recording here (a thread its breakdown stands on could not record any
    /// more: full disk, quota, buffer limit); its window ends at this ts. Empty = it did not.
    std::optional<int64_t> recordingStoppedTs;
    std::string stopReason; ///< thread.stop_reason of that thread
    std::vector<uint8_t> overview; ///< dominant TimeClass per overview bucket
    RankFacts facts;
    int64_t ns(TimeClass c) const { return exclusive[int(c)]; }
};

struct JobSummary {
    int64_t windowBegin = 0, windowEnd = 0; ///< the job window (hull of the rank windows)
    int64_t wallNs = 0;                      ///< windowEnd - windowBegin
    int64_t rankCount = 0, gpuRankCount = 0, events = 0;
    int64_t totalNs = 0;                     ///< sum of the ranks' windowNs
    int64_t exclusive[kTimeClassCount] = {}; ///< sums over ranks
    int64_t commTotalNs = 0, commOverlappedNs = 0, ioTotalNs = 0, ioOverlappedNs = 0;
    int64_t setupTotalNs = 0;
    double pct(TimeClass c) const { return totalNs > 0 ? 100.0 * double(exclusive[int(c)]) / double(totalNs) : 0; }
};

struct PopMetrics {
    double loadBalance = 0, communicationEfficiency = 0, serialisationEfficiency = 0,
           transferEfficiency = 0, parallelEfficiency = 0;
    int64_t runtimeNs = 0, idealRuntimeNs = 0, avgUsefulNs = 0, maxUsefulNs = 0;
    /// What the metrics were computed on: "init_to_finalize" (each rank's region between MPI_Init
    /// and MPI_Finalize) or "window" (the whole window, set-up included).
    std::string region = "window";
};

/// Event id -> the wait inside that call: a flat table sorted by event id (16 bytes an entry;
/// a std::map took four times that for every call that waited). Filled with add(), then
/// finish() sorts it and sums the waits of an id added more than once.
class EventWaits {
public:
    void add(int64_t eventId, int64_t ns) { m_items.emplace_back(eventId, ns); }
    /// Adds `other`'s entries (before finish()).
    void merge(const EventWaits& other) { m_items.insert(m_items.end(), other.m_items.begin(), other.m_items.end()); }
    void finish();
    /// The wait of `eventId`, 0 when it did not wait.
    int64_t of(int64_t eventId) const;
    /// As of(), but an id without a wait throws std::out_of_range (as std::map::at).
    int64_t at(int64_t eventId) const;
    size_t size() const { return m_items.size(); }
    bool empty() const { return m_items.empty(); }
    void release() { std::vector<std::pair<int64_t, int64_t>>().swap(m_items); }

private:
    std::vector<std::pair<int64_t, int64_t>> m_items; ///< (event id, wait ns)
};

/// One collective call of one rank (input of the wait-state analysis).
struct CollectiveCall {
    int64_t rank = 0, communicatorId = 0, seq = 0, ts = 0, end = 0, bytes = -1, nameId = 0,
            eventId = 0;
};
/// A job's collective calls: a deque, which grows without moving what it holds (the calls are
/// a large share of the analysis's memory; a vector would hold two copies while growing).
using CollectiveCalls = std::deque<CollectiveCall>;

/// One blocking-or-not point-to-point call (input of the late sender/receiver analysis).
struct P2pCall {
    int64_t rank = 0, peer = 0, tag = -1, ts = 0, end = 0, bytes = -1, eventId = 0;
    bool send = false;     ///< send side (else receive)
    bool blocking = false; ///< the call returns only when the transfer can complete
    bool synchronous = false;  ///< non-blocking synchronous send (MPI_Issend): completes only
                               ///< once the receive has started
    bool sendrecv = false; ///< a half of an MPI_Sendrecv(_replace): posted and completed by
                           ///< that one call (waitEventId = eventId)
    /// Counted among the rank's small calls (RankFacts::smallCommCalls): this call itself, and
    /// the call that completed it; their waits are set apart from the small calls' time.
    bool small = false, waitSmall = false;
    int64_t communicatorId = -1; ///< communicator.id; -1 = unknown (see computeWaitStates)
    /// Non-blocking calls: the wait or test that completed the request (waitEventId 0 = none).
    int64_t waitEventId = 0, waitTs = 0, waitEnd = 0;
};

struct RankWait {
    int64_t rank = 0;
    int64_t collectiveWaitNs = 0, lateSenderNs = 0, lateReceiverNs = 0;
    /// In loops of unsuccessful MPI_Iprobe / MPI_Improbe polls (events folded with count > 1):
    /// waiting for a message nobody had sent yet, for whom is unknown (MUMPS's workers probe for
    /// work while rank 0 orders the matrix). Loops of MPI_Test* or CQ polls stay transfer: the
    /// rank's own request may be moving data there.
    int64_t pollingNs = 0;
    int64_t total() const { return collectiveWaitNs + lateSenderNs + lateReceiverNs + pollingNs; }
};

struct Straggler {
    int64_t rank = 0;
    int64_t timesLast = 0;        ///< collective instances it entered last (others waited)
    int64_t instances = 0;        ///< complete instances it took part in
    int64_t inflictedWaitNs = 0;  ///< others' wait attributed to it (collectives + messages)
    int64_t inflictedInCollectivesNs = 0; ///< the part in collectives (the rest: its late sends and receives)
    int64_t maxInflictedNs = 0;   ///< largest single instance
    int64_t exampleEventId = 0;   ///< its event in the worst instance
};

struct WaitStates {
    int64_t completeInstances = 0, incompleteInstances = 0;
    int64_t matchedMessages = 0, unmatchedMessages = 0;
    int64_t collectiveWaitNs = 0, lateSenderNs = 0, lateReceiverNs = 0;
    int64_t pollingNs = 0;              ///< RankWait::pollingNs, all ranks
    std::vector<RankWait> perRank;      ///< by rank
    std::vector<Straggler> stragglers;  ///< inflicted wait descending; only ranks with > 0
    /// Per call event id: the wait measured inside it, for every call that waited (a collective
    /// call, a blocking point-to-point call, or the wait / MPI_Sendrecv that completed late
    /// requests). Used by the bandwidth and small-message facts while the ranks are combined,
    /// then released (it has an entry per waiting call).
    EventWaits waitByEvent;
};

struct Step {
    int64_t index = 0, begin = 0, end = 0;
    int64_t durNs = 0;     ///< the slowest rank's duration of this step
    int64_t spreadNs = 0;  ///< max minus min per-rank duration of this step
    /// From the step's communication kernels matched across ranks (docs/analysis.md, "Wait
    /// states"): the rank the others waited for most in this step (-1: none), and that wait.
    int64_t stragglerRank = -1;
    int64_t stragglerWaitNs = 0;
};

/// One rank's step i: its own range (or collective-pattern interval) and, for steps from ranges,
/// the rank's exclusive breakdown inside it.
struct RankStep {
    int64_t index = 0; ///< the rank's step number (its place among the rank's steps)
    int64_t begin = 0, end = 0;
    bool hasBreakdown = false; ///< steps from ranges (known before the pass); not collectives
    int64_t exclusive[kTimeClassCount] = {}; ///< by TimeClass, inside [begin, end) ∩ window
    int64_t gpuIdleNs = 0;                   ///< GPU ranks: no GPU activity of any kind
    /// Where in the step its last long communication kernel starts (0 = the step's begin, 1 = its
    /// end; -1: none): a rank that reaches the exchange late has a larger fraction.
    double commStartFraction = -1;
    int64_t durNs() const { return end - begin; }
};

/// Step-time variance of one rank (population statistics of its steps' durations).
struct RankSteps {
    int64_t rank = 0;
    /// Its steps by index: all of them, or its slowest when the job has too many rank-steps
    /// (StepStats::slowestPerRank).
    std::vector<RankStep> steps;
    int64_t count = 0; ///< its steps (listed or not)
    int64_t meanNs = 0, minNs = 0, maxNs = 0, stddevNs = 0;
};

struct StepStats {
    std::string source; ///< "range:<name>", "collectives:<period>" or "" when none found
    /// Why: "profiler_step" (Kineto's ProfilerStep#N), "option" (--steps), "tiling" (a periodic
    /// range family tiling most of every rank's activity), "collectives", or "" (no steps).
    std::string basis;
    std::string reason; ///< for people: "ProfilerStep (profiler steps)", "range X (tiles 92% ...)"
    double tiling = 0;  ///< range families: the smallest share of a rank's activity they cover
    std::vector<Step> steps;
    int64_t meanNs = 0, minNs = 0, maxNs = 0, stddevNs = 0;
    double cv = 0; ///< stddev / mean
    std::vector<RankSteps> ranks; ///< by rank: its steps and their statistics
    /// 0: every rank lists every step; else each rank lists only its this many slowest (the job
    /// has more than AnalysisOptions::maxRankStepItems rank-steps, rankSteps in all).
    int64_t slowestPerRank = 0;
    int64_t rankSteps = 0;      ///< the ranks' steps, summed
    size_t rankStepLimit = 0;   ///< the AnalysisOptions::maxRankStepItems it was held to
};

/// Which window the analysis used and why (the default is chosen from the trace).
struct WindowChoice {
    /// "steps", "activity" (first to last activity), "whole" (the whole run: --window all, or a
    /// capture whose processes' lives are the recording), "time" (T0:T1), "range" (range:NAME).
    std::string basis = "whole";
    std::string reason;          ///< for people, e.g. "steps 0-7 (ProfilerStep)"
    int64_t recordedBegin = 0, recordedEnd = 0; ///< the whole recorded span of the ranks
    int64_t firstStep = -1, lastStep = -1;      ///< basis "steps": the steps it spans
};

enum class Severity : uint8_t { Info, Warning, Critical };
const char* severityName(Severity s);
/// Parses info|warning|critical; false if unknown.
bool parseSeverity(const std::string& text, Severity& out);

struct Evidence {
    std::string key;
    double value = 0;
    std::string unit; ///< ns, pct, count, bytes, ratio, bytes_per_s
};

struct Finding {
    std::string id;
    std::string title;
    Severity severity = Severity::Info;
    std::vector<int64_t> ranks;
    std::vector<Evidence> evidence;
    std::vector<int64_t> eventIds; ///< example events behind the evidence
    int64_t estimatedGainNs = 0;   ///< upper bound of runtime saved by this change alone
    /// The part of estimatedGainNs no finding with a larger gain claims already (the same rank's
    /// time counted once); the findings' exclusive gains sum to at most the runtime.
    int64_t exclusiveGainNs = 0;
    std::string suggestion;
};

/// A top-N row: a kernel, collective, file, ...
/// What a file is to the program (analyzer/src/file_class.hpp gives the rules): its own data
/// first; the rest is start-up, system and inter-process traffic.
enum class FileClass : uint8_t { Data, Runtime, PseudoFs, Device, Ipc, Unknown };
inline constexpr int kFileClassCount = 6;
/// "data", "runtime", "pseudo_fs", "device", "ipc", "unknown"
const char* fileClassName(FileClass c);

struct TopItem {
    std::string name;
    int64_t count = 0, totalNs = 0, maxNs = 0, bytes = 0;
    std::optional<FileClass> fileClass; ///< files only
};

/// I/O calls (class io) of the whole job on the files of one class.
struct FileClassIo {
    FileClass fileClass = FileClass::Data;
    int64_t files = 0, calls = 0, ns = 0, bytes = 0;
};

struct DataWarning {
    std::string name;
    int64_t count = 0;
    std::string message;
};

/// Event rows of the trace the analysis could not use as they are (a damaged or hand-edited
/// trace): counted, each also listed as a data-quality warning, never dropped silently.
struct UnusedRows {
    int64_t negativeDuration = 0; ///< dur < 0: read as an instant (dur 0)
    int64_t outsideRun = 0;       ///< starts before or ends after its rank's run: part not counted
    int64_t unknownTrack = 0;     ///< track_id names no track: never read
    int64_t timeOutOfRange = 0;   ///< |ts| or |dur| of 2^62 ns or more: skipped
    int64_t total() const { return negativeDuration + outsideRun + unknownTrack + timeOutOfRange; }
};

/// A data family's own result (families/<name>/), which its report section writes. Families
/// whose results have no place among the core's keep them here under their name.
struct FamilySection {
    virtual ~FamilySection() = default;
};

/// What a process is to the job (docs/analysis.md, "Process roles"): a rank; the main process
/// of a program without ranks; a worker (a process a rank or main process started: forked
/// data-loader, I/O helper); a launcher or daemon (mpirun, orted, prted, torchrun, srun); other
/// (not a rank and started by none: a wrapper script around the launcher).
enum class ProcessRole : uint8_t { Rank, Main, Worker, Launcher, Other };
/// "rank", "main", "worker", "launcher", "other"
const char* processRoleName(ProcessRole r);

/// One process of the trace with its role. Ranks and main processes are analysed in
/// Analysis::ranks; workers and others have their own breakdown here (breakdown.rank = the
/// unit they belong to, else -1). Launchers are not analysed.
struct ProcessEntry {
    int64_t processId = 0, pid = 0;
    std::optional<int64_t> ppid;
    std::string host, command;
    ProcessRole role = ProcessRole::Other;
    std::optional<int64_t> parentPid;  ///< the recorded parent's pid
    std::optional<int64_t> unit;       ///< the rank (or main-process number) it is or belongs to
    std::optional<RankBreakdown> breakdown; ///< workers and others only
    /// Its parent's blocking calls waiting for it: waitpid/wait4 that reaped it, reads of a pipe
    /// or socket it wrote to. Counted in the parent's io/sync time, never its compute.
    int64_t waitedForNs = 0;
    int64_t waitedForCalls = 0;
};

struct Analysis {
    std::string tracePath;
    WindowSpec window;
    WindowChoice windowChoice;
    JobSummary summary;
    std::vector<RankBreakdown> ranks; ///< by rank
    std::vector<ProcessEntry> processes; ///< every process, in process-table order
    /// At least 2 ranks with a rank source: the cross-rank analyses (POP, load imbalance,
    /// stragglers) apply. Never for the processes of a program without ranks.
    bool crossRank = false;
    PopMetrics pop;
    WaitStates waits;
    StepStats steps;
    std::vector<Finding> findings; ///< by estimated gain, descending
    std::vector<TopItem> topKernels, topCollectives;
    /// Every outermost communication call (MPI, NCCL API, sockets, verbs) by name: where the
    /// communication time went, collective or not (mpiP's aggregate time).
    std::vector<TopItem> topCommunication;
    /// Every kernel name (GPU kernels and communication kernels), by total time: what a diff
    /// compares (the top lists would turn a kernel that left the top into "gone").
    std::vector<TopItem> kernels;
    /// Application data files first (the top N by time), then the top N of every other class.
    std::vector<TopItem> topFiles;
    std::vector<FileClassIo> ioByClass; ///< classes with I/O calls, in FileClass order
    std::vector<DataWarning> warnings; ///< data-quality problems (trace stats and analysis)
    UnusedRows unusedRows;             ///< event rows the analysis could not use (also in warnings)
    double linkBandwidthBytesPerS = 0; ///< the link between hosts
    /// What the collective-bandwidth rule compares with: the link, or the memory bandwidth of a
    /// copy when every rank runs on one host (collectiveBandwidthBasis "link" or "memory").
    double collectiveBandwidthBytesPerS = 0;
    std::string collectiveBandwidthBasis = "link";
    /// What kind of program the trace shows, for the wording of the advice: "mpi" (MPI calls),
    /// "data_parallel" (ranks from torchrun or NCCL without MPI), "processes" (anything else).
    std::string programKind = "processes";
    int64_t findingsGainNs = 0; ///< sum of the findings' exclusive gains, at most pop.runtimeNs
    CounterAnalysis counters;          ///< CPU counters (counters.hpp); present = false without
    RdmaAnalysis rdma;                 ///< RDMA traffic (families/rdma/rdma_analysis.hpp); empty without nic_queue events
    /// The data families' own results by family name (e.g. "openmp"), absent when the trace has
    /// none of their data.
    std::map<std::string, std::shared_ptr<const FamilySection>> sections;
};

} // namespace hpcprof::analyzer
