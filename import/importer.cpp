// SPDX-License-Identifier: MIT
#include "hpcprof/import/importer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "chrome_reader.hpp"
#include "collective_alignment.hpp"
#include "file_importer.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::import {

namespace fs = std::filesystem;
using schema::Stat;

namespace {

bool isTraceFileName(const std::string& name) {
    auto ends = [&](std::string_view s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    return ends(".json") || ends(".json.gz");
}

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

/// Owns the writer side of an import: names, process ids, ranks, the provisional time origin.
class Session : public ImportSession {
public:
    Session(store::TraceWriter& w, ImportResult& r) : m_w(w), m_result(r) {}

    int32_t nameId(std::string_view name) override {
        // Names repeat all the time: a small direct-mapped cache under a cheap hash (length,
        // first and last bytes) spares hashing long kernel names in full for every event.
        CachedName& c = m_nameCache[quickHash(name) & (kNameCacheSize - 1)];
        if (c.id >= 0 && c.name == name) return c.id;
        int32_t id;
        auto it = m_names.find(name);
        if (it != m_names.end()) {
            id = it->second;
        } else {
            id = int32_t(m_w.internString(name));
            m_names.emplace(std::string(name), id);
        }
        c.name.assign(name);
        c.id = id;
        return id;
    }

    Status writeProcess(ProcessBuilder& b, const ProcessPlacement& place) override {
        ProcessFacts& f = b.facts();
        // A rank or world size no trace can have (negative, beyond 32 bits) is refused, not
        // wrapped: the process is ranked by file order instead.
        bool rankFinal = place.rankFinal;
        if (f.rank && (*f.rank < 0 || *f.rank > kMaxRank)) {
            m_result.warnings.push_back(f.sourceFile + " claims rank " + std::to_string(*f.rank) +
                                        ", outside 0.." + std::to_string(kMaxRank) +
                                        ": ranked by file order instead");
            f.rank.reset();
            rankFinal = false;
        }
        if (f.worldSize && (*f.worldSize < 1 || *f.worldSize > kMaxRank + 1)) {
            m_result.warnings.push_back(f.sourceFile + " claims a world size of " +
                                        std::to_string(*f.worldSize) + ": ignored");
            f.worldSize.reset();
        }
        if (!rankFinal) {
            int64_t r = int64_t(place.fileIndex);
            while (m_claimed.count(r)) ++r;
            f.rank = r;
            f.rankSource = "file order";
        }
        if (f.rank && m_claimed.count(*f.rank)) {
            m_result.warnings.push_back(f.sourceFile + " claims rank " + std::to_string(*f.rank) +
                                        ", which another input already has: imported as a "
                                        "non-rank process");
            b.count(Stat::ImportDuplicateRanks);
            f.rankSource = "duplicate claim of rank " + std::to_string(*f.rank);
            f.rank.reset();
        } else if (f.rank) {
            m_claimed.insert(*f.rank);
        }

        Placed p;
        std::optional<int64_t> minTs = b.minTs();
        if (place.declaredOriginNs)
            p.candidate = place.declaredOriginNs;
        else if (minTs)
            p.candidate = *minTs + place.baseNs;
        if (!m_origin) m_origin = p.candidate;
        int64_t origin = m_origin.value_or(0);

        int64_t processId = m_nextProcess++;
        auto written = b.write(m_w, processId, origin - place.baseNs);
        if (!written) return written.status();
        p.processId = processId;
        p.hasEvents = written->events > 0;
        for (auto& [key, ends] : written->collectiveEnds) {
            auto& out = p.ends.ends[key];
            for (int64_t e : ends) out.push_back(e + place.baseNs);
        }
        ImportedProcess ip;
        ip.processId = processId;
        ip.rank = f.rank;
        ip.rankSource = f.rankSource;
        ip.file = f.sourceFile;
        ip.events = written->events;
        m_result.processes.push_back(ip);
        m_result.events += written->events;
        m_placed.push_back(std::move(p));
        addCounts(processId, b);
        return {};
    }

    /// The process's data-quality counts into the job's, and its own row of them.
    void addCounts(int64_t processId, ProcessBuilder& b) {
        for (size_t i = 0; i < b.stats().size(); ++i) m_result.stats[i] += b.stats()[i];
        for (const auto& [key, n] : b.categoryCounts()) m_categoryCounts[key] += n;
        m_perProcess.emplace_back(processId, b.stats());
    }

    struct Placed {
        int64_t processId = 0;
        std::optional<int64_t> candidate; ///< absolute ns this process proposes as time origin
        bool hasEvents = false;
        RankCollectiveEnds ends;
    };

    std::optional<int64_t> m_origin; // provisional origin all processes were written against
    std::vector<Placed> m_placed;
    std::vector<std::pair<int64_t, store::StatCounts>> m_perProcess;
    std::map<std::pair<size_t, std::string>, int64_t> m_categoryCounts; ///< (stat, category)

private:
    store::TraceWriter& m_w;
    ImportResult& m_result;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> m_names;
    struct CachedName {
        std::string name;
        int32_t id = -1;
    };
    static constexpr size_t kNameCacheSize = 1024;
    std::vector<CachedName> m_nameCache = std::vector<CachedName>(kNameCacheSize);

    static size_t quickHash(std::string_view s) {
        uint64_t head = 0, tail = 0;
        size_t n = s.size();
        std::memcpy(&head, s.data(), std::min<size_t>(n, 8));
        if (n > 8) std::memcpy(&tail, s.data() + n - 8, 8);
        uint64_t h = (head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^ n;
        return size_t(h ^ (h >> 29));
    }
    static constexpr int64_t kMaxRank = INT32_MAX;
    std::set<int64_t> m_claimed;
    int64_t m_nextProcess = 1;
};

/// Shifts processes' times after the load (the final origin and the alignment offsets are
/// known only once every file was read). Event ids of a track are one contiguous range, so each
/// update is a rowid range scan.
Status applyShifts(const std::string& path, const std::vector<std::pair<int64_t, int64_t>>& shifts,
                   const ImportResult& result) {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
        sqlite3_close(raw);
        return Status::error("cannot reopen " + path + ": " + msg);
    }
    schema::DbHandle db(raw);
    HPCPROF_RETURN_IF_ERROR(schema::exec(db.get(), "BEGIN"));
    schema::Statement tracks(db.get(), "SELECT first_event_id, last_event_id FROM track"
                                       " WHERE process_id = ? AND event_count > 0");
    schema::Statement events(db.get(), "UPDATE event SET ts = ts + ? WHERE id BETWEEN ? AND ?");
    schema::Statement proc(db.get(), "UPDATE process SET start_ts = start_ts + ?,"
                                     " end_ts = end_ts + ? WHERE id = ?");
    schema::Statement clock(db.get(), "UPDATE process SET clock_offset_ns = ?, clock_method = ?"
                                      " WHERE id = ?");
    for (auto* s : {&tracks, &events, &proc, &clock})
        if (!s->valid()) return s->error();
    for (const auto& [processId, shift] : shifts) {
        if (shift == 0) continue;
        tracks.bind(1, processId);
        std::vector<std::pair<int64_t, int64_t>> ranges;
        while (tracks.step()) ranges.emplace_back(tracks.int64(0), tracks.int64(1));
        tracks.reset();
        for (auto [first, last] : ranges) {
            events.bind(1, shift);
            events.bind(2, first);
            events.bind(3, last);
            HPCPROF_RETURN_IF_ERROR(events.run());
        }
        if (!ranges.empty()) {
            proc.bind(1, shift);
            proc.bind(2, shift);
            proc.bind(3, processId);
            HPCPROF_RETURN_IF_ERROR(proc.run());
        }
    }
    for (const auto& p : result.processes) {
        clock.bind(1, p.offsetNs);
        clock.bind(2, std::string_view(p.aligned && result.clockMethod == "nccl_collectives"
                                           ? "nccl_collectives"
                                           : "recorded"));
        clock.bind(3, p.processId);
        HPCPROF_RETURN_IF_ERROR(clock.run());
    }
    tracks = {};
    events = {};
    proc = {};
    clock = {};
    return schema::exec(db.get(), "COMMIT");
}

/// Offsets from --align collectives; fills the per-process report and warnings.
std::vector<int64_t> alignmentOffsets(Session& session, ImportResult& result) {
    std::vector<int64_t> offsets(session.m_placed.size(), 0);
    // Reference: the lowest rank that has collectives.
    std::optional<size_t> reference;
    for (size_t i = 0; i < session.m_placed.size(); ++i) {
        if (session.m_placed[i].ends.ends.empty() || !result.processes[i].rank) continue;
        if (!reference || *result.processes[i].rank < *result.processes[*reference].rank)
            reference = i;
    }
    if (!reference) {
        result.warnings.push_back("--align collectives: no rank has NCCL collective kernels "
                                  "(point-to-point kernels are not used); times left as recorded");
        return offsets;
    }
    std::vector<RankCollectiveEnds> ends;
    for (const auto& p : session.m_placed) ends.push_back(p.ends);
    auto aligned = alignByCollectives(ends, *reference);
    for (size_t i = 0; i < aligned.size(); ++i) {
        ImportedProcess& ip = result.processes[i];
        ip.aligned = aligned[i].aligned;
        ip.offsetNs = aligned[i].offsetNs;
        ip.matches = aligned[i].matches;
        ip.spreadNs = aligned[i].spreadNs;
        offsets[i] = aligned[i].offsetNs;
        if (!aligned[i].aligned)
            result.warnings.push_back(
                ip.file + ": no NCCL collective in common with " +
                result.processes[*reference].file + "; its times are left as recorded");
    }
    return offsets;
}

/// Refuses what the reader got from `path` where it is no trace or damaged beyond what the
/// options allow; notes the damage --keep-partial accepts.
Status checkOutcome(const std::string& path, const ReadOutcome& outcome, const FileImporter& fi,
                    const ImportOptions& options, ImportResult& result) {
    // JSON that is not a trace (a number, a PyTorch execution trace, ...) is refused by
    // name rather than imported as a rank without events.
    if (!outcome.notATrace.empty())
        return Status::error(path + ": not a trace: the file is " + outcome.notATrace);
    // Objects none of which has a phase: some other JSON list (records of another tool).
    if (fi.eventObjects() > 0 && fi.phasedEvents() == 0)
        return Status::error(path + ": not a trace: none of the " +
                             std::to_string(fi.eventObjects()) +
                             " objects of its event list is a trace event (none has a \"ph\" "
                             "phase); give the PyTorch profiler's (Kineto) or a Chrome trace");
    // Damage before any event array: nothing says it is a trace, even with
    // --keep-partial (which keeps what a trace held before its damage).
    if (!outcome.complete && !outcome.eventArray)
        return Status::error(path + ": " + outcome.error +
                             " (not a trace: no traceEvents before it)");
    if (!fi.error().ok()) return fi.error();
    if (!outcome.complete) {
        if (!options.keepPartial)
            return Status::error(path + ": " + outcome.error +
                                 " (use --keep-partial to import the events read "
                                 "before the damage)");
        result.warnings.push_back(path + ": " + outcome.error +
                                  "; kept the events read before it");
    }
    return {};
}

/// Reads input `i` of `list` into the session: one process, or an export's processes.
Status importFile(Session& session, const std::vector<fs::path>& list, size_t i,
                  const ImportOptions& options, ImportResult& result) {
    std::error_code ec;
    const std::string path = list[i].string();
    uint64_t size = fs::file_size(list[i], ec);
    FileImporter fi(session, path, i);
    ProgressFn progress;
    if (options.progress)
        progress = [&](uint64_t, uint64_t fileBytes) {
            options.progress({i, list.size(), path, fileBytes, size});
        };
    auto outcome = readChromeTrace(path, fi, progress);
    if (!outcome) return outcome.status();
    HPCPROF_RETURN_IF_ERROR(checkOutcome(path, *outcome, fi, options, result));
    HPCPROF_RETURN_IF_ERROR(fi.finish(!outcome->complete));
    result.files++;
    return {};
}

/// Where every process's times go once all files are read.
struct FinalTimes {
    std::optional<int64_t> origin; ///< the earliest (aligned) start, absolute ns
    std::vector<std::pair<int64_t, int64_t>> shifts; ///< process id, ns to add to its times
};

/// The final origin and the shifts, with --align collectives' offsets (and its report).
FinalTimes finalTimes(Session& session, ImportResult& result, const ImportOptions& options) {
    std::vector<int64_t> offsets(session.m_placed.size(), 0);
    if (options.align == ClockAlignment::Collectives) offsets = alignmentOffsets(session, result);
    // Final origin: the earliest (aligned) start; every process is shifted from the
    // provisional origin it was written against.
    FinalTimes out;
    std::optional<int64_t>& origin = out.origin;
    for (size_t i = 0; i < session.m_placed.size(); ++i)
        if (auto c = session.m_placed[i].candidate)
            origin = origin ? std::min(*origin, *c + offsets[i]) : *c + offsets[i];
    int64_t provisional = session.m_origin.value_or(0);
    for (size_t i = 0; i < session.m_placed.size(); ++i)
        out.shifts.emplace_back(session.m_placed[i].processId,
                                provisional - origin.value_or(provisional) + offsets[i]);
    return out;
}

/// Per stat, its categories by count, most first: "mtia_insight 12, overhead 3".
store::StatDetails categoryDetails(const std::map<std::pair<size_t, std::string>, int64_t>& counts) {
    std::vector<std::vector<std::pair<int64_t, std::string>>> byStat(size_t(schema::Stat::Count_));
    for (const auto& [key, n] : counts) byStat[key.first].emplace_back(-n, key.second);
    store::StatDetails out;
    constexpr size_t kShown = 12; // a plain Chrome trace may have many of its own categories
    for (size_t i = 0; i < byStat.size(); ++i) {
        auto& cats = byStat[i];
        if (cats.empty()) continue;
        std::sort(cats.begin(), cats.end());
        std::string text = "by category:";
        for (size_t k = 0; k < std::min(cats.size(), kShown); ++k)
            text += (k ? ", " : " ") + cats[k].second + " " + std::to_string(-cats[k].first);
        if (cats.size() > kShown) text += ", and " + std::to_string(cats.size() - kShown) + " more";
        out[i] = std::move(text);
    }
    return out;
}

/// Some data is known to be missing: a stat above severity info was counted.
bool knownPartial(const store::StatCounts& stats) {
    for (size_t i = 0; i < stats.size(); ++i)
        if (stats[i] > 0 && schema::kStats[i].severity != schema::Severity::Info) return true;
    return false;
}

/// The trace's metadata and stats, then the end of the load.
Status finishTrace(store::TraceWriter& w, const Session& session, const ImportResult& result,
                   const ImportOptions& options, std::optional<int64_t> origin) {
    const std::pair<std::string_view, std::string> metadata[] = {
        {schema::meta::kTimeOriginRealtimeNs, std::to_string(origin.value_or(0))},
        {schema::meta::kClockMethod, result.clockMethod},
        {schema::meta::kSchemaVersion, std::to_string(schema::kSchemaVersion)},
        {schema::meta::kHpcprofVersion, HPCPROF_VERSION},
        {schema::meta::kCreatedBy, "hpcprof import"},
        {schema::meta::kCommand, options.command},
        {schema::meta::kPartial, result.partial ? "true" : "false"},
    };
    for (const auto& [key, value] : metadata) HPCPROF_RETURN_IF_ERROR(w.setMetadata(key, value));
    HPCPROF_RETURN_IF_ERROR(w.writeStats(result.stats, session.m_perProcess, result.statDetails));
    return w.finish();
}

} // namespace

Result<std::vector<fs::path>> listInputs(const std::vector<fs::path>& in) {
    std::vector<fs::path> out;
    for (const auto& p : in) {
        std::error_code ec;
        auto st = fs::status(p, ec);
        if (ec || !fs::exists(st))
            return Status::error("cannot open " + p.string() + ": No such file or directory");
        if (fs::is_directory(st)) {
            std::vector<fs::path> found;
            for (const auto& entry : fs::directory_iterator(p, ec))
                if (entry.is_regular_file() && isTraceFileName(entry.path().filename().string()))
                    found.push_back(entry.path());
            if (ec) return Status::error("cannot list " + p.string() + ": " + ec.message());
            if (found.empty())
                return Status::error(p.string() + " holds no trace files (*.json, *.json.gz)");
            std::sort(found.begin(), found.end());
            out.insert(out.end(), found.begin(), found.end());
        } else {
            out.push_back(p);
        }
    }
    if (out.empty()) return Status::error("no input files");
    return out;
}

Result<ImportResult> importTraces(const ImportOptions& options) {
    // Checked before the inputs are read; the pending output removes its temporary file on
    // every failure below.
    auto pending = schema::PendingOutput::begin(options.output, options.force);
    if (!pending) return pending.status();
    auto files = listInputs(options.inputs);
    if (!files) return files.status();
    const std::string tmp = pending->path();

    ImportResult result;
    result.clockMethod = options.align == ClockAlignment::Collectives ? "nccl_collectives"
                                                                      : "recorded";
    FinalTimes times;
    {
        auto writer = store::TraceWriter::create(tmp);
        if (!writer) return writer.status();
        store::TraceWriter& w = writer.value();
        Session session(w, result);
        for (size_t i = 0; i < files->size(); ++i)
            HPCPROF_RETURN_IF_ERROR(importFile(session, files.value(), i, options, result));
        times = finalTimes(session, result, options);
        result.partial = knownPartial(result.stats);
        result.statDetails = categoryDetails(session.m_categoryCounts);
        Status s = finishTrace(w, session, result, options, times.origin);
        if (!s.ok())
            return Status::error("cannot write trace " + options.output.string() + ": " +
                                 s.message());
    }
    Status s = applyShifts(tmp, times.shifts, result);
    if (!s.ok())
        return Status::error("cannot write trace " + options.output.string() + ": " +
                             s.message());
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::import
