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

Result<IoSummary> summarizeIo(const Trace& trace, size_t topFiles) {
    IoSummary out;
    sqlite3* db = detail::db(trace);

    schema::Statement procs(db, "SELECT id, rank, pid, command, start_ts, end_ts FROM process"
                                " ORDER BY rank IS NULL, rank, start_ts");
    std::map<int64_t, size_t> index;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    while (procs.step()) {
        ProcessIo p;
        p.processId = procs.int64(0);
        if (!procs.isNull(1)) p.rank = procs.int64(1);
        p.pid = procs.int64(2);
        p.command = procs.text(3);
        int64_t start = procs.int64(4), end = procs.isNull(5) ? start : procs.int64(5);
        p.wallNs = end - start;
        t0 = std::min(t0, start);
        t1 = std::max(t1, end);
        index[p.processId] = out.perProcess.size();
        out.perProcess.push_back(std::move(p));
    }
    if (!procs.error().ok()) return procs.error();
    out.processes = int64_t(out.perProcess.size());
    out.wallNs = out.perProcess.empty() ? 0 : t1 - t0;

    // Outermost I/O calls only (depth 0 among I/O): a call nested in another I/O call, such as
    // a write inside a signal handler that interrupted a read, is not counted twice.
    schema::Statement io(db, "SELECT t.process_id, s.value, COALESCE(os.value, '(unknown)'),"
                             " COALESCE(o.kind, 'unknown'), COUNT(*), SUM(e.dur),"
                             " SUM(COALESCE(e.bytes, 0)), SUM(CASE WHEN e.depth = 0 THEN e.dur ELSE 0 END)"
                             " FROM event e JOIN track t ON t.id = e.track_id"
                             " JOIN category c ON c.id = e.category_id"
                             " JOIN string s ON s.id = e.name_id"
                             " LEFT JOIN object o ON o.id = e.object_id"
                             " LEFT JOIN string os ON os.id = o.name_id"
                             " WHERE c.class = 'io' GROUP BY 1, 2, 3, 4");
    std::map<std::string, FileIo> files;
    while (io.step()) {
        ProcessIo& p = out.perProcess[index[io.int64(0)]];
        std::string name = io.text(1);
        IoDirection dir = ioDirection(name);
        int64_t calls = io.int64(4), dur = io.int64(5), bytes = io.int64(6), outer = io.int64(7);
        p.calls += calls;
        p.ioNs += outer;
        FileIo& f = files[io.text(2)];
        f.path = io.text(2);
        f.kind = io.text(3);
        f.calls += calls;
        f.ioNs += dur;
        if (dir == IoDirection::Read) {
            p.bytesRead += bytes;
            f.bytesRead += bytes;
        } else if (dir == IoDirection::Write) {
            p.bytesWritten += bytes;
            f.bytesWritten += bytes;
        }
    }
    if (!io.error().ok()) return io.error();
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
