// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/io_summary.hpp"
#include "trace_access.hpp"

#include <algorithm>
#include <map>

namespace hpcprof::analyzer {

IoDirection ioDirection(const std::string& name) {
    auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
    if (has("read") || has("fgets")) return IoDirection::Read;
    // Kernel-side copies are recorded against their destination.
    if (has("write") || has("puts") || has("printf") || has("copy_file_range") || has("sendfile") ||
        has("splice"))
        return IoDirection::Write;
    return IoDirection::None;
}

namespace {

/// One row per operating-system process: the images a process had before exec() (same host and
/// pid, ended by exec) are folded into the image that followed, which names the row. `index`
/// maps every process id to its row.
Status readProcesses(sqlite3* db, IoSummary& out, std::map<int64_t, size_t>& index) {
    schema::Statement procs(db, "SELECT id, rank, pid, command, start_ts, end_ts, host,"
                                " end_state = 'exec' FROM process ORDER BY start_ts, id");
    std::map<std::pair<std::string, int64_t>, std::pair<size_t, bool>> latest; // -> row, execed
    std::vector<std::pair<int64_t, int64_t>> spans;                               // per row
    std::vector<std::vector<int64_t>> ids;                                        // per row
    while (procs.step()) {
        const int64_t start = procs.int64(4), end = procs.isNull(5) ? start : procs.int64(5);
        auto key = std::make_pair(procs.text(6), procs.int64(2));
        auto it = latest.find(key);
        if (it == latest.end() || !it->second.second) { // a new process
            out.perProcess.emplace_back();
            spans.emplace_back(start, end);
            ids.emplace_back();
            it = latest.insert_or_assign(key, std::make_pair(out.perProcess.size() - 1, false)).first;
        }
        const size_t row = it->second.first;
        it->second.second = procs.int64(7) != 0;
        ProcessIo& p = out.perProcess[row];
        p.processId = procs.int64(0); // the latest image names the row
        if (!procs.isNull(1)) p.rank = procs.int64(1);
        p.pid = procs.int64(2);
        p.command = procs.text(3);
        spans[row] = {std::min(spans[row].first, start), std::max(spans[row].second, end)};
        p.wallNs = spans[row].second - spans[row].first;
        p.images = int64_t(ids[row].size()) + 1;
        ids[row].push_back(procs.int64(0));
    }
    HPCPROF_RETURN_IF_ERROR(procs.error());
    std::vector<size_t> order(out.perProcess.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { // ranks first, by rank
        const auto& pa = out.perProcess[a];
        const auto& pb = out.perProcess[b];
        if (pa.rank.has_value() != pb.rank.has_value()) return pa.rank.has_value();
        return pa.rank && *pa.rank != *pb.rank ? *pa.rank < *pb.rank : spans[a].first < spans[b].first;
    });
    std::vector<ProcessIo> sorted;
    for (size_t k = 0; k < order.size(); ++k) {
        for (int64_t id : ids[order[k]]) index[id] = k;
        sorted.push_back(std::move(out.perProcess[order[k]]));
    }
    out.perProcess = std::move(sorted);
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    for (const auto& [b, e] : spans) {
        t0 = std::min(t0, b);
        t1 = std::max(t1, e);
    }
    out.processes = int64_t(out.perProcess.size());
    out.wallNs = out.perProcess.empty() ? 0 : t1 - t0;
    return {};
}

} // namespace

Result<std::vector<schema::IoGroup>> ioGroups(const Trace& trace) {
    // Outermost I/O calls only (depth 0): a call nested in another call, such as a write inside
    // a signal handler that interrupted a read, is not counted twice.
    schema::Statement io(detail::db(trace),
                         "SELECT t.process_id, s.value, COALESCE(os.value, '(unknown)'),"
                         " COALESCE(o.kind, 'unknown'), COUNT(*), SUM(e.dur),"
                         " SUM(COALESCE(e.bytes, 0)), SUM(CASE WHEN e.depth = 0 THEN e.dur ELSE 0 END)"
                         " FROM event e JOIN track t ON t.id = e.track_id"
                         " JOIN category c ON c.id = e.category_id"
                         " JOIN string s ON s.id = e.name_id"
                         " LEFT JOIN object o ON o.id = e.object_id"
                         " LEFT JOIN string os ON os.id = o.name_id"
                         " WHERE c.class = 'io' GROUP BY 1, 2, 3, 4");
    std::vector<schema::IoGroup> out;
    while (io.step())
        out.push_back({io.int64(0), io.text(1), io.text(2), io.text(3), io.int64(4), io.int64(5),
                       io.int64(6), io.int64(7)});
    if (!io.error().ok()) return io.error();
    return out;
}

Result<IoSummary> summarizeIo(const Trace& trace, size_t topFiles) {
    auto io = ioGroups(trace);
    if (!io) return io.status();
    return summarizeIo(trace, io.value(), topFiles);
}

Result<IoSummary> summarizeIo(const Trace& trace, const std::vector<schema::IoGroup>& io,
                              size_t topFiles) {
    IoSummary out;
    sqlite3* db = detail::db(trace);
    std::map<int64_t, size_t> index;
    HPCPROF_RETURN_IF_ERROR(readProcesses(db, out, index));
    std::map<std::string, FileIo> files;
    for (const schema::IoGroup& g : io) {
        auto row = index.find(g.processId);
        if (row == index.end()) continue; // no such process row (not from this trace)
        ProcessIo& p = out.perProcess[row->second];
        IoDirection dir = ioDirection(g.function);
        p.calls += g.calls;
        p.ioNs += g.outerNs;
        FileIo& f = files[g.path];
        f.path = g.path;
        f.kind = g.kind;
        f.calls += g.calls;
        f.ioNs += g.durNs;
        if (dir == IoDirection::Read) {
            p.bytesRead += g.bytes;
            f.bytesRead += g.bytes;
        } else if (dir == IoDirection::Write) {
            p.bytesWritten += g.bytes;
            f.bytesWritten += g.bytes;
        }
    }
    for (auto& [path, f] : files) out.topFiles.push_back(std::move(f));
    std::sort(out.topFiles.begin(), out.topFiles.end(), [](const FileIo& a, const FileIo& b) {
        return a.ioNs != b.ioNs ? a.ioNs > b.ioNs : a.path < b.path;
    });
    if (out.topFiles.size() > topFiles) out.topFiles.resize(topFiles);

    schema::Statement count(db, "SELECT COALESCE(SUM(event_count), 0) FROM track");
    if (count.step()) out.events = count.int64(0);

    schema::Statement stats(db, "SELECT name, severity, description, value FROM stats_view"
                                " WHERE value > 0");
    while (stats.step())
        out.problems.push_back({stats.text(0), stats.text(1), stats.text(2), stats.int64(3)});
    return out;
}

} // namespace hpcprof::analyzer
