// SPDX-License-Identifier: MIT
// The fast path: the input is taken in large blocks (read(2) for plain files, zlib's output for
// gzip), each checked for valid UTF-8 in one vectorised pass, and the elements of traceEvents are parsed straight from the block
// (event_parser); an element cut by the block's end is parsed again once more input is in. The small top-level members around the array (distributedInfo,
// deviceProperties, ...) go through nlohmann's SAX parser with the same handler as before, as
// does any document that is not an object or an array. Memory: one block plus the largest
// single element or top-level member, never the file.
#include "chrome_reader.hpp"

#include <algorithm>
#include <cstring>
#include <istream>
#include <memory>

#include <nlohmann/json.hpp>

#include "event_parser.hpp"
#include "input_stream.hpp"
#include "json_scanner.hpp"
#include "sax_handler.hpp"

namespace hpcprof::import {

namespace {

constexpr size_t kBlock = size_t(1) << 20; // bytes read at a time (grows for larger elements)
constexpr size_t kFront = 64;              // slack before the data: room for a batch's '['
// Readable bytes after the data, for the parser's and the scanner's vector loads.
constexpr size_t kPadding = kParserPadding + kScanPadding;

/// "line L, column C (byte B)" as nlohmann writes it: B counts the offending byte (1-based),
/// C is B's place in its line. Finding the line means reading the file again up to `offset`,
/// which only an error pays for.
std::string positionText(const std::string& path, uint64_t offset) {
    uint64_t lines = 1, lineStart = 0;
    BlockInput in;
    if (in.open(path).ok()) {
        std::unique_ptr<char[]> buf(new char[kBlock]);
        uint64_t base = 0;
        while (base < offset) {
            size_t n = in.read(buf.get(), kBlock);
            if (n == 0) break;
            size_t upto = size_t(std::min<uint64_t>(n, offset - base));
            for (const char* p = buf.get(); (p = static_cast<const char*>(
                                                 std::memchr(p, '\n', size_t(buf.get() + upto - p))));
                 ++p) {
                ++lines;
                lineStart = base + uint64_t(p - buf.get()) + 1;
            }
            base += n;
        }
    }
    return "line " + std::to_string(lines) + ", column " + std::to_string(offset + 1 - lineStart) +
           " (byte " + std::to_string(offset + 1) + ")";
}

std::string charText(int c) {
    if (c < 0) return "end of input";
    if (c < 0x20 || c >= 0x7f) return "byte " + std::to_string(c & 0xff);
    return std::string("'") + char(c) + "'";
}

/// Forwards to the importer's sink, counting the elements of event arrays that are objects
/// (events) and those that are not: an array of numbers is not a trace.
class CountingSink : public EventSink {
public:
    explicit CountingSink(EventSink& sink) : m_sink(sink) {}
    void onEvent(const ParsedEvent& e) override {
        ++objects;
        m_sink.onEvent(e);
    }
    void onTopLevel(const std::string& key, const ArgValue& v) override {
        m_sink.onTopLevel(key, v);
    }
    void onNonObjectEvent() override {
        ++others;
        m_sink.onNonObjectEvent();
    }
    int64_t objects = 0, others = 0;

private:
    EventSink& m_sink;
};

const char* jsonKindName(int c) {
    switch (c) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
    }
}

/// What a parsed document that reached no event array is, from its top-level keys.
std::string describeNonTrace(const std::vector<std::string>& keys, int traceEventsKind) {
    if (traceEventsKind)
        return std::string("a JSON object whose traceEvents is ") + jsonKindName(traceEventsKind) +
               ", not an array of events";
    auto has = [&](std::string_view k) {
        return std::find(keys.begin(), keys.end(), k) != keys.end();
    };
    if (has("nodes") && (has("schema") || has("pid") || has("finish_ts")))
        return "a PyTorch execution trace (ExecutionTraceObserver: an operator graph, no timed "
               "events); import the profiler's trace instead (torch.profiler with "
               "on_trace_ready=tensorboard_trace_handler, or prof.export_chrome_trace())";
    if (keys.empty()) return "an empty JSON object, without traceEvents";
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    return "a JSON object without traceEvents (its keys: " + list + ")";
}

class FastReader {
public:
    FastReader(const std::string& path, BlockInput& in, EventSink& sink, const ProgressFn& progress)
        : m_path(path), m_in(in), m_sink(sink), m_progress(progress),
          m_topLevel(sink, nullptr, m_noProgress) {}

    ReadOutcome run() {
        // Read, not mapped: a plain file mapped whole showed no measurable gain here, and one
        // truncated by another program while it is imported would kill us with SIGBUS.
        m_cap = kBlock;
        m_buf.reset(new char[kFront + m_cap + kPadding]);
        m_data = m_buf.get() + kFront;
        readMore(0);
        bool ok = false;
        int c = peek();
        if (c == '{') {
            ++m_pos;
            ok = readObject();
        } else if (c == '[') {
            ++m_pos;
            ok = readEvents();
        }
        if (ok) ok = expectEnd();
        if (ok && !m_outcome.eventArray)
            m_outcome.notATrace = describeNonTrace(m_keys, m_traceEventsKind);
        else if (ok && m_sink.objects == 0 && m_sink.others > 0)
            m_outcome.notATrace = "an array of " + std::to_string(m_sink.others) +
                                  " JSON values, none of them an event object";
        return m_outcome;
    }

private:
    /// Discards data[0, keep) and reads more after what remains; false at the end of input.
    bool readMore(size_t keep) {
        if (keep > 0) {
            std::memmove(m_buf.get() + kFront, m_data + keep, m_size - keep);
            m_size -= keep;
            m_base += keep;
            m_pos -= keep;
            m_checked -= keep;
            if (m_utf8Bad != SIZE_MAX) m_utf8Bad = m_utf8Bad > keep ? m_utf8Bad - keep : 0;
        }
        if (m_size == m_cap) { // one element or member larger than the buffer: grow
            m_cap *= 2;
            std::unique_ptr<char[]> bigger(new char[kFront + m_cap + kPadding]);
            std::memcpy(bigger.get() + kFront, m_data, m_size);
            m_buf = std::move(bigger);
            m_data = m_buf.get() + kFront;
        }
        size_t n = m_eof ? 0 : m_in.read(m_buf.get() + kFront + m_size, m_cap - m_size);
        m_size += n;
        if (n == 0) m_eof = true;
        std::memset(m_buf.get() + kFront + m_size, ' ', kPadding);
        checkUtf8();
        return n > 0;
    }

    /// UTF-8 up to the last whole character (all of it at the end of input).
    void checkUtf8() {
        size_t safe = m_eof ? m_size : utf8CompletePrefix(m_data, m_size);
        if (m_utf8Bad == SIZE_MAX && safe > m_checked) {
            size_t bad = findInvalidUtf8(m_data + m_checked, safe - m_checked);
            if (bad < safe - m_checked) m_utf8Bad = m_checked + bad;
        }
        if (safe > m_checked) m_checked = safe;
    }

    /// The next non-space byte (not consumed), or -1 at the end of input.
    int peek() {
        for (;;) {
            while (m_pos < m_size && isJsonSpace(m_data[m_pos])) ++m_pos;
            if (m_pos < m_size) return static_cast<unsigned char>(m_data[m_pos]);
            if (m_eof || !readMore(m_pos)) return -1;
        }
    }

    /// Scans the value at m_pos, reading more input as needed while keeping data from `keep`
    /// (<= m_pos); returns its end, or SIZE_MAX after reporting an error.
    size_t scan(size_t& keep) {
        for (;;) {
            ScanResult r = scanValue(m_data, m_size, m_pos, m_eof);
            if (r.kind == ScanResult::Kind::Complete) return r.end;
            if (r.kind == ScanResult::Kind::Error) {
                fail(m_base + r.errorAt, r.what);
                return SIZE_MAX;
            }
            readMore(keep);
            keep = 0;
        }
    }

    bool fail(uint64_t offset, const std::string& what) {
        if (m_outcome.complete) {
            m_outcome.complete = false;
            m_outcome.error = "parse error at " + positionText(m_path, offset) + ": " + what;
        }
        return false;
    }

    bool unexpected(int c, const char* context, const char* expected) {
        uint64_t at = c < 0 ? m_base + m_size : m_base + m_pos;
        return fail(at, std::string("syntax error while parsing ") + context + " - unexpected " +
                            charText(c) + "; expected " + expected);
    }

    /// Consumes `close` if it is next (an empty container, or the end of one).
    bool closes(char close) {
        if (peek() != close) return false;
        ++m_pos;
        return true;
    }

    enum class AfterElement { Closed, Next, Bad };
    /// After a container's element: its `close` (consumed), or the ',' before the next element
    /// (consumed), or anything else (the error is set).
    AfterElement afterElement(char close, const char* context, const char* expected) {
        if (closes(close)) return AfterElement::Closed;
        int c = peek();
        if (c != ',') {
            unexpected(c, context, expected);
            return AfterElement::Bad;
        }
        ++m_pos;
        return AfterElement::Next;
    }

    bool readObject() {
        if (closes('}')) return true;
        for (;;) {
            int c = peek();
            if (c != '"') return unexpected(c, "object key", "string literal");
            if (!readMember()) return false;
            AfterElement next = afterElement('}', "object", "',' or '}'");
            if (next != AfterElement::Next) return next == AfterElement::Closed;
        }
    }

    /// One top-level "key": value. traceEvents arrays are streamed; anything else is held
    /// whole and handed to nlohmann as the document {"key": value}.
    bool readMember() {
        size_t keep = m_pos; // the member's start, kept until the member is read
        size_t keyEnd = scan(keep);
        if (keyEnd == SIZE_MAX) return false;
        size_t keyStart = keep;
        m_pos = keyEnd;
        // The colon and the value's start, without letting go of the key (more input moves it
        // to the front of the buffer).
        auto skipSpaceKeepingKey = [&] {
            for (;;) {
                while (m_pos < m_size && isJsonSpace(m_data[m_pos])) ++m_pos;
                if (m_pos < m_size || m_eof) return;
                size_t shift = keyStart;
                readMore(keyStart);
                keyEnd -= shift;
                keyStart = 0;
            }
        };
        skipSpaceKeepingKey();
        int c = m_pos < m_size ? static_cast<unsigned char>(m_data[m_pos]) : -1;
        if (c != ':') return unexpected(c, "object separator", "':'");
        ++m_pos;
        skipSpaceKeepingKey();
        if (m_pos >= m_size) return unexpected(-1, "value", "value");
        std::string_view rawKey(m_data + keyStart, keyEnd - keyStart);
        const bool traceEvents = keyIs(rawKey, "traceEvents");
        if (m_data[m_pos] == '[' && traceEvents) {
            ++m_pos;
            return readEvents();
        }
        if (traceEvents) m_traceEventsKind = static_cast<unsigned char>(m_data[m_pos]);
        if (m_keys.size() < kKeysKept) m_keys.push_back(decodedKey(rawKey));
        keep = keyStart;
        size_t end = scan(keep);
        if (end == SIZE_MAX) return false;
        std::string doc;
        doc.reserve(end - keep + 2);
        doc += '{';
        doc.append(m_data + keep, end - keep);
        doc += '}';
        uint64_t memberOffset = m_base + keep;
        m_pos = end;
        m_topLevel.resetDocument();
        bool ok = false;
        try {
            ok = nlohmann::json::sax_parse(doc.begin(), doc.end(), &m_topLevel,
                                           nlohmann::json::input_format_t::json, true);
        } catch (const std::exception& e) {
            return fail(memberOffset, e.what());
        }
        if (!ok) {
            // Positions count from the '{' added in front of the member.
            size_t pos = m_topLevel.errorPosition();
            uint64_t at = memberOffset + (pos >= 2 ? pos - 2 : 0);
            return fail(at, m_topLevel.errorWhat().empty() ? "parse error" : m_topLevel.errorWhat());
        }
        return true;
    }

    /// A raw key (with its quotes) as text; escaped keys are decoded first.
    static std::string decodedKey(std::string_view raw) {
        if (raw.find('\\') == std::string_view::npos)
            return std::string(raw.substr(1, raw.size() - 2));
        auto decoded = nlohmann::json::parse(raw, nullptr, false);
        return decoded.is_string() ? decoded.get<std::string>() : std::string(raw);
    }

    /// Whether a raw key (with its quotes) is `name`; escaped keys are decoded first.
    static bool keyIs(std::string_view raw, std::string_view name) {
        if (raw.find('\\') == std::string_view::npos)
            return raw.size() == name.size() + 2 && raw.substr(1, name.size()) == name;
        auto decoded = nlohmann::json::parse(raw, nullptr, false);
        return decoded.is_string() && decoded.get_ref<const std::string&>() == name;
    }

    /// The elements of an event array (m_pos just after its '['), up to and including ']'.
    bool readEvents() {
        m_outcome.eventArray = true;
        if (closes(']')) return true;
        for (;;) {
            int c = peek();
            if (c < 0 || !startsValue(char(c))) return unexpected(c, "value", "value");
            for (;;) {
                size_t bad = m_utf8Bad == SIZE_MAX ? SIZE_MAX
                                                   : (m_utf8Bad > m_pos ? m_utf8Bad - m_pos : 0);
                ElementOutcome r = m_parser.parse(m_data + m_pos, m_data + m_size, m_eof, bad, m_sink);
                if (r.kind == ElementOutcome::Kind::Done) {
                    m_pos += r.length;
                    countEvent();
                    break;
                }
                if (r.kind == ElementOutcome::Kind::Error)
                    return fail(m_base + m_pos + r.errorOffset, "invalid event: " + r.error);
                readMore(m_pos); // the element goes on past the block
            }
            AfterElement next = afterElement(']', "array", "',' or ']'");
            if (next != AfterElement::Next) return next == AfterElement::Closed;
        }
    }

    static bool startsValue(char c) {
        return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
               c == 'f' || c == 'n';
    }

    void countEvent() {
        if ((++m_outcome.events & 0xFFFF) == 0 && m_progress)
            m_progress(m_in.bytesRead(), m_in.fileBytesRead());
    }

    bool expectEnd() {
        int c = peek();
        if (c >= 0) return unexpected(c, "value", "end of input");
        return true;
    }

    static constexpr size_t kKeysKept = 8; ///< top-level keys kept to say what a non-trace is

    const std::string& m_path;
    BlockInput& m_in;
    CountingSink m_sink;
    std::vector<std::string> m_keys;
    int m_traceEventsKind = 0; ///< first byte of a traceEvents value that is not an array
    const ProgressFn& m_progress;
    ProgressFn m_noProgress;
    detail::SaxHandler m_topLevel;
    EventParser m_parser;
    std::unique_ptr<char[]> m_buf;
    const char* m_data = nullptr;
    size_t m_cap = 0;   ///< bytes m_data can hold (padding and front slack come on top)
    size_t m_size = 0;  ///< bytes in m_data
    size_t m_pos = 0;   ///< next byte to look at
    uint64_t m_base = 0; ///< file offset of m_data[0]
    bool m_eof = false;
    size_t m_checked = 0;           ///< data[0, m_checked) is checked UTF-8
    size_t m_utf8Bad = SIZE_MAX;    ///< first byte of invalid UTF-8 in data, if any
    ReadOutcome m_outcome;
};

/// The decompressor failed after `out.bytes` bytes: its message explains the parse error that
/// followed.
void noteReadError(ReadOutcome& out, const std::string& readError) {
    out.complete = false;
    out.error = "compressed data damaged after byte " + std::to_string(out.bytes) + " (" +
                readError + ")";
}

/// Documents that are not an object or an array (empty, a scalar, not JSON): nlohmann's
/// streaming parser over the whole input, which also words the error.
Result<ReadOutcome> readWithNlohmann(const std::string& path, EventSink& sink,
                                     const ProgressFn& progress) {
    InputStreamBuf buf;
    HPCPROF_RETURN_IF_ERROR(buf.open(path));
    std::istream in(&buf);
    detail::SaxHandler handler(sink, &buf, progress);
    bool ok = false;
    try {
        ok = nlohmann::json::sax_parse(in, &handler, nlohmann::json::input_format_t::json, true);
    } catch (const std::exception& e) { // the SAX parser reports through parse_error; be safe
        handler.outcome().complete = false;
        handler.outcome().error = e.what();
    }
    ReadOutcome out = handler.outcome();
    out.bytes = buf.bytesRead();
    if (!buf.readError().empty()) {
        noteReadError(out, buf.readError());
    } else if (!ok && out.complete) {
        out.complete = false;
        out.error = "parse error";
    }
    // Documents that reach this path are not an object or an array: a lone scalar.
    if (out.complete && handler.loneScalar())
        out.notATrace =
            std::string("a JSON ") + handler.loneScalar() + ", not an object with traceEvents";
    return out;
}

} // namespace

Result<ReadOutcome> readChromeTrace(const std::string& path, EventSink& sink,
                                    const ProgressFn& progress) {
    // The first non-space byte decides the path; a few KiB are enough to see it.
    {
        BlockInput probe;
        HPCPROF_RETURN_IF_ERROR(probe.open(path));
        char head[4096];
        size_t n = probe.read(head, sizeof head);
        size_t i = 0;
        while (i < n && isJsonSpace(head[i])) ++i;
        if (i == n || (head[i] != '{' && head[i] != '['))
            return readWithNlohmann(path, sink, progress);
    }
    BlockInput in;
    HPCPROF_RETURN_IF_ERROR(in.open(path));
    FastReader reader(path, in, sink, progress);
    ReadOutcome out = reader.run();
    out.bytes = in.bytesRead();
    if (!in.readError().empty()) noteReadError(out, in.readError());
    return out;
}

} // namespace hpcprof::import
