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

/// Appends `s` as a JSON string. Invalid UTF-8 bytes (file names may hold any bytes) become
/// U+FFFD so the output always parses; control characters, C1 ones included, are written as
/// \u escapes (lossless), so none reaches a terminal that shows the file.
void appendString(std::string& out, std::string_view s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
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
            ++i;
            continue;
        }
        size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
        bool valid = len > 0 && i + len <= s.size();
        for (size_t k = 1; valid && k < len; ++k)
            valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        if (valid && len == 3) { // no overlongs or surrogates
            unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            valid = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
        }
        if (valid && len == 4) {
            unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            valid = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
        }
        if (valid && len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1])); // U+0080-U+009F
            i += len;
        } else if (valid) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
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

} // namespace

std::optional<int64_t> parseDuration(const std::string& text) {
    size_t end = 0;
    double v = 0;
    try {
        v = std::stod(text, &end);
    } catch (...) {
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
    const std::string& tmp = pending->path();
    sqlite3* db = detail::db(trace);
    ChromeExportResult result;
    int64_t winStart = o.windowStartNs.value_or(INT64_MIN);
    int64_t winEnd = o.windowEndNs.value_or(INT64_MAX);
    if (o.windowStartNs || o.windowEndNs) {
        // A window that misses the trace would export nothing (or, open-ended, everything):
        // it is a mistake in the command line, said as such.
        auto [first, last] = traceSpan(db);
        if (winStart > last || winEnd <= first)
            return Status::error(
                fmt::format("--window {}:{} does not overlap the trace ({}..{} ns)",
                            o.windowStartNs ? std::to_string(winStart) : "",
                            o.windowEndNs ? std::to_string(winEnd) : "", first, last));
    }

    std::map<int64_t, std::string> categories;
    {
        schema::Statement s(db, "SELECT id, name FROM category");
        while (s.step()) categories[s.int64(0)] = s.text(1);
    }

    // The origin as a number; a damaged metadata value is written as 0.
    int64_t origin = 0;
    {
        std::string text = trace.metadata("time_origin_realtime_ns");
        std::from_chars(text.data(), text.data() + text.size(), origin);
    }

    Output out;
    HPCPROF_RETURN_IF_ERROR(out.open(tmp, gzip));
    std::string& b = out.buffer();
    b += "{\"hpcprof\": {\"format\": \"hpcprof-chrome\", \"version\": 1, \"time_origin_ns\": ";
    b += std::to_string(origin);
    if (o.windowStartNs) b += fmt::format(", \"window_start_ns\": {}", *o.windowStartNs);
    if (o.windowEndNs) b += fmt::format(", \"window_end_ns\": {}", *o.windowEndNs);
    b += "},\n\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n";
    bool firstEvent = true;
    auto begin = [&]() {
        if (!firstEvent) b += ",\n";
        firstEvent = false;
    };

    // Processes, then their tracks, then each track's events in id (= time) order.
    schema::Statement procs(db, "SELECT id, rank, rank_source, world_size, host, pid, command"
                                " FROM process ORDER BY id");
    schema::Statement tracks(
        db, "SELECT t.id, t.kind, t.name, t.device, t.stream, th.tid, th.name, t.first_event_id,"
            " t.last_event_id FROM track t LEFT JOIN thread th ON th.id = t.thread_id"
            " WHERE t.process_id = ? ORDER BY t.id");
    schema::Statement events(
        db, "SELECT e.id, e.ts, e.dur, e.category_id, s.value, e.bytes, e.peer, cm.key, cm.size,"
            " cm.kind, e.seq, e.correlation_id, e.count, os.value, d.offset, d.errno, d.fd, d.tag"
            " FROM event e JOIN string s ON s.id = e.name_id"
            " LEFT JOIN communicator cm ON cm.id = e.communicator_id"
            " LEFT JOIN object o ON o.id = e.object_id LEFT JOIN string os ON os.id = o.name_id"
            " LEFT JOIN event_detail d ON d.event_id = e.id"
            " WHERE e.id BETWEEN ?1 AND ?2 AND e.ts < ?3 AND e.ts + e.dur >= ?4 ORDER BY e.id");
    schema::Statement args(db, "SELECT event_id, key, value FROM event_arg"
                               " WHERE event_id BETWEEN ?1 AND ?2 ORDER BY event_id, key");
    for (auto* s : {&procs, &tracks, &events, &args})
        if (!s->valid()) return s->error();

    while (procs.step()) {
        int64_t pid = procs.int64(0);
        auto rank = columnInt(procs, 1);
        std::string host = columnText(procs, 4);
        int64_t osPid = procs.int64(5);
        std::string label = rank ? fmt::format("rank {}", *rank)
                                 : fmt::format("pid {} (no rank)", osPid);
        begin();
        b += fmt::format("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, "
                         "\"args\": {{\"name\": ",
                         pid);
        appendString(b, label);
        b += ", \"hpcprof_rank\": " + (rank ? std::to_string(*rank) : std::string("null"));
        b += ", \"hpcprof_rank_source\": ";
        appendString(b, columnText(procs, 2));
        if (auto ws = columnInt(procs, 3)) b += fmt::format(", \"hpcprof_world_size\": {}", *ws);
        b += ", \"hpcprof_host\": ";
        appendString(b, host);
        b += fmt::format(", \"hpcprof_pid\": {}, \"hpcprof_command\": ", osPid);
        appendString(b, columnText(procs, 6));
        b += "}}";
        begin();
        b += fmt::format("{{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": {}, "
                         "\"tid\": 0, \"args\": {{\"sort_index\": {}}}}}",
                         pid, rank ? *rank : 1000000 + pid);
        result.processes++;

        std::vector<TrackRow> rows;
        tracks.bind(1, pid);
        while (tracks.step())
            rows.push_back({tracks.int64(0), pid, tracks.text(1), tracks.text(2),
                            columnInt(tracks, 3), columnInt(tracks, 4), columnInt(tracks, 5),
                            columnInt(tracks, 7), columnInt(tracks, 8),
                            tracks.isNull(6) ? std::nullopt
                                             : std::optional<std::string>(tracks.text(6))});
        tracks.reset();

        for (const TrackRow& t : rows) {
            begin();
            b += fmt::format("{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, "
                             "\"args\": {{\"name\": ",
                             pid, t.id);
            appendString(b, t.name);
            b += ", \"hpcprof_track_kind\": ";
            appendString(b, t.kind);
            if (t.device) b += fmt::format(", \"hpcprof_device\": {}", *t.device);
            if (t.stream) b += fmt::format(", \"hpcprof_stream\": {}", *t.stream);
            if (t.tid) b += fmt::format(", \"hpcprof_tid\": {}", *t.tid);
            if (t.threadName) {
                b += ", \"hpcprof_thread_name\": ";
                appendString(b, *t.threadName);
            }
            b += "}}";
            begin();
            b += fmt::format("{{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": {}, "
                             "\"tid\": {}, \"args\": {{\"sort_index\": {}}}}}",
                             pid, t.id, t.id);
            result.tracks++;
            if (!t.first || !t.last) continue;

            events.bind(1, *t.first);
            events.bind(2, *t.last);
            events.bind(3, winEnd);
            events.bind(4, winStart);
            args.bind(1, *t.first);
            args.bind(2, *t.last);
            bool argRow = args.step();
            bool gpuTrack = t.kind == "gpu_stream";
            while (events.step()) {
                int64_t id = events.int64(0);
                int64_t ts = events.int64(1), dur = events.int64(2);
                auto cat = categories.find(events.int64(3));
                std::string_view catName =
                    cat == categories.end() ? std::string_view("unknown") : cat->second;
                begin();
                b += fmt::format("{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"ts\": ", pid, t.id);
                appendMicros(b, ts);
                b += ", \"dur\": ";
                appendMicros(b, dur);
                b += ", \"name\": ";
                appendString(b, events.text(4));
                b += ", \"cat\": ";
                appendString(b, catName);
                b += ", \"args\": {\"hpcprof_category\": ";
                appendString(b, catName);
                auto intArg = [&](const char* key, int col) {
                    if (!events.isNull(col)) b += fmt::format(", \"{}\": {}", key, events.int64(col));
                };
                auto textArg = [&](const char* key, int col) {
                    if (events.isNull(col)) return;
                    b += fmt::format(", \"{}\": ", key);
                    appendString(b, events.text(col));
                };
                intArg("bytes", 5);
                intArg("peer", 6);
                textArg("communicator", 7);
                intArg("communicator_size", 8);
                textArg("communicator_kind", 9);
                intArg("seq", 10);
                intArg("correlation", 11);
                intArg("count", 12);
                textArg("object", 13);
                intArg("offset", 14);
                intArg("errno", 15);
                intArg("fd", 16);
                intArg("tag", 17);
                while (argRow && args.int64(0) < id) argRow = args.step();
                while (argRow && args.int64(0) == id) {
                    b += ", ";
                    appendString(b, args.text(1));
                    b += ": ";
                    appendValue(b, args.get(), 2);
                    argRow = args.step();
                }
                b += "}}";
                result.events++;
                if (!events.isNull(11)) {
                    // Flow ids are global in the viewer; correlation ids are per process.
                    int64_t flowId = (pid << 40) | (events.int64(11) & ((int64_t(1) << 40) - 1));
                    begin();
                    b += fmt::format("{{\"ph\": \"{}\", {}\"id\": {}, \"pid\": {}, \"tid\": {}, "
                                     "\"ts\": ",
                                     gpuTrack ? "f" : "s", gpuTrack ? "\"bp\": \"e\", " : "",
                                     flowId, pid, t.id);
                    appendMicros(b, ts);
                    b += ", \"name\": \"launch\", \"cat\": \"correlation\"}";
                    result.flows++;
                }
                out.maybeFlush();
            }
            events.reset();
            args.reset();
        }
    }
    b += "\n]}\n";
    Status s = out.close();
    for (const auto* st : {&procs, &tracks, &events, &args})
        if (s.ok() && !st->error().ok()) s = st->error();
    if (!s.ok()) return s; // the pending output removes the temporary file
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::analyzer
