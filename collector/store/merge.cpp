// SPDX-License-Identifier: MIT
#include "merge.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <unordered_map>

#include "clock_mapping.hpp"
#include "communication_fields.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/tables.hpp"
#include "counter_records.hpp"
#include "device_records.hpp"
#include "nesting_depth.hpp"
#include "rdma_peers.hpp"
#include "rdma_records.hpp"
#include "raw_reader.hpp"

namespace hpcprof::store {

namespace fs = std::filesystem;
namespace raw = schema::raw;
using schema::Stat;

namespace {

std::string_view endStateName(raw::EndState s) {
    switch (s) {
    case raw::EndState::Exited: return "exited";
    case raw::EndState::QuickExit: return "quick_exit";
    case raw::EndState::Exec: return "exec";
    case raw::EndState::Aborted: return "aborted";
    case raw::EndState::Running: break;
    }
    return "abnormal";
}

std::string fixedString(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

/// thread.stop_reason of a stopping DropReason.
std::string_view stopReasonName(raw::DropReason r) {
    switch (r) {
    case raw::DropReason::BufferLimit: return "buffer_limit";
    case raw::DropReason::DiskFull: return "disk_full";
    case raw::DropReason::Quota: return "quota";
    case raw::DropReason::FileError: return "file_error";
    default: return "";
    }
}

/// What a user reads about a stop reason, and what to do about it.
std::string stopReasonText(raw::DropReason r, int32_t err) {
    std::string cause;
    switch (r) {
    case raw::DropReason::BufferLimit:
        return "the per-thread limit HPCPROF_THREAD_BUFFER_MB was reached (raise it)";
    case raw::DropReason::DiskFull: cause = "the raw directory's filesystem was full"; break;
    case raw::DropReason::Quota: cause = "the disk quota was exhausted"; break;
    default: cause = "a raw file could not grow"; break;
    }
    if (err > 0) cause += std::string(" (") + std::strerror(err) + ")";
    return cause + ": free space there or write the trace elsewhere (-o)";
}

/// Records a process could not record, by DropReason, and the threads that stopped recording:
/// the thread headers' counts plus the process header's (threads without a file; before format
/// 4, every drop).
struct ProcessDrops {
    std::array<int64_t, raw::kDropReasonCount> byReason{};
    int64_t total = 0;
    int64_t threadsStopped = 0;
    int64_t firstStopTs = INT64_MAX; ///< trace time of the earliest stop
    raw::DropReason firstReason = raw::DropReason::None;
    int32_t firstErrno = 0;

    void addThread(const ThreadDrops& d, int64_t stoppedTs) {
        for (size_t i = 0; i < d.dropped.size(); ++i) byReason[i] += int64_t(d.dropped[i]);
        total += int64_t(d.total());
        if (!d.stoppedTicks) return;
        ++threadsStopped;
        if (stoppedTs < firstStopTs) {
            firstStopTs = stoppedTs;
            firstReason = d.stopReason;
            firstErrno = d.stopErrno;
        }
    }
};

std::string commandLine(const raw::ProcessHeader& h) {
    std::string out(h.cmdline, std::min<size_t>(h.cmdlineLength, sizeof(h.cmdline)));
    while (!out.empty() && out.back() == 0) out.pop_back();
    std::replace(out.begin(), out.end(), '\0', ' ');
    return out;
}

/// Identity of a process folder, so forked children can find their parent's strings.
using ProcessKey = std::pair<int32_t, int64_t>; // pid, start monotonic ns

/// Decides which process owns each rank when several claim it from the environment (a wrapper
/// script and the program it starts both inherit OMPI_COMM_WORLD_RANK): the one MPI confirmed,
/// else the one with the most records, else the earliest. The others become non-rank processes.
std::vector<bool> rankOwners(const std::vector<RawProcess>& procs) {
    std::vector<bool> owner(procs.size(), false);
    std::map<int32_t, size_t> best;
    auto score = [&](size_t i) {
        int64_t records = 0;
        std::error_code ec;
        for (const auto& f : procs[i].threadFiles) records += int64_t(fs::file_size(f, ec) / 64);
        bool mpi = std::string_view(procs[i].header.rankSource) == "MPI";
        return std::pair<int, int64_t>(mpi ? 1 : 0, records);
    };
    for (size_t i = 0; i < procs.size(); ++i) {
        int32_t r = procs[i].header.rank;
        if (r < 0) continue;
        auto [it, inserted] = best.try_emplace(r, i);
        if (!inserted && score(i) > score(it->second)) it->second = i;
    }
    for (const auto& [rank, i] : best) owner[i] = true;
    return owner;
}

/// One process's raw records, read from its thread files.
struct LoadedProcess {
    std::vector<ThreadRecords> threads;
    RawProblems problems;
};

LoadedProcess loadProcess(const RawProcess& p) {
    LoadedProcess out;
    out.threads.reserve(p.threadFiles.size());
    for (const auto& f : p.threadFiles) {
        ThreadRecords t = readThreadFile(f, out.problems);
        if (!t.unusedSpare) out.threads.push_back(std::move(t));
    }
    return out;
}

class Merger {
public:
    Merger(const MergeOptions& o, TraceWriter& w, MergeResult& r) : m_opt(o), m_w(w), m_result(r) {}

    Status run(std::vector<RawProcess>& procs) {
        if (procs.empty()) return {};
        const auto& ref = procs.front().header; // earliest start: defines ts 0
        m_refHost = fixedString(ref.host, sizeof(ref.host));
        m_originMono = ref.start.monotonicNs;
        m_originRealtime = ref.start.realtimeNs;
        HPCPROF_RETURN_IF_ERROR(m_w.setMetadata(schema::meta::kTimeOriginRealtimeNs,
                                                std::to_string(m_originRealtime)));
        std::vector<bool> owners = rankOwners(procs);
        for (size_t i = 0; i < procs.size(); ++i) {
            const auto& h = procs[i].header;
            if (owners[i] && h.rank == 0 && h.syncInit.valid) {
                bool same = fixedString(h.host, sizeof(h.host)) == m_refHost;
                m_mpiReference = true;
                m_mpiReferenceHost = fixedString(h.host, sizeof(h.host));
                m_mpiReferenceOffset = same ? -m_originMono
                                            : (h.start.realtimeNs - h.start.monotonicNs) -
                                                  m_originRealtime;
            }
        }
        // Pipeline: the next process's files are read and decoded on a second thread while this
        // one is inserted (SQLite has one writer). At most two processes are in memory at once.
        auto load = [&](size_t i) {
            return std::async(std::launch::async, loadProcess, std::cref(procs[i]));
        };
        std::future<LoadedProcess> next = load(0);
        for (size_t i = 0; i < procs.size(); ++i) {
            LoadedProcess current = next.get();
            if (i + 1 < procs.size()) next = load(i + 1);
            Status s = convertProcess(procs[i], std::move(current), int64_t(i + 1), owners[i]);
            if (!s.ok()) {
                if (next.valid()) next.wait();
                return s;
            }
        }
        bool anyRealtime = false;
        for (const auto& p : procs) anyRealtime |= fixedString(p.header.host, 64) != m_refHost;
        std::string method = m_mpiReference ? "mpi_pingpong"
                             : anyRealtime  ? "monotonic+realtime"
                                            : "monotonic";
        HPCPROF_RETURN_IF_ERROR(m_counterSummary.finish(m_w, m_result.warnings));
        // Needs every process's queue pairs, so it runs once they are all in.
        if (auto peers = deriveRdmaPeers(m_w.db()); !peers.ok()) return peers.status();
        HPCPROF_RETURN_IF_ERROR(
            m_w.setMetadata(schema::meta::kChunksMappedAhead, std::to_string(m_chunksAhead)));
        HPCPROF_RETURN_IF_ERROR(
            m_w.setMetadata(schema::meta::kChunksMappedOnThread, std::to_string(m_chunksOnThread)));
        return m_w.setMetadata(schema::meta::kClockMethod, method);
    }

    std::vector<std::pair<int64_t, StatCounts>>& perProcessStats() { return m_perProcess; }

private:
    void add(StatCounts& c, Stat s, int64_t n) {
        c[size_t(s)] += n;
        m_result.stats[size_t(s)] += n;
    }

    /// Counts what the process could not record, by reason, and tells the user which threads
    /// stopped recording, when and why.
    template <typename ToTrace, typename TicksToTrace>
    void addDrops(StatCounts& stats, const raw::ProcessHeader& h, ProcessDrops& drops,
                  const ToTrace& toTrace, const TicksToTrace& toTraceTicks, const fs::path& dir) {
        int64_t withoutFile = int64_t(h.droppedRecords);
        drops.total += withoutFile;
        int64_t threadsWithoutFile = 0;
        raw::DropReason withoutFileReason = raw::DropReason::None;
        if (h.version >= 4) {
            threadsWithoutFile = h.threadsWithoutFile;
            uint64_t most = 0;
            for (uint32_t r = 0; r < raw::kDropReasonCount; ++r) {
                drops.byReason[r] += int64_t(h.droppedWithoutFile[r]);
                if (raw::stopsThread(raw::DropReason(r)) && h.droppedWithoutFile[r] > most) {
                    most = h.droppedWithoutFile[r];
                    withoutFileReason = raw::DropReason(r);
                }
            }
        }
        add(stats, Stat::RecordsDropped, drops.total);
        add(stats, Stat::RecordsDroppedDiskFull, drops.byReason[size_t(raw::DropReason::DiskFull)]);
        add(stats, Stat::RecordsDroppedQuota, drops.byReason[size_t(raw::DropReason::Quota)]);
        add(stats, Stat::RecordsDroppedFileError,
            drops.byReason[size_t(raw::DropReason::FileError)]);
        add(stats, Stat::RecordsDroppedBufferLimit,
            drops.byReason[size_t(raw::DropReason::BufferLimit)]);
        add(stats, Stat::ThreadsStoppedRecording, drops.threadsStopped);
        add(stats, Stat::ThreadsWithoutRawFile, threadsWithoutFile);
        std::string where = " (" + dir.filename().string() + ")";
        if (drops.threadsStopped > 0) {
            int64_t startTs = toTrace(h.start.monotonicNs);
            m_result.warnings.push_back(fmt::format(
                "process {}{}: {} thread{} stopped recording, the first {:.3f} s after the "
                "process started, because {}; {} records lost (thread.recording_stopped_ts)",
                h.pid, where, drops.threadsStopped, drops.threadsStopped == 1 ? "" : "s",
                double(drops.firstStopTs - startTs) / 1e9,
                stopReasonText(drops.firstReason, drops.firstErrno), drops.total));
        }
        if (threadsWithoutFile > 0) {
            std::string when;
            if (h.firstDropWithoutFileTicks)
                when = fmt::format(", the first {:.3f} s after the process started",
                                   double(toTraceTicks(h.firstDropWithoutFileTicks) -
                                          toTrace(h.start.monotonicNs)) / 1e9);
            m_result.warnings.push_back(fmt::format(
                "process {}{}: {} thread{} could not create a raw file{}, because {}: their calls "
                "are not in the trace",
                h.pid, where, threadsWithoutFile, threadsWithoutFile == 1 ? "" : "s", when,
                stopReasonText(withoutFileReason, 0)));
        }
    }

    /// The string id of an op's name, interned on first use (a table by raw op id: every event
    /// needs it).
    int64_t opName(uint16_t op, const schema::OpInfo& info) {
        if (op >= m_opNames.size()) m_opNames.resize(size_t(op) + 1, 0);
        int64_t& id = m_opNames[op];
        if (id == 0) id = m_w.internString(info.name);
        return id;
    }

    Status convertProcess(RawProcess& p, LoadedProcess loaded, int64_t processId, bool ownsRank) {
        const raw::ProcessHeader& h = p.header;
        StatCounts stats{};
        RawProblems& problems = loaded.problems;
        TickConverter clock(h, m_opt.fallbackTscHz);
        std::string host = fixedString(h.host, sizeof(h.host));
        bool sameHost = host == m_refHost;
        // Same host: one monotonic clock, exact. Elsewhere: wall clock at process start.
        int64_t offset = sameHost ? -m_originMono
                                  : (h.start.realtimeNs - h.start.monotonicNs) - m_originRealtime;
        // MPI ranks measured their clock's offset to rank 0: put them on rank 0's clock. On rank
        // 0's host the monotonic clock is shared and exact; a measured offset within the round
        // trip there is measurement noise, not a clock difference, and is not applied.
        bool sharesRank0Clock = host == m_mpiReferenceHost &&
                                std::llabs(h.syncInit.offsetNs) <= h.syncInit.rttNs;
        bool mpiAligned = m_mpiReference && h.syncInit.valid && !sharesRank0Clock;
        if (mpiAligned) {
            clock.alignToReference(h.syncInit, &h.syncFinal);
            offset = m_mpiReferenceOffset;
        }
        // The two conversions to trace time every record of this process goes through: raw
        // ticks (event times) and CLOCK_MONOTONIC ns (header and GPU/NVTX clock pairs).
        auto ticksToTrace = [&](uint64_t ticks) { return clock.toLocalNs(ticks) + offset; };
        auto toTrace = [&](int64_t localNs) {
            return (mpiAligned ? localNs - clock.offsetAt(localNs) : localNs) + offset;
        };

        // Read the whole process (bounded by one process's data): strings first, then events.
        std::vector<ThreadRecords>& threads = loaded.threads;
        m_objectCache.clear();
        auto& strings = m_stringMaps[ProcessKey{h.pid, h.start.monotonicNs}];
        for (auto& t : threads) {
            for (auto& s : t.strings) strings[s.id] = {m_w.internString(s.text), std::move(s.text)};
            t.strings.clear();
            add(stats, Stat::UnknownStringRefs, t.incompleteStrings);
        }
        const auto* parentStrings = parentMap(h);
        StringLookup stringLookup = [&](uint32_t id) -> const std::string* {
            if (auto it = strings.find(id); it != strings.end()) return &it->second.text;
            if (parentStrings)
                if (auto it = parentStrings->find(id); it != parentStrings->end())
                    return &it->second.text;
            return nullptr;
        };
        DeviceRecords device(m_w, h, clock, toTrace, stringLookup, // GPU, NVTX, NCCL (issue 5)
            [&](Stat s, int64_t n) { add(stats, s, n); }, m_result.warnings);
        device.prepare(threads);
        CounterRecords counters(m_w, ticksToTrace,
            stringLookup, [&](Stat s, int64_t n) { add(stats, s, n); }, m_counterSummary, host);
        counters.prepare(threads); // CPU counters (issue 8)
        RdmaRecords rdma(m_w, ticksToTrace, stringLookup,
            [&](Stat s, int64_t n) { add(stats, s, n); }); // RDMA verbs (issue 7)
        rdma.prepare(threads);

        int64_t lastEnd = toTrace(h.start.monotonicNs);
        // MPI non-blocking requests: posting event by request number, and the completions of
        // waits/tests, resolved once every thread is in (a request may complete on another thread).
        std::unordered_map<uint32_t, int64_t> postedRequests;
        std::vector<std::pair<MpiCompletionRow, uint32_t>> completions; // row, request number
        ProcessDrops drops;
        for (auto& t : threads) {
            add(stats, Stat::MpiCompletionsUnattached, t.unattachedCompletions);
            ThreadRecording recording;
            recording.recordsDropped = int64_t(t.drops.total());
            if (t.drops.stoppedTicks) {
                recording.stoppedTs = ticksToTrace(t.drops.stoppedTicks);
                recording.stopReason = std::string(stopReasonName(t.drops.stopReason));
            }
            drops.addThread(t.drops, recording.stoppedTs.value_or(0));
            int64_t threadId = m_w.insertThread(processId, t.tid, t.name, recording);
            std::string trackName = t.name.empty() ? "thread " + std::to_string(t.tid)
                                                   : t.name + " (" + std::to_string(t.tid) + ")";
            int64_t trackId = m_w.insertTrack(processId, threadId, "cpu_thread", trackName, {}, {});
            m_result.threads++;
            // Records are written when calls end; the track wants start order (stable for ties).
            // (Usually already in order: only nested calls, e.g. in signal handlers, are not.)
            auto byStart = [](const RawEvent& a, const RawEvent& b) { return a.start < b.start; };
            if (!std::is_sorted(t.events.begin(), t.events.end(), byStart))
                std::stable_sort(t.events.begin(), t.events.end(), byStart);
            NestingDepth depth;
            int64_t first = 0, last = 0, count = 0;
            for (const RawEvent& e : t.events) {
                const schema::OpInfo* info = schema::findOp(e.op);
                if (!info) {
                    add(stats, Stat::UnknownOps, 1);
                    continue;
                }
                EventRow row;
                row.trackId = trackId;
                row.ts = ticksToTrace(e.start);
                row.dur = clock.toDurationNs(e.start, e.end);
                if (row.dur < 0) {
                    add(stats, Stat::NegativeDurations, 1);
                    row.dur = 0;
                }
                row.categoryId = int64_t(info->category);
                std::vector<PendingArg> args;
                row.nameId = opName(e.op, *info);
                row.depth = depth.next(row.ts, row.dur);
                if (e.bytes >= 0) row.bytes = e.bytes;
                if (e.objectId) {
                    std::string_view kind;
                    if (auto obj = resolveObject(strings, parentStrings, e.objectId, kind)) {
                        row.objectId = *obj;
                        row.categoryId = int64_t(effectiveCategory(*info, kind));
                    } else {
                        add(stats, Stat::UnknownStringRefs, 1);
                    }
                }
                EventDetail d;
                if (!applyCommunicationFields(e, *info, stringLookup, m_w, row, d, args))
                    add(stats, Stat::UnknownStringRefs, 1);
                if (e.flags & raw::kFlagHasOffset) d.offset = e.aux;
                if (e.flags & raw::kFlagFailed) {
                    d.errnoValue = e.status;
                    if (e.fd >= 0) d.fd = e.fd;
                }
                if (e.extra) device.decorate(e, row);
                int64_t id = m_w.insertEvent(row, d);
                if (e.extra) device.addArgs(e, id);
                if (RdmaRecords::owns(e)) rdma.addArgs(e, id);
                for (const auto& a : args) {
                    if (a.text.empty()) m_w.insertEventArg(id, a.key, a.value);
                    else m_w.insertEventArg(id, a.key, std::string_view(a.text));
                }
                if (e.flags & raw::kFlagRequest) {
                    // MPI_Startall posted requests seq .. seq + tag - 1; other calls one.
                    int32_t posted = e.op == uint16_t(schema::Op::MpiStartall) ? e.tag : 1;
                    for (int32_t k = 0; k < posted; ++k) postedRequests[e.seq + uint32_t(k)] = id;
                }
                for (uint32_t k = 0; k < e.completionCount; ++k) {
                    const RawCompletion& c = t.completions[e.completionBegin + k];
                    MpiCompletionRow cr;
                    cr.eventId = id;
                    cr.request = c.request;
                    cr.isRecv = c.isRecv;
                    if (c.peer >= 0) cr.peer = c.peer;
                    cr.tag = c.tag;
                    if (c.bytes >= 0) cr.bytes = c.bytes;
                    completions.emplace_back(cr, c.request);
                }
                if (count == 0) first = id;
                last = id;
                ++count;
                lastEnd = std::max(lastEnd, row.ts + row.dur);
            }
            m_result.events += count;
            HPCPROF_RETURN_IF_ERROR(m_w.finishTrack(trackId, first, last, count));
            t.events.clear();
            t.events.shrink_to_fit();
        }

        for (auto& [row, request] : completions) {
            if (auto it = postedRequests.find(request); it != postedRequests.end())
                row.postEventId = it->second;
            m_w.insertMpiCompletion(row);
        }

        HPCPROF_RETURN_IF_ERROR(device.writeGpuTracks(processId, lastEnd));
        HPCPROF_RETURN_IF_ERROR(counters.write(processId));
        HPCPROF_RETURN_IF_ERROR(rdma.writeNicTracks(processId, lastEnd));
        addDrops(stats, h, drops, toTrace, ticksToTrace, p.dir);
        add(stats, Stat::RecordsTorn, problems.tornRecords);
        add(stats, Stat::ThreadFilesTruncated, problems.truncatedFiles);
        add(stats, Stat::RawTailsIgnored, problems.tailsIgnored);
        add(stats, Stat::RawFilesUnreadable, problems.unreadableFiles);
        add(stats, Stat::HooksUnresolved, h.hooksUnresolved);
        m_chunksAhead += h.chunksAhead;
        m_chunksOnThread += h.chunksOnThread;
        if (clock.weakCalibration()) add(stats, Stat::ClockCalibrationWeak, 1);
        if (!sameHost) add(stats, Stat::RealtimeClockAlignment, 1);
        bool abnormal = h.endState == raw::EndState::Running;
        if (abnormal) add(stats, Stat::ProcessesKilled, 1);
        for (auto& m : problems.messages) m_result.warnings.push_back(std::move(m));

        ProcessRow row;
        row.id = processId;
        if (h.rank >= 0 && ownsRank) {
            row.rank = h.rank;
            row.rankSource = fixedString(h.rankSource, sizeof(h.rankSource));
            m_result.rankProcesses++;
        } else if (h.rank >= 0) {
            row.rankSource = "duplicate claim of rank " + std::to_string(h.rank);
        } else {
            row.rankSource = fixedString(h.rankSource, sizeof(h.rankSource));
        }
        if (h.worldSize >= 0) row.worldSize = h.worldSize;
        if (h.localRank >= 0 && row.rank) row.localRank = h.localRank;
        row.host = host;
        row.pid = h.pid;
        row.ppid = h.ppid;
        if (h.parentStartValid) {
            auto it = m_processIds.find(ProcessKey{h.ppid, h.parentStartNs});
            if (it != m_processIds.end()) row.parentProcessId = it->second;
        }
        row.command = commandLine(h);
        row.exe = fixedString(h.exe, sizeof(h.exe));
        row.startTs = toTrace(h.start.monotonicNs);
        row.endTs = abnormal ? lastEnd : std::max(lastEnd, toTrace(h.endMonotonicNs));
        row.endState = std::string(endStateName(h.endState));
        if (!abnormal && h.exitCode >= 0) row.exitCode = h.exitCode;
        row.clockMethod = mpiAligned ? "mpi_pingpong" : sameHost ? "monotonic" : "realtime";
        row.clockOffsetNs = mpiAligned ? offset - clock.offsetAt(h.start.monotonicNs) : offset;
        if (mpiAligned) {
            row.clockDriftPpb = int64_t(clock.driftPerNs() * 1e9);
            int64_t rtt = std::max(h.syncInit.rttNs, h.syncFinal.valid ? h.syncFinal.rttNs : 0);
            row.clockUncertaintyNs = rtt / 2;
        }
        row.rawDir = p.dir.filename().string();
        HPCPROF_RETURN_IF_ERROR(m_w.insertProcess(row));
        m_processIds[ProcessKey{h.pid, h.start.monotonicNs}] = processId;
        m_perProcess.emplace_back(processId, stats);
        m_result.processes++;
        if (abnormal)
            m_result.warnings.push_back("process " + std::to_string(h.pid) + " (" + row.exe +
                                        ") did not exit cleanly (killed or crashed): calls in "
                                        "flight at that moment are missing");
        return m_w.error();
    }

    struct KnownString {
        int64_t id;
        std::string text;
    };
    using StringMap = std::unordered_map<uint32_t, KnownString>;

    const StringMap* parentMap(const raw::ProcessHeader& h) const {
        if (!h.parentStartValid) return nullptr;
        auto it = m_stringMaps.find(ProcessKey{h.ppid, h.parentStartNs});
        return it == m_stringMaps.end() ? nullptr : &it->second;
    }

    std::optional<int64_t> resolveObject(const StringMap& own, const StringMap* parent,
                                         uint32_t localId, std::string_view& kind) {
        // A process uses few objects for many events: classify and intern each id once.
        if (auto it = m_objectCache.find(localId); it != m_objectCache.end()) {
            kind = it->second.kind;
            return it->second.objectId;
        }
        const KnownString* s = nullptr;
        if (auto it = own.find(localId); it != own.end())
            s = &it->second;
        else if (parent) // descriptors inherited through fork carry the parent's ids
            if (auto pit = parent->find(localId); pit != parent->end()) s = &pit->second;
        if (!s) return std::nullopt;
        kind = classifyObject(s->text);
        int64_t objectId = m_w.internObject(s->id, s->text);
        m_objectCache.emplace(localId, ResolvedObject{objectId, kind});
        return objectId;
    }

    struct ResolvedObject {
        int64_t objectId;
        std::string_view kind; // a literal from classifyObject
    };
    /// resolveObject's answers for the process being converted (its string ids are its own).
    std::unordered_map<uint32_t, ResolvedObject> m_objectCache;

    const MergeOptions& m_opt;
    TraceWriter& m_w;
    MergeResult& m_result;
    std::string m_refHost;
    int64_t m_originMono = 0;
    int64_t m_originRealtime = 0;
    std::vector<int64_t> m_opNames; // by raw op id, 0 = not interned yet
    bool m_mpiReference = false;       // rank 0 measured clock offsets (MPI)
    int64_t m_mpiReferenceOffset = 0;  // rank 0's own local-to-trace offset
    std::string m_mpiReferenceHost;
    std::map<ProcessKey, StringMap> m_stringMaps;
    std::map<ProcessKey, int64_t> m_processIds;
    std::vector<std::pair<int64_t, StatCounts>> m_perProcess;
    uint64_t m_chunksAhead = 0; // provisioning diagnostics, summed over processes (metadata)
    uint64_t m_chunksOnThread = 0;
    CounterSummary m_counterSummary;
};

} // namespace

Result<MergeResult> mergeRawDirectory(const MergeOptions& options) {
    // Checked before the raw data is read; the pending output removes its temporary file on
    // every failure below (disk full included), so `hpcprof merge` can be retried.
    auto pending = schema::PendingOutput::begin(options.output, options.force);
    if (!pending) return pending.status();
    RawProblems problems;
    auto procs = listProcesses(options.rawDir, problems);
    if (!procs) return procs.status();
    if (procs->empty() && options.requireProcesses) {
        if (problems.unreadableFiles > 0)
            return Status::error(options.rawDir.string() + ": no readable process folder (" +
                                 std::to_string(problems.unreadableFiles) +
                                 " proc-* folders without a valid process.bin: " +
                                 problems.messages.front() + ")");
        return Status::error(options.rawDir.string() +
                             ": not a raw capture (no proc-* process folders; a capture is the "
                             "TRACE.raw folder of `hpcprof run --keep-raw`)");
    }

    MergeResult result;
    {
        auto writer = TraceWriter::create(pending->path());
        if (!writer) return writer.status();
        TraceWriter& w = writer.value();
        Merger merger(options, w, result);
        Status s = merger.run(procs.value());
        result.stats[size_t(Stat::RawFilesUnreadable)] += problems.unreadableFiles;
        result.stats[size_t(Stat::AgentDisabled)] += problems.processesWithoutHeader;
        for (auto& m : problems.messages) result.warnings.push_back(std::move(m));
        if (s.ok()) {
            for (size_t i = 0; i < result.stats.size(); ++i)
                if (result.stats[i] > 0 && schema::kStats[i].severity != schema::Severity::Info)
                    result.partial = true;
            w.setMetadata(schema::meta::kSchemaVersion, std::to_string(schema::kSchemaVersion));
            w.setMetadata(schema::meta::kHpcprofVersion, HPCPROF_VERSION);
            w.setMetadata(schema::meta::kCreatedBy, "hpcprof merge");
            w.setMetadata(schema::meta::kCommand, options.command);
            w.setMetadata(schema::meta::kPartial, result.partial ? "true" : "false");
            s = w.writeStats(result.stats, merger.perProcessStats());
        }
        if (s.ok()) s = w.finish();
        if (!s.ok())
            return Status::error("cannot write trace " + options.output.string() + ": " +
                                 s.message());
    }
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::store
