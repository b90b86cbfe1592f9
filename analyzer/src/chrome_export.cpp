// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/chrome_export.hpp"
#include "trace_access.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/output_file.hpp"

namespace hpcprof::analyzer {


namespace {

/// Buffered output to a plain or gzip file.
class Output {
public:
    ~Output() { close(); }

    Status open(const std::string& path, bool gzip) {
        m_path = path;
        errno = 0;
        if (gzip) {
            m_gz = gzopen(path.c_str(), "wb6");
            if (!m_gz) return Status::error("cannot create " + path + ": " + std::strerror(errno));
        } else {
            m_file = std::fopen(path.c_str(), "wb");
            if (!m_file) return Status::error("cannot create " + path + ": " + std::strerror(errno));
        }
        m_buffer.reserve(kFlushAt + 4096);
        return {};
    }

    std::string& buffer() { return m_buffer; }
    void maybeFlush() {
        if (m_buffer.size() >= kFlushAt) flush();
    }
    void flush() {
        if (m_buffer.empty()) return;
        bool ok = m_gz ? gzwrite(m_gz, m_buffer.data(), unsigned(m_buffer.size())) ==
                             int(m_buffer.size())
                       : std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) == m_buffer.size();
        if (!ok && m_error.empty()) m_error = "cannot write " + m_path + ": " + std::strerror(errno);
        m_buffer.clear();
    }
    Status close() {
        flush();
        if (m_gz && gzclose(m_gz) != Z_OK && m_error.empty()) m_error = "cannot write " + m_path;
        if (m_file && std::fclose(m_file) != 0 && m_error.empty())
            m_error = "cannot write " + m_path + ": " + std::strerror(errno);
        m_gz = nullptr;
        m_file = nullptr;
        return m_error.empty() ? Status() : Status::error(m_error);
    }

private:
    static constexpr size_t kFlushAt = 1 << 20;
    std::string m_path, m_buffer, m_error;
    gzFile m_gz = nullptr;
    std::FILE* m_file = nullptr;
};

/// Appends the JSON escape of one ASCII byte: control characters and DEL as \u escapes.
inline void appendAscii(std::string& out, unsigned char c) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
        if (c < 0x20 || c == 0x7F)
            out += fmt::format("\\u{:04x}", c);
        else
            out += char(c);
    }
}

/// Length of the UTF-8 sequence that starts at s[i] (a byte >= 0x80) when it is valid (complete,
/// no overlongs or surrogates), else 0.
inline size_t validUtf8Length(std::string_view s, size_t i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // Lead bytes: C2-DF two bytes, E0-EF three, F0-F4 four; C0, C1 and F5-FF never lead.
    const size_t len = c >= 0xF5 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    if (len == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
    if (len == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return 0;
    return len;
}

/// Appends `s` as a JSON string. Invalid UTF-8 bytes (file names may hold any bytes) become
/// U+FFFD so the output always parses; control characters, C1 ones included, are written as
/// \u escapes (lossless), so none reaches a terminal that shows the file.
void appendString(std::string& out, std::string_view s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            appendAscii(out, c);
            ++i;
            continue;
        }
        const size_t len = validUtf8Length(s, i);
        if (len == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1])); // U+0080-U+009F
            i += len;
        } else {
            out.append(s.substr(i, len));
            i += len;
        }
    }
    out += '"';
}

/// ns -> microseconds with exactly three decimals: no binary rounding, exact to the ns.
void appendMicros(std::string& out, int64_t ns) {
    uint64_t a = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
    if (ns < 0) out += '-';
    out += fmt::format("{}.{:03}", a / 1000, a % 1000);
}

void appendValue(std::string& out, sqlite3_stmt* s, int col) {
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER: out += std::to_string(sqlite3_column_int64(s, col)); break;
    case SQLITE_FLOAT: {
        double d = sqlite3_column_double(s, col);
        if (std::isfinite(d)) {
            std::string t = fmt::format("{}", d);
            // Keep it a JSON float so the importer restores a real, not an integer.
            if (t.find_first_of(".eE") == std::string::npos) t += ".0";
            out += t;
        } else {
            out += "null";
        }
        break;
    }
    case SQLITE_NULL: out += "null"; break;
    default: {
        auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
        appendString(out, std::string_view(text ? text : "", size_t(sqlite3_column_bytes(s, col))));
    }
    }
}

/// The span of the trace (process lifetimes, first and last event of each track) in trace ns.
std::pair<int64_t, int64_t> traceSpan(sqlite3* db) {
    schema::Statement s(db, "SELECT MIN(b), MAX(e) FROM ("
                            " SELECT start_ts AS b, COALESCE(end_ts, start_ts) AS e FROM process"
                            " UNION ALL SELECT e.ts, e.ts + MAX(e.dur, 0) FROM track t"
                            " JOIN event e ON e.id IN (t.first_event_id, t.last_event_id))");
    if (!s.step() || s.isNull(0)) return {0, 0};
    return {s.int64(0), s.int64(1)};
}

struct TrackRow {
    int64_t id, processId;
    std::string kind, name;
    std::optional<int64_t> device, stream, tid, first, last;
    std::optional<std::string> threadName;
};

std::string columnText(const schema::Statement& s, int col) {
    return s.isNull(col) ? std::string() : s.text(col);
}
std::optional<int64_t> columnInt(const schema::Statement& s, int col) {
    if (s.isNull(col)) return std::nullopt;
    return s.int64(col);
}

/// The window as [start, end) bounds for the events query, open sides at the int64 limits.
struct Window {
    int64_t start = INT64_MIN, end = INT64_MAX;
};

/// A window that misses the trace would export nothing (or, open-ended, everything): it is a
/// mistake in the command line, said as such.
Status checkWindow(sqlite3* db, const ChromeExportOptions& o, const Window& w) {
    if (!o.windowStartNs && !o.windowEndNs) return {};
    auto [first, last] = traceSpan(db);
    if (w.start <= last && w.end > first) return {};
    return Status::error(fmt::format("--window {}:{} does not overlap the trace ({}..{} ns)",
                                     o.windowStartNs ? std::to_string(w.start) : "",
                                     o.windowEndNs ? std::to_string(w.end) : "", first, last));
}

std::map<int64_t, std::string> readCategories(sqlite3* db) {
    std::map<int64_t, std::string> categories;
    schema::Statement s(db, "SELECT id, name FROM category");
    while (s.step()) categories[s.int64(0)] = s.text(1);
    return categories;
}

/// The origin as a number; a damaged metadata value is written as 0.
int64_t timeOrigin(const Trace& trace) {
    int64_t origin = 0;
    std::string text = trace.metadata("time_origin_realtime_ns");
    std::from_chars(text.data(), text.data() + text.size(), origin);
    return origin;
}

/// The statements the export steps through: processes, then their tracks, then each track's
/// events (and their arguments) in id (= time) order.
struct ExportQueries {
    explicit ExportQueries(sqlite3* db)
        : procs(db, "SELECT id, rank, rank_source, world_size, host, pid, command"
                    " FROM process ORDER BY id"),
          tracks(db, "SELECT t.id, t.kind, t.name, t.device, t.stream, th.tid, th.name,"
                     " t.first_event_id, t.last_event_id FROM track t"
                     " LEFT JOIN thread th ON th.id = t.thread_id"
                     " WHERE t.process_id = ? ORDER BY t.id"),
          events(db, "SELECT e.id, e.ts, e.dur, e.category_id, s.value, e.bytes, e.peer, cm.key,"
                     " cm.size, cm.kind, e.seq, e.correlation_id, e.count, os.value, e.offset,"
                     " d.errno, d.fd, d.tag"
                     " FROM event e JOIN string s ON s.id = e.name_id"
                     " LEFT JOIN communicator cm ON cm.id = e.communicator_id"
                     " LEFT JOIN object o ON o.id = e.object_id"
                     " LEFT JOIN string os ON os.id = o.name_id"
                     " LEFT JOIN event_detail d ON d.event_id = e.id"
                     " WHERE e.id BETWEEN ?1 AND ?2 AND e.ts < ?3 AND e.ts + e.dur >= ?4"
                     " ORDER BY e.id"),
          args(db, "SELECT event_id, key, value FROM event_arg"
                   " WHERE event_id BETWEEN ?1 AND ?2 ORDER BY event_id, key") {}

    /// The first statement that could not be prepared, or ok.
    Status prepared() const {
        for (const auto* s : {&procs, &tracks, &events, &args})
            if (!s->valid()) return s->error();
        return {};
    }
    /// The first error a statement met while stepping, or ok.
    Status stepError() const {
        for (const auto* s : {&procs, &tracks, &events, &args})
            if (!s->error().ok()) return s->error();
        return {};
    }

    schema::Statement procs, tracks, events, args;
};

/// An optional column of the events query written into an event's args when not NULL.
struct EventColumn {
    const char* key;
    int col;
    bool text;
};
constexpr EventColumn kEventColumns[] = {
    {"bytes", 5, false},   {"peer", 6, false},         {"communicator", 7, true},
    {"communicator_size", 8, false}, {"communicator_kind", 9, true}, {"seq", 10, false},
    {"correlation", 11, false}, {"count", 12, false},  {"object", 13, true},
    {"offset", 14, false}, {"errno", 15, false},       {"fd", 16, false},
    {"tag", 17, false},
};
constexpr int kCorrelationColumn = 11;

/// Writes the document, element by element, into the output's buffer (flushed as it fills).
class ChromeWriter {
public:
    ChromeWriter(Output& out, ExportQueries& q, const std::map<int64_t, std::string>& categories,
                 Window window)
        : m_out(out), m_b(out.buffer()), m_q(q), m_categories(categories), m_window(window) {}

    void header(int64_t origin, const ChromeExportOptions& o) {
        m_b += "{\"hpcprof\": {\"format\": \"hpcprof-chrome\", \"version\": 1, \"time_origin_ns\": ";
        m_b += std::to_string(origin);
        if (o.windowStartNs) m_b += fmt::format(", \"window_start_ns\": {}", *o.windowStartNs);
        if (o.windowEndNs) m_b += fmt::format(", \"window_end_ns\": {}", *o.windowEndNs);
        m_b += "},\n\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n";
    }

    /// Every process, with its tracks and their events.
    void processes() {
        while (m_q.procs.step()) {
            const int64_t pid = m_q.procs.int64(0);
            processMetadata(pid);
            for (const TrackRow& t : tracksOf(pid)) {
                trackMetadata(pid, t);
                if (t.first && t.last) trackEvents(pid, t);
            }
        }
    }

    void footer() { m_b += "\n]}\n"; }

    const ChromeExportResult& result() const { return m_result; }

private:
    /// Separates the array's elements.
    void begin() {
        if (!m_firstEvent) m_b += ",\n";
        m_firstEvent = false;
    }

    /// The process's name and sort index (its rank; processes without one after the ranks).
    void processMetadata(int64_t pid) {
        const schema::Statement& p = m_q.procs;
        auto rank = columnInt(p, 1);
        int64_t osPid = p.int64(5);
        std::string label = rank ? fmt::format("rank {}", *rank) : fmt::format("pid {} (no rank)", osPid);
        begin();
        m_b += fmt::format("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, "
                           "\"args\": {{\"name\": ",
                           pid);
        appendString(m_b, label);
        m_b += ", \"hpcprof_rank\": " + (rank ? std::to_string(*rank) : std::string("null"));
        m_b += ", \"hpcprof_rank_source\": ";
        appendString(m_b, columnText(p, 2));
        if (auto ws = columnInt(p, 3)) m_b += fmt::format(", \"hpcprof_world_size\": {}", *ws);
        m_b += ", \"hpcprof_host\": ";
        appendString(m_b, columnText(p, 4));
        m_b += fmt::format(", \"hpcprof_pid\": {}, \"hpcprof_command\": ", osPid);
        appendString(m_b, columnText(p, 6));
        m_b += "}}";
        begin();
        m_b += fmt::format("{{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": {}, "
                           "\"tid\": 0, \"args\": {{\"sort_index\": {}}}}}",
                           pid, rank ? *rank : 1000000 + pid);
        m_result.processes++;
    }

    /// Read whole before their events: one statement cannot step two queries at once.
    std::vector<TrackRow> tracksOf(int64_t pid) {
        schema::Statement& s = m_q.tracks;
        std::vector<TrackRow> rows;
        s.bind(1, pid);
        while (s.step())
            rows.push_back({s.int64(0), pid, s.text(1), s.text(2), columnInt(s, 3), columnInt(s, 4),
                            columnInt(s, 5), columnInt(s, 7), columnInt(s, 8),
                            s.isNull(6) ? std::nullopt : std::optional<std::string>(s.text(6))});
        s.reset();
        return rows;
    }

    /// The track as a thread: its name, what `hpcprof import` restores, its sort index.
    void trackMetadata(int64_t pid, const TrackRow& t) {
        begin();
        m_b += fmt::format("{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, "
                           "\"args\": {{\"name\": ",
                           pid, t.id);
        appendString(m_b, t.name);
        m_b += ", \"hpcprof_track_kind\": ";
        appendString(m_b, t.kind);
        if (t.device) m_b += fmt::format(", \"hpcprof_device\": {}", *t.device);
        if (t.stream) m_b += fmt::format(", \"hpcprof_stream\": {}", *t.stream);
        if (t.tid) m_b += fmt::format(", \"hpcprof_tid\": {}", *t.tid);
        if (t.threadName) {
            m_b += ", \"hpcprof_thread_name\": ";
            appendString(m_b, *t.threadName);
        }
        m_b += "}}";
        begin();
        m_b += fmt::format("{{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": {}, "
                           "\"tid\": {}, \"args\": {{\"sort_index\": {}}}}}",
                           pid, t.id, t.id);
        m_result.tracks++;
    }

    /// The track's events in the window, each with its arguments (one merge-walk of the
    /// arguments, ordered by event id like the events) and its flow point.
    void trackEvents(int64_t pid, const TrackRow& t) {
        schema::Statement& events = m_q.events;
        schema::Statement& args = m_q.args;
        events.bind(1, *t.first);
        events.bind(2, *t.last);
        events.bind(3, m_window.end);
        events.bind(4, m_window.start);
        args.bind(1, *t.first);
        args.bind(2, *t.last);
        bool argRow = args.step();
        const bool gpuTrack = t.kind == "gpu_stream";
        while (events.step()) {
            completeEvent(pid, t.id, argRow);
            if (!events.isNull(kCorrelationColumn)) flowPoint(pid, t.id, gpuTrack);
            m_out.maybeFlush();
        }
        events.reset();
        args.reset();
    }

    /// One "X" event from the current row of the events query.
    void completeEvent(int64_t pid, int64_t tid, bool& argRow) {
        const schema::Statement& events = m_q.events;
        auto cat = m_categories.find(events.int64(3));
        std::string_view catName = cat == m_categories.end() ? std::string_view("unknown") : cat->second;
        begin();
        m_b += fmt::format("{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"ts\": ", pid, tid);
        appendMicros(m_b, events.int64(1));
        m_b += ", \"dur\": ";
        appendMicros(m_b, events.int64(2));
        m_b += ", \"name\": ";
        appendString(m_b, events.text(4));
        m_b += ", \"cat\": ";
        appendString(m_b, catName);
        m_b += ", \"args\": {\"hpcprof_category\": ";
        appendString(m_b, catName);
        eventColumns();
        eventArgs(events.int64(0), argRow);
        m_b += "}}";
        m_result.events++;
    }

    void eventColumns() {
        const schema::Statement& events = m_q.events;
        for (const EventColumn& c : kEventColumns) {
            if (events.isNull(c.col)) continue;
            if (c.text) {
                m_b += fmt::format(", \"{}\": ", c.key);
                appendString(m_b, events.text(c.col));
            } else {
                m_b += fmt::format(", \"{}\": {}", c.key, events.int64(c.col));
            }
        }
    }

    /// The event's event_arg rows; `argRow` says whether the arguments query is on a row.
    void eventArgs(int64_t id, bool& argRow) {
        schema::Statement& args = m_q.args;
        while (argRow && args.int64(0) < id) argRow = args.step();
        while (argRow && args.int64(0) == id) {
            m_b += ", ";
            appendString(m_b, args.text(1));
            m_b += ": ";
            appendValue(m_b, args.get(), 2);
            argRow = args.step();
        }
    }

    /// The launch end ("s") or GPU end ("f") of a correlation's arrow.
    void flowPoint(int64_t pid, int64_t tid, bool gpuTrack) {
        const schema::Statement& events = m_q.events;
        // Flow ids are global in the viewer; correlation ids are per process.
        int64_t flowId = (pid << 40) | (events.int64(kCorrelationColumn) & ((int64_t(1) << 40) - 1));
        begin();
        m_b += fmt::format("{{\"ph\": \"{}\", {}\"id\": {}, \"pid\": {}, \"tid\": {}, "
                           "\"ts\": ",
                           gpuTrack ? "f" : "s", gpuTrack ? "\"bp\": \"e\", " : "", flowId, pid, tid);
        appendMicros(m_b, events.int64(1));
        m_b += ", \"name\": \"launch\", \"cat\": \"correlation\"}";
        m_result.flows++;
    }

    Output& m_out;
    std::string& m_b; ///< the output's buffer (flushing empties it, the string stays)
    ExportQueries& m_q;
    const std::map<int64_t, std::string>& m_categories;
    Window m_window;
    bool m_firstEvent = true;
    ChromeExportResult m_result;
};

} // namespace

std::optional<int64_t> parseDuration(const std::string& text) {
    size_t end = 0;
    double v = 0;
    try {
        v = std::stod(text, &end);
    } catch (const std::invalid_argument&) { // no number
        return std::nullopt;
    } catch (const std::out_of_range&) { // beyond double
        return std::nullopt;
    }
    std::string unit = text.substr(end);
    double scale = unit.empty() || unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6
                 : unit == "s" ? 1e9 : -1;
    // Beyond 2^62 ns (146 years) no trace has a time: refused rather than overflowed.
    if (scale < 0 || !std::isfinite(v) || !(std::fabs(v * scale) <= 0x1p62)) return std::nullopt;
    return int64_t(std::llround(v * scale));
}

Result<ChromeExportResult> exportChromeTrace(const Trace& trace, const ChromeExportOptions& o) {
    auto pending = schema::PendingOutput::begin(o.output, o.force);
    if (!pending) return pending.status();
    bool gzip = o.output.size() > 3 && o.output.compare(o.output.size() - 3, 3, ".gz") == 0;
    sqlite3* db = detail::db(trace);
    const Window window{o.windowStartNs.value_or(INT64_MIN), o.windowEndNs.value_or(INT64_MAX)};
    HPCPROF_RETURN_IF_ERROR(checkWindow(db, o, window));
    const std::map<int64_t, std::string> categories = readCategories(db);
    const int64_t origin = timeOrigin(trace);

    Output out;
    HPCPROF_RETURN_IF_ERROR(out.open(pending->path(), gzip));
    ExportQueries queries(db);
    HPCPROF_RETURN_IF_ERROR(queries.prepared());
    ChromeWriter writer(out, queries, categories, window);
    writer.header(origin, o);
    writer.processes();
    writer.footer();
    Status s = out.close();
    if (s.ok()) s = queries.stepError();
    if (!s.ok()) return s; // the pending output removes the temporary file
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return writer.result();
}

} // namespace hpcprof::analyzer
