// SPDX-License-Identifier: MIT
#include "event_parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sax_handler.hpp"

namespace hpcprof::import {

using detail::Scalar;

namespace {

constexpr size_t kMaxDepth = 512;

/// Checks that [p, end) is one JSON number: false if not; else whether it is an integer (no
/// fraction or exponent) and whether it has an exponent.
bool numberShape(const char* p, const char* end, bool& integer, bool& exponent) {
    const char* q = p;
    if (q < end && *q == '-') ++q;
    if (q == end) return false;
    if (*q == '0') {
        ++q;
    } else if (*q >= '1' && *q <= '9') {
        while (q < end && unsigned(*q - '0') < 10) ++q;
    } else {
        return false;
    }
    integer = true;
    exponent = false;
    if (q < end && *q == '.') {
        integer = false;
        const char* digits = ++q;
        while (q < end && unsigned(*q - '0') < 10) ++q;
        if (q == digits) return false;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        integer = false;
        exponent = true;
        ++q;
        if (q < end && (*q == '+' || *q == '-')) ++q;
        const char* digits = q;
        while (q < end && unsigned(*q - '0') < 10) ++q;
        if (q == digits) return false;
    }
    return q == end;
}

/// A JSON number token read the way nlohmann's lexer reads it, so both parsers give the same
/// ArgValue: integers that fit int64 are Int, everything else Real with its literal text.
/// False if the token is not a JSON number. The double of a Real is only computed when
/// `needDouble` (event fields and array items use the literal text).
bool readNumber(std::string_view tok, Scalar& out, bool needDouble) {
    const char* p = tok.data();
    const char* end = p + tok.size();
    bool integer = false, exponent = false;
    if (!numberShape(p, end, integer, exponent)) return false;
    if (integer) {
        int64_t v = 0;
        auto r = std::from_chars(p, end, v);
        if (r.ec == std::errc() && r.ptr == end) {
            out = Scalar::integer(ArgValue::Kind::Int, v);
            return true;
        }
    }
    // Real, or an integer beyond int64 (nlohmann keeps those as floating point too). A value
    // beyond double's range is an error there ("number overflow"); only an exponent or a very
    // long literal can get there, so the double is not computed otherwise unless needed.
    double d = 0;
    if (needDouble || exponent || tok.size() > 300) {
        auto r = std::from_chars(p, end, d);
        if (r.ec != std::errc() || r.ptr != end) d = std::strtod(std::string(tok).c_str(), nullptr);
        if (!std::isfinite(d)) return false;
    }
    out = Scalar::real(d, tok);
    return true;
}

/// JSON whitespace; one compare rejects the usual non-space byte (this runs around every token).
inline bool isSpace(char c) {
    auto u = static_cast<unsigned char>(c);
    constexpr uint64_t kSpaces = (1ull << ' ') | (1ull << '\n') | (1ull << '\r') | (1ull << '\t');
    return u <= ' ' && ((kSpaces >> u) & 1);
}

/// The first '"', '\\' or control character in [p, end), or end; reads up to 15 bytes past
/// `end` (the buffer's padding).
const char* findSpecial(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i ctrlMax = _mm_set1_epi8(0x1f);
    for (; p < end; p += 16) {
        __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(x, ctrlMax), ctrlMax));
        if (unsigned m = unsigned(_mm_movemask_epi8(hit))) {
            const char* at = p + __builtin_ctz(m);
            return at < end ? at : end;
        }
    }
    return end;
#else
    while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
    return p;
#endif
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xc0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += char(0xe0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    } else {
        out += char(0xf0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3f));
        out += char(0x80 | ((cp >> 6) & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    }
}

constexpr const char* kControl = "invalid string: control character must be escaped";

/// A recursive-descent parser over one element at the start of [begin, end). Running into
/// `end` sets hitEnd(): the element continues in input not read yet (unless `atEof`). UTF-8 is
/// checked by the caller, block by block.
class Parser {
public:
    Parser(const char* begin, const char* end, bool atEof, ParsedEvent& event,
           std::string& arrayText, std::string& keyScratch, std::string& valueScratch)
        : m_p(begin), m_begin(begin), m_end(end), m_atEof(atEof), m_event(event),
          m_arrayText(arrayText), m_keyScratch(keyScratch), m_valueScratch(valueScratch) {}

    const char* error() const { return m_error; }
    size_t position() const { return size_t(m_p - m_begin); }
    bool hitEnd() const { return m_hitEnd; }

    bool fail(const char* what) {
        if (!m_error) m_error = what;
        return false;
    }

    void skipSpace() {
        while (m_p < m_end && isSpace(*m_p)) ++m_p;
        if (m_p == m_end) m_hitEnd = true;
    }
    bool consume(char c) {
        skipSpace();
        if (m_p < m_end && *m_p == c) {
            ++m_p;
            return true;
        }
        return false;
    }
    int peek() {
        skipSpace();
        return m_p < m_end ? static_cast<unsigned char>(*m_p) : -1;
    }

    /// A string at m_p (its opening quote): in place when it has no escapes, else decoded into
    /// `scratch`.
    bool string(std::string_view& out, std::string& scratch) {
        const char* start = ++m_p;
        const char* p = findSpecial(start, m_end);
        if (p < m_end && *p == '"') [[likely]] {
            out = std::string_view(start, size_t(p - start));
            m_p = p + 1;
            return true;
        }
        return escapedString(start, p, out, scratch);
    }

    /// The rest of a string from `p` (its first escape, control character or the end of the
    /// block), decoded into `scratch`; apart from the common path so that it stays small.
    [[gnu::noinline]] bool escapedString(const char* start, const char* p, std::string_view& out,
                                         std::string& scratch) {
        scratch.assign(start, size_t(p - start));
        while (p < m_end) {
            char c = *p;
            if (c == '"') {
                out = scratch;
                m_p = p + 1;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20) return failAt(p, kControl);
            if (c != '\\') {
                scratch += c;
                ++p;
                continue;
            }
            if (++p >= m_end) break;
            switch (*p++) {
            case '"': scratch += '"'; break;
            case '\\': scratch += '\\'; break;
            case '/': scratch += '/'; break;
            case 'b': scratch += '\b'; break;
            case 'f': scratch += '\f'; break;
            case 'n': scratch += '\n'; break;
            case 'r': scratch += '\r'; break;
            case 't': scratch += '\t'; break;
            case 'u':
                if (!unicodeEscape(p, scratch)) return false;
                break;
            default: return failAt(p - 1, "invalid string: forbidden character after backslash");
            }
        }
        m_p = m_end;
        m_hitEnd = true;
        return fail("syntax error: unexpected end of input");
    }

    /// The code point of a "\\u" escape at `p` (after the 'u'; with the low surrogate a high
    /// one needs) appended to `scratch` as UTF-8, `p` moved past it. False when invalid (the
    /// error is set). An escape cut by the end of the block is left for the caller to reach
    /// that end: `p` stays, or moves past a high surrogate, and nothing is appended.
    bool unicodeEscape(const char*& p, std::string& scratch) {
        if (m_end - p < 4) return true;
        int32_t cp = hex4(p);
        if (cp < 0) return failAt(p, "invalid string: '\\u' must be followed by 4 hex digits");
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (m_end - p < 6) return true;
            int32_t lo = p + 1 < m_end && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : -1;
            if (lo < 0xdc00 || lo > 0xdfff)
                return failAt(p, "invalid string: surrogate U+D800..U+DBFF must be "
                                 "followed by U+DC00..U+DFFF");
            p += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return failAt(p, "invalid string: surrogate U+DC00..U+DFFF must follow "
                             "U+D800..U+DBFF");
        }
        appendUtf8(scratch, uint32_t(cp));
        return true;
    }

    /// A scalar at m_p whose first byte is `c` (not '{' or '[').
    bool scalar(int c, Scalar& out, std::string& scratch, bool needDouble) {
        if (c == '"') {
            std::string_view s;
            if (!string(s, scratch)) return false;
            out = Scalar::string(s);
            return true;
        }
        if (c >= '0' && c <= '9' && number(out, needDouble)) [[likely]]
            return true;
        return otherScalar(c, out, needDouble);
    }

    /// Literals and the numbers number() leaves (kept apart so that scalar() stays small).
    [[gnu::noinline]] bool otherScalar(int c, Scalar& out, bool needDouble) {
        const char* start = m_p;
        bool numeric = c == '-' || (c >= '0' && c <= '9');
        while (m_p < m_end && !isSpace(*m_p) && *m_p != ',' && *m_p != ']' && *m_p != '}' &&
               *m_p != ':')
            ++m_p;
        if (m_p == m_end && !m_atEof) { // the token may go on in the next block
            m_hitEnd = true;
            return fail("syntax error: unexpected end of input");
        }
        std::string_view tok(start, size_t(m_p - start));
        if (numeric) {
            if (readNumber(tok, out, needDouble)) return true;
            m_p = start;
            return fail("invalid number");
        }
        if (tok == "true" || tok == "false") {
            out = Scalar::integer(ArgValue::Kind::Bool, tok[0] == 't' ? 1 : 0);
            return true;
        }
        if (tok == "null") {
            out = Scalar::null();
            return true;
        }
        m_p = start;
        return fail("invalid literal");
    }

    /// The common numbers in one pass: a non-negative integer below 10^18, or such an integer
    /// with 1-9 fraction digits (Kineto's times). False, with nothing consumed, for anything
    /// else (longer, signed, exponent, malformed, or cut by the end of the block): the general
    /// path decides then, by the same rules.
    bool number(Scalar& out, bool needDouble) {
        const char* start = m_p;
        const char* q = start;
        uint64_t v = 0;
        if (*q == '0') {
            ++q;
        } else {
            while (q < m_end && unsigned(*q - '0') < 10) v = v * 10 + unsigned(*q++ - '0');
        }
        if (q - start > 18 || q >= m_end) return false;
        if (endsNumber(*q)) {
            m_p = q;
            out = Scalar::integer(ArgValue::Kind::Int, int64_t(v));
            return true;
        }
        if (*q != '.') return false;
        const char* digits = ++q;
        uint32_t frac = 0;
        while (q < m_end && unsigned(*q - '0') < 10 && q - digits < 9)
            frac = frac * 10 + unsigned(*q++ - '0');
        if (q == digits || q >= m_end || !endsNumber(*q)) return false;
        double d = 0;
        if (needDouble) {
            auto r = std::from_chars(start, q, d);
            if (r.ec != std::errc() || r.ptr != q) return false;
        }
        out = Scalar::real(d, std::string_view(start, size_t(q - start)));
        out.decimal = true;
        out.intPart = v;
        out.fracPart = frac;
        out.fracDigits = uint8_t(q - digits);
        m_p = q;
        return true;
    }
    static bool endsNumber(char c) { return c == ',' || c == '}' || c == ']' || isSpace(c); }

    /// Any value, checked and dropped.
    bool skipValue(size_t depth) {
        int c = peek();
        if (c == '{' || c == '[') {
            if (depth >= kMaxDepth) return fail("nesting too deep");
            char close = c == '{' ? '}' : ']';
            ++m_p;
            if (consume(close)) return true;
            for (;;) {
                if (c == '{') {
                    if (peek() != '"') return fail("syntax error: expected string literal");
                    std::string_view key;
                    if (!string(key, m_valueScratch)) return false;
                    if (!consume(':')) return fail("syntax error: expected ':'");
                }
                if (!skipValue(depth + 1)) return false;
                if (consume(',')) continue;
                if (consume(close)) return true;
                return fail(c == '{' ? "syntax error: expected ',' or '}'"
                                     : "syntax error: expected ',' or ']'");
            }
        }
        if (c < 0) return fail("syntax error: unexpected end of input");
        Scalar s = Scalar::null();
        return scalar(c, s, m_valueScratch, false);
    }

    /// An args member's array: kept as text when flat (scalars only).
    bool argArray(std::string_view key) {
        ++m_p; // '['
        bool flat = true;
        size_t count = 0;
        m_arrayText.clear();
        if (!consume(']')) {
            for (;;) {
                int c = peek();
                if (c == '{' || c == '[') {
                    flat = false;
                    if (!skipValue(1)) return false;
                } else {
                    if (c < 0) return fail("syntax error: unexpected end of input");
                    Scalar s = Scalar::null();
                    if (!scalar(c, s, m_valueScratch, false)) return false;
                    if (flat) detail::appendArrayItem(m_arrayText, count, s);
                }
                if (consume(',')) continue;
                if (consume(']')) break;
                return fail("syntax error: expected ',' or ']'");
            }
        }
        if (flat) {
            ArgValue& a = detail::addArg(m_event, key);
            a.kind = ArgValue::Kind::Text;
            a.text.assign(m_arrayText);
        }
        return true;
    }

    /// The members of the object at '{': `value(key, c)` reads each member's value, which starts
    /// with character `c` (false: stop, with the error it set).
    template <typename Value> bool members(Value&& value) {
        ++m_p; // '{'
        if (consume('}')) return true;
        for (;;) {
            if (peek() != '"') return fail("syntax error: expected string literal");
            std::string_view key;
            if (!string(key, m_keyScratch)) return false;
            if (!consume(':')) return fail("syntax error: expected ':'");
            if (!value(key, peek())) return false;
            if (consume(',')) continue;
            if (consume('}')) return true;
            return fail("syntax error: expected ',' or '}'");
        }
    }

    bool args() {
        return members([&](std::string_view key, int c) {
            if (c == '{') return skipValue(2); // nested objects are not kept
            if (c == '[') return argArray(key);
            if (c < 0) return fail("syntax error: unexpected end of input");
            Scalar s = Scalar::null();
            if (!scalar(c, s, m_valueScratch, true)) return false;
            detail::addScalarArg(m_event, key, s);
            return true;
        });
    }

    bool event() {
        detail::resetEvent(m_event);
        return members([&](std::string_view key, int c) {
            if (c == '{' && key == "args") return args();
            if (c == '{' || c == '[') {
                detail::checkContainerField(m_event, key);
                return skipValue(1);
            }
            if (c < 0) return fail("syntax error: unexpected end of input");
            Scalar s = Scalar::null();
            if (!scalar(c, s, m_valueScratch, false)) return false;
            detail::setEventField(m_event, key, s);
            return true;
        });
    }

    /// One element of the array: an event, or anything else (checked, then counted). Bytes
    /// from `utf8Bad` on are not valid UTF-8: an element reaching them is damaged.
    bool element(EventSink& sink, size_t utf8Bad) {
        int c = peek();
        bool ok = c == '{' ? event() : skipValue(1);
        if (!ok) return false;
        if (position() > utf8Bad) {
            m_p = m_begin + utf8Bad;
            return fail("invalid UTF-8");
        }
        if (c == '{')
            sink.onEvent(m_event);
        else
            sink.onNonObjectEvent();
        return true;
    }

private:
    int32_t hex4(const char* p) const {
        if (m_end - p < 4) return -1;
        int32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            int h = hexValue(p[i]);
            if (h < 0) return -1;
            v = v * 16 + h;
        }
        return v;
    }
    bool failAt(const char* p, const char* what) {
        m_p = p;
        return fail(what);
    }

    const char* m_p;
    const char* m_begin;
    const char* m_end;
    bool m_atEof;
    bool m_hitEnd = false;
    ParsedEvent& m_event;
    std::string& m_arrayText;
    std::string& m_keyScratch;
    std::string& m_valueScratch;
    const char* m_error = nullptr;
};

} // namespace

struct EventParser::Impl {
    ParsedEvent event;
    std::string arrayText, keyScratch, valueScratch;
};

EventParser::EventParser() : m_impl(std::make_unique<Impl>()) {}
EventParser::~EventParser() = default;

ElementOutcome EventParser::parse(const char* begin, const char* end, bool atEof, size_t utf8Bad,
                                  EventSink& sink) {
    Impl& m = *m_impl;
    Parser p(begin, end, atEof, m.event, m.arrayText, m.keyScratch, m.valueScratch);
    ElementOutcome out;
    if (p.element(sink, utf8Bad)) {
        out.length = p.position();
        return out;
    }
    if (p.hitEnd() && !atEof) {
        out.kind = ElementOutcome::Kind::NeedMore;
        return out;
    }
    out.kind = ElementOutcome::Kind::Error;
    out.error = p.error() ? p.error() : "parse error";
    out.errorOffset = p.position();
    return out;
}

} // namespace hpcprof::import
