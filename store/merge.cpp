// SPDX-License-Identifier: MIT
// The merge loop: processes oldest first, the next one read on a second thread while the
// current one is written (SQLite has one writer; at most two processes are in memory). Each
// process: its clock placement, its strings, the data families' converters (family.hpp), its
// threads' events, what it could not record, its process row. The loop never names a family.
#include "hpcprof/store/merge.hpp"

#include <algorithm>
#include <future>
#include <map>

#include "drop_accounting.hpp"
#include "in_flight.hpp"
#include "family.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/tables.hpp"
#include "process_clock.hpp"
#include "process_row.hpp"
#include "process_strings.hpp"
#include "raw_reader.hpp"
#include "thread_events.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Stat;

namespace {

/// One process's raw records, read from its thread files.
struct LoadedProcess {
    std::vector<ThreadRecords> threads;
    RawProblems problems;
};

LoadedProcess loadProcess(const RawProcess& p, const RecordRouting& routing) {
    LoadedProcess out;
    out.threads.reserve(p.threadFiles.size());
    for (const auto& f : p.threadFiles) {
        ThreadRecords t = readThreadFile(f, out.problems, routing);
        if (!t.unusedSpare) out.threads.push_back(std::move(t));
    }
    return out;
}

class Merger {
public:
    Merger(const MergeOptions& o, TraceWriter& w, MergeResult& r,
           std::vector<std::unique_ptr<StoreFamily>> families)
        : m_opt(o), m_w(w), m_result(r), m_families(std::move(families)),
          m_routing(recordRouting(m_families)), m_strings(w), m_events(w) {}

    Status run(std::vector<RawProcess>& procs) {
        if (procs.empty()) return {};
        std::vector<bool> owners = rankOwners(procs);
        m_clock = RunClock::of(procs, owners);
        HPCPROF_RETURN_IF_ERROR(m_w.setMetadata(schema::meta::kTimeOriginRealtimeNs,
                                                std::to_string(m_clock.originRealtime)));
        auto load = [&](size_t i) {
            return std::async(std::launch::async, loadProcess, std::cref(procs[i]), std::cref(m_routing));
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
            if (m_opt.onProgress) m_opt.onProgress("process", int64_t(i + 1), int64_t(procs.size()));
        }
        // What needs every process may read and change events with SQL (RDMA peers): the event
        // rows go into their tables first.
        HPCPROF_RETURN_IF_ERROR(m_w.settleEvents());
        for (auto& family : m_families) HPCPROF_RETURN_IF_ERROR(family->finishRun(m_w, m_result.warnings));
        HPCPROF_RETURN_IF_ERROR(
            m_w.setMetadata(schema::meta::kChunksMappedAhead, std::to_string(m_chunksAhead)));
        HPCPROF_RETURN_IF_ERROR(
            m_w.setMetadata(schema::meta::kChunksMappedOnThread, std::to_string(m_chunksOnThread)));
        return m_w.setMetadata(schema::meta::kClockMethod, m_clock.method(procs));
    }

    std::vector<std::pair<int64_t, StatCounts>>& perProcessStats() { return m_perProcess; }

private:
    using ProcessKey = std::pair<int32_t, int64_t>; // pid, start monotonic ns

    Status convertProcess(const RawProcess& p, LoadedProcess loaded, int64_t processId, bool ownsRank) {
        const raw::ProcessHeader& h = p.header;
        StatCounts stats{};
        auto addStat = [&](Stat s, int64_t n) {
            stats[size_t(s)] += n;
            m_result.stats[size_t(s)] += n;
        };
        const ProcessClock clock(h, m_clock, m_opt.fallbackTscHz);
        std::vector<ThreadRecords>& threads = loaded.threads;
        int64_t incompleteStrings = 0;
        m_strings.beginProcess(h, threads, incompleteStrings);
        addStat(Stat::UnknownStringRefs, incompleteStrings);
        addUnfinished(h, clock, threads, addStat);

        // The families take their records and add their events, in their declared order.
        ProcessContext ctx{m_w,
                           h,
                           clock.converter(),
                           [&clock](uint64_t ticks) { return clock.ticksToTrace(ticks); },
                           [&clock](int64_t ns) { return clock.toTrace(ns); },
                           m_strings.lookup(),
                           addStat,
                           m_result.warnings,
                           fixedString(h.host, sizeof(h.host))};
        std::vector<std::unique_ptr<ProcessConverter>> converters;
        ThreadEvents::Process process{processId, &clock, &m_strings, m_strings.lookup(), {}, addStat};
        for (size_t slot = 0; slot < m_families.size(); ++slot) {
            converters.push_back(m_families[slot]->converter(ctx, int(slot)));
            process.owners.push_back(converters.back().get());
        }
        for (auto& c : converters) c->prepare(threads);

        int64_t lastEnd = clock.toTrace(h.start.monotonicNs);
        ProcessDrops drops;
        for (auto& t : threads) {
            int64_t stoppedTs = t.drops.stoppedTicks ? clock.ticksToTrace(t.drops.stoppedTicks) : 0;
            ThreadRecording recording = drops.addThread(t.drops, stoppedTs);
            HPCPROF_RETURN_IF_ERROR(m_events.write(process, t, recording, lastEnd, m_result.events));
            m_result.threads++;
        }
        for (auto& c : converters) HPCPROF_RETURN_IF_ERROR(c->finish(processId, lastEnd));

        drops.report(h, clock.toTrace(h.start.monotonicNs),
                     [&clock](uint64_t ticks) { return clock.ticksToTrace(ticks); }, p.dir, addStat,
                     m_result.warnings);
        countProblems(h, clock, loaded.problems, addStat);
        return writeProcessRow(p, processId, ownsRank, clock, lastEnd, stats);
    }

    /// The calls the threads were inside when the process was last seen, as unfinished events.
    template <typename AddStat>
    void addUnfinished(const raw::ProcessHeader& h, const ProcessClock& clock,
                       std::vector<ThreadRecords>& threads, const AddStat& addStat) {
        // Most processes end with no call in flight: no pass over their events then.
        auto seen = [&] {
            return lastSeenTs(
                h, threads, [&clock](uint64_t ticks) { return clock.ticksToTrace(ticks); },
                [&clock](int64_t ns) { return clock.toTrace(ns); }, m_opt.stoppedRealtimeNs);
        };
        int64_t torn = 0;
        addStat(Stat::CallsUnfinished, addUnfinishedCalls(threads, seen, torn));
        addStat(Stat::InFlightLinesTorn, torn);
    }

    /// The raw files' problems and the header's diagnostics, in stats and warnings.
    template <typename AddStat>
    void countProblems(const raw::ProcessHeader& h, const ProcessClock& clock, RawProblems& problems,
                       const AddStat& addStat) {
        addStat(Stat::RecordsTorn, problems.tornRecords);
        addStat(Stat::ThreadFilesTruncated, problems.truncatedFiles);
        addStat(Stat::RawTailsIgnored, problems.tailsIgnored);
        addStat(Stat::RawFilesUnreadable, problems.unreadableFiles);
        addStat(Stat::HooksUnresolved, h.hooksUnresolved);
        m_chunksAhead += h.chunksAhead;
        m_chunksOnThread += h.chunksOnThread;
        if (clock.converter().weakCalibration()) addStat(Stat::ClockCalibrationWeak, 1);
        if (!clock.sameHost()) addStat(Stat::RealtimeClockAlignment, 1);
        if (endedAbnormally(h)) addStat(Stat::ProcessesKilled, 1);
        for (auto& m : problems.messages) m_result.warnings.push_back(std::move(m));
    }

    Status writeProcessRow(const RawProcess& p, int64_t processId, bool ownsRank,
                           const ProcessClock& clock, int64_t lastEnd, const StatCounts& stats) {
        const raw::ProcessHeader& h = p.header;
        std::optional<int64_t> parent;
        if (h.parentStartValid)
            if (auto it = m_processIds.find(ProcessKey{h.ppid, h.parentStartNs}); it != m_processIds.end())
                parent = it->second;
        ProcessRow row = processRow(p, processId, ownsRank, clock, lastEnd, parent);
        if (h.version >= 5 && h.cwdStringId != 0)
            if (const std::string* cwd = m_strings.text(h.cwdStringId)) row.cwd = *cwd;
        if (row.rank) m_result.rankProcesses++;
        HPCPROF_RETURN_IF_ERROR(m_w.insertProcess(row));
        m_processIds[ProcessKey{h.pid, h.start.monotonicNs}] = processId;
        m_perProcess.emplace_back(processId, stats);
        m_result.processes++;
        if (endedAbnormally(h))
            m_result.warnings.push_back("process " + std::to_string(h.pid) + " (" + row.exe +
                                        ") did not exit cleanly (killed or crashed): the calls "
                                        "it was inside are unfinished events");
        return m_w.error();
    }

    const MergeOptions& m_opt;
    TraceWriter& m_w;
    MergeResult& m_result;
    std::vector<std::unique_ptr<StoreFamily>> m_families; ///< in prepare order; index = slot
    RecordRouting m_routing;
    RunClock m_clock;
    ProcessStrings m_strings;
    ThreadEvents m_events;
    std::map<ProcessKey, int64_t> m_processIds;
    std::vector<std::pair<int64_t, StatCounts>> m_perProcess;
    uint64_t m_chunksAhead = 0; // provisioning diagnostics, summed over processes (metadata)
    uint64_t m_chunksOnThread = 0;
};

} // namespace

namespace {

/// Why a raw folder with no process folder cannot be merged.
Status noProcessesError(const MergeOptions& options, const RawProblems& problems) {
    if (problems.unreadableFiles > 0)
        return Status::error(options.rawDir.string() + ": no readable process folder (" +
                             std::to_string(problems.unreadableFiles) +
                             " proc-* folders without a valid process.bin: " +
                             problems.messages.front() + ")");
    return Status::error(options.rawDir.string() +
                         ": not a raw capture (no proc-* process folders; a capture is the "
                         "TRACE.raw folder of `hpcprof run --keep-raw`)");
}

/// Adds what listing the raw folder found wrong to the result: counted, and said.
void addListingProblems(RawProblems& problems, MergeResult& result) {
    result.stats[size_t(Stat::RawFilesUnreadable)] += problems.unreadableFiles;
    result.stats[size_t(Stat::AgentDisabled)] += problems.processesWithoutHeader;
    for (auto& m : problems.messages) result.warnings.push_back(std::move(m));
}

/// The trace's metadata and data-quality counters, once every process is in; a trace with a
/// counter above the info level is marked partial.
Status writeSummary(const MergeOptions& options, Merger& merger, TraceWriter& w,
                    MergeResult& result) {
    for (size_t i = 0; i < result.stats.size(); ++i)
        if (result.stats[i] > 0 && schema::kStats[i].severity != schema::Severity::Info)
            result.partial = true;
    w.setMetadata(schema::meta::kSchemaVersion, std::to_string(schema::kSchemaVersion));
    w.setMetadata(schema::meta::kHpcprofVersion, HPCPROF_VERSION);
    w.setMetadata(schema::meta::kCreatedBy, "hpcprof merge");
    w.setMetadata(schema::meta::kCommand, options.command);
    w.setMetadata(schema::meta::kPartial, result.partial ? "true" : "false");
    Status s = w.writeStats(result.stats, merger.perProcessStats());
    result.io = w.ioGroups();
    return s;
}

} // namespace

Result<MergeResult> mergeRawDirectory(const MergeOptions& options) {
    // Checked before the raw data is read; the pending output removes its temporary file on
    // every failure below (disk full included), so `hpcprof merge` can be retried.
    auto pending = schema::PendingOutput::begin(options.output, options.force);
    if (!pending) return pending.status();
    RawProblems problems;
    auto procs = listProcesses(options.rawDir, problems);
    if (!procs) return procs.status();
    if (procs->empty() && options.requireProcesses) return noProcessesError(options, problems);

    MergeResult result;
    {
        auto writer = TraceWriter::create(pending->path(), TraceWriterOptions{options.eventPages});
        if (!writer) return writer.status();
        TraceWriter& w = writer.value();
        auto families = storeFamilies();
        if (!families) return families.status();
        Merger merger(options, w, result, std::move(families.value()));
        Status s = merger.run(procs.value());
        addListingProblems(problems, result);
        if (s.ok()) s = writeSummary(options, merger, w, result);
        if (s.ok() && options.onProgress) options.onProgress("indexes", 0, 0);
        if (s.ok()) s = w.finish();
        if (!s.ok())
            return Status::error("cannot write trace " + options.output.string() + ": " +
                                 s.message());
    }
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::store
