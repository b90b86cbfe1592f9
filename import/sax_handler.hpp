// SPDX-License-Identifier: MIT
// nlohmann::json SAX handler for Chrome trace JSON: hands each element of `traceEvents` (or of a
// bare top-level array) to a sink as it is parsed and keeps the scalar top-level facts. The fast
// reader (chrome_reader.cpp) uses it for the small top-level members around the event array and
// for documents that are neither an object nor an array; it is the reference for what an event
// parses to.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chrome_reader.hpp"
#include "input_stream.hpp"

namespace hpcprof::import::detail {

/// A scalar as the SAX callbacks deliver it, before it is stored anywhere.
struct Scalar {
    ArgValue::Kind kind;
    int64_t i = 0;
    double d = 0;
    std::string_view text; ///< Text value, or the literal text of a Real
    /// A Real whose text is "int.frac" (no sign or exponent, int < 10^18, 1-9 fraction digits):
    /// its digits as integers, so times convert without reading the text again.
    bool decimal = false;
    uint8_t fracDigits = 0;
    uint32_t fracPart = 0;
    uint64_t intPart = 0;

    static Scalar null() { return {ArgValue::Kind::Null, 0, 0, {}}; }
    static Scalar integer(ArgValue::Kind k, int64_t v) { return {k, v, 0, {}}; }
    static Scalar real(double v, std::string_view text) { return {ArgValue::Kind::Real, 0, v, text}; }
    static Scalar string(std::string_view v) { return {ArgValue::Kind::Text, 0, 0, v}; }
};

/// Where in the document the parser is. Skip covers subtrees hpcprof does not read.
enum class Ctx : uint8_t {
    TopObject,    // { "traceEvents": ..., "distributedInfo": ..., ... }
    TopSub,       // an object value at the top level
    TopSubArray,  // an array value at the top level other than traceEvents
    TopSubArrayObject,
    Events,       // traceEvents, or a bare top-level array
    Event,        // one event object
    Args,         // an event's args
    ArgArray,     // an array inside args (kept when flat)
    Skip,
};

/// Clears the reused event for the next element.
inline void resetEvent(ParsedEvent& e) {
    e.ph = 0;
    e.hasName = false;
    e.name.clear();
    e.cat.clear();
    e.pid.present = e.tid.present = e.id.present = false;
    e.ts.present = e.dur.present = false;
    e.bp.clear();
    e.typeError = false;
    e.argCount = 0;
}

/// Appends an arg slot named `key` (reusing the event's storage; events of one shape repeat
/// their keys in the same slots, so the key is usually there already).
inline ArgValue& addArg(ParsedEvent& e, std::string_view key) {
    if (e.argCount == e.args.size()) e.args.emplace_back();
    auto& slot = e.args[e.argCount++];
    if (std::string_view(slot.first) != key) slot.first.assign(key);
    slot.second.kind = ArgValue::Kind::Null;
    slot.second.text.clear();
    return slot.second;
}

/// An arg holding a scalar.
inline void addScalarArg(ParsedEvent& e, std::string_view key, const Scalar& s) {
    ArgValue& a = addArg(e, key);
    a.kind = s.kind;
    a.i = s.i;
    a.d = s.d;
    if (s.kind == ArgValue::Kind::Text) a.text.assign(s.text);
}

/// One scalar of a flat array arg, joined with ','.
inline void appendArrayItem(std::string& text, size_t& count, const Scalar& s) {
    if (count++) text += ',';
    if (s.kind == ArgValue::Kind::Int) {
        char digits[24];
        auto r = std::to_chars(digits, digits + sizeof digits, s.i);
        text.append(digits, size_t(r.ptr - digits));
    } else
        text.append(s.text);
}

inline void setId(IdField& f, const Scalar& s, bool& typeError) {
    f.present = true;
    if (s.kind == ArgValue::Kind::Int) {
        f.isInt = true;
        f.i = s.i;
    } else if (s.kind == ArgValue::Kind::Text) {
        f.isInt = false;
        f.text.assign(s.text);
    } else {
        f.present = false;
        typeError = true;
    }
}

inline void setTime(TimeField& f, const Scalar& s, bool& typeError) {
    f.present = true;
    if (s.kind == ArgValue::Kind::Int) {
        f.isInt = true;
        f.i = s.i;
    } else if (s.kind == ArgValue::Kind::Real) {
        f.isInt = false;
        f.text.assign(s.text);
        f.decimal = s.decimal;
        f.intPart = s.intPart;
        f.fracPart = s.fracPart;
        f.fracDigits = s.fracDigits;
    } else {
        f.present = false;
        typeError = true;
    }
}

/// A scalar member of an event object. Keys are told apart by length and bytes (this runs for
/// every member of every event); the same keys as comparing whole strings.
inline void setEventField(ParsedEvent& e, std::string_view k, const Scalar& s) {
    bool text = s.kind == ArgValue::Kind::Text;
    auto is2 = [&](char a, char b) { return k[0] == a && k[1] == b; };
    switch (k.size()) {
    case 2:
        if (is2('p', 'h')) {
            if (text && s.text.size() == 1)
                e.ph = s.text[0];
            else
                e.typeError = true;
        } else if (is2('t', 's')) {
            setTime(e.ts, s, e.typeError);
        } else if (is2('i', 'd')) {
            setId(e.id, s, e.typeError);
        } else if (is2('b', 'p')) {
            if (text) e.bp.assign(s.text);
        }
        break;
    case 3:
        if (k == "cat") {
            if (text) e.cat.assign(s.text); // non-text categories are simply absent
        } else if (k == "dur") {
            setTime(e.dur, s, e.typeError);
        } else if (k == "pid") {
            setId(e.pid, s, e.typeError);
        } else if (k == "tid") {
            setId(e.tid, s, e.typeError);
        }
        break;
    case 4:
        if (k == "name") {
            if (text) {
                e.name.assign(s.text);
                e.hasName = true;
            } else {
                e.typeError = true;
            }
        }
        break;
    case 7:
        if (k == "bind_id") setId(e.id, s, e.typeError);
        break;
    default: break;
    }
}

/// An object or array member of an event: a type error for the fields that must be scalars.
inline void checkContainerField(ParsedEvent& e, std::string_view k) {
    if (k == "ph" || k == "name" || k == "ts" || k == "dur" || k == "pid" || k == "tid")
        e.typeError = true;
}

constexpr size_t kMaxTopLevelEntries = 4096;

class SaxHandler {
public:
    /// `in` (may be null) is asked for the byte counts reported to `progress`.
    SaxHandler(EventSink& sink, const InputStreamBuf* in, const ProgressFn& progress)
        : m_sink(sink), m_in(in), m_progress(progress) {
        m_stack.reserve(16);
    }

    /// Readies the handler for another document (one top-level member handed over by the fast
    /// reader); the count of top-level entries carries over.
    void resetDocument() {
        m_stack.clear();
        m_outcome = ReadOutcome{};
    }

    // --- SAX interface (nlohmann::json_sax) ---
    bool null() { return scalar(Scalar::null()); }
    bool boolean(bool v) { return scalar(Scalar::integer(ArgValue::Kind::Bool, v ? 1 : 0)); }
    bool number_integer(int64_t v) { return scalar(Scalar::integer(ArgValue::Kind::Int, v)); }
    bool number_unsigned(uint64_t v) {
        if (v > uint64_t(std::numeric_limits<int64_t>::max()))
            return scalar(Scalar::real(double(v), std::to_string(v)));
        return scalar(Scalar::integer(ArgValue::Kind::Int, int64_t(v)));
    }
    bool number_float(double v, const std::string& text) { return scalar(Scalar::real(v, text)); }
    bool string(std::string& v) { return scalar(Scalar::string(v)); }
    bool binary(nlohmann::json::binary_t&) { return scalar(Scalar::null()); }

    bool key(std::string& k) {
        m_key.assign(k);
        return true;
    }

    bool start_object(size_t) {
        if (m_stack.empty()) {
            m_stack.push_back(Ctx::TopObject);
            return true;
        }
        Ctx next = Ctx::Skip;
        switch (m_stack.back()) {
        case Ctx::TopObject:
            m_topKey = m_key;
            next = Ctx::TopSub;
            break;
        case Ctx::TopSubArray:
            next = Ctx::TopSubArrayObject;
            break;
        case Ctx::Events:
            resetEvent(m_event);
            next = Ctx::Event;
            break;
        case Ctx::Event:
            if (m_key == "args")
                next = Ctx::Args;
            else
                checkContainerField(m_event, m_key);
            break;
        case Ctx::ArgArray:
            m_arrayFlat = false;
            break;
        default: break;
        }
        m_stack.push_back(next);
        return true;
    }

    bool end_object() {
        Ctx c = m_stack.back();
        m_stack.pop_back();
        if (c == Ctx::Event) {
            m_sink.onEvent(m_event);
            if ((++m_outcome.events & 0xFFFF) == 0 && m_progress && m_in)
                m_progress(m_in->bytesRead(), m_in->fileBytesRead());
        } else if (c == Ctx::TopSubArrayObject) {
            ++m_arrayIndex;
        }
        return true;
    }

    bool start_array(size_t) {
        if (m_stack.empty()) { // a bare array of events is valid Chrome trace JSON
            m_outcome.eventArray = true;
            m_stack.push_back(Ctx::Events);
            return true;
        }
        Ctx next = Ctx::Skip;
        switch (m_stack.back()) {
        case Ctx::TopObject:
            m_topKey = m_key;
            m_arrayIndex = 0;
            next = m_key == "traceEvents" ? Ctx::Events : Ctx::TopSubArray;
            if (next == Ctx::Events) m_outcome.eventArray = true;
            break;
        case Ctx::Events:
            m_sink.onNonObjectEvent();
            ++m_outcome.events;
            break;
        case Ctx::Event: checkContainerField(m_event, m_key); break;
        case Ctx::Args:
            m_arrayFlat = true;
            m_arrayText.clear();
            m_arrayCount = 0;
            next = Ctx::ArgArray;
            break;
        case Ctx::ArgArray: m_arrayFlat = false; break;
        default: break;
        }
        m_stack.push_back(next);
        return true;
    }

    bool end_array() {
        Ctx c = m_stack.back();
        m_stack.pop_back();
        if (c == Ctx::ArgArray && m_arrayFlat) {
            ArgValue& a = addArg(m_event, m_key);
            a.kind = ArgValue::Kind::Text;
            a.text.assign(m_arrayText);
        }
        return true;
    }

    bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
        std::string what = ex.what();
        // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> keep the
        // human part and add the byte offset, which is what a user can seek to.
        if (auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
        std::string byteNote = " (byte " + std::to_string(position) + ")";
        if (auto colon = what.find(": "); colon != std::string::npos)
            what.insert(colon, byteNote);
        else
            what += byteNote;
        m_outcome.complete = false;
        m_outcome.error = what;
        m_errorPosition = position;
        size_t colon = what.find(": ");
        m_errorWhat = colon == std::string::npos ? what : what.substr(colon + 2);
        return false;
    }

    ReadOutcome& outcome() { return m_outcome; }
    /// The kind of a document that is one scalar ("number", "string", ...), else null.
    const char* loneScalar() const { return m_loneScalar; }
    /// Where the last parse error was met (characters read, counting the offending one).
    size_t errorPosition() const { return m_errorPosition; }
    /// The last parse error without its position ("syntax error while parsing ...").
    const std::string& errorWhat() const { return m_errorWhat; }

private:
    bool scalar(const Scalar& s) {
        if (m_stack.empty()) { // a lone scalar document: nothing to read
            m_loneScalar = s.kind == ArgValue::Kind::Text                           ? "string"
                           : s.kind == ArgValue::Kind::Bool                         ? "boolean"
                           : s.kind == ArgValue::Kind::Null                         ? "null"
                                                                                    : "number";
            return true;
        }
        switch (m_stack.back()) {
        case Ctx::TopObject: topLevel(m_key, s); break;
        case Ctx::TopSub: topLevel(m_topKey + "." + m_key, s); break;
        case Ctx::TopSubArrayObject:
            topLevel(m_topKey + "." + std::to_string(m_arrayIndex) + "." + m_key, s);
            break;
        case Ctx::Events:
            m_sink.onNonObjectEvent();
            ++m_outcome.events;
            break;
        case Ctx::Event: setEventField(m_event, m_key, s); break;
        case Ctx::Args: addScalarArg(m_event, m_key, s); break;
        case Ctx::ArgArray: appendArrayItem(m_arrayText, m_arrayCount, s); break;
        default: break;
        }
        return true;
    }

    void topLevel(const std::string& key, const Scalar& s) {
        if (m_topLevelCount++ >= kMaxTopLevelEntries) return;
        ArgValue v;
        v.kind = s.kind;
        v.i = s.i;
        v.d = s.d;
        if (s.kind == ArgValue::Kind::Text) v.text.assign(s.text);
        m_sink.onTopLevel(key, v);
    }

    EventSink& m_sink;
    const InputStreamBuf* m_in;
    const ProgressFn& m_progress;
    std::vector<Ctx> m_stack;
    std::string m_key, m_topKey;
    ParsedEvent m_event;
    size_t m_arrayIndex = 0;
    size_t m_topLevelCount = 0;
    bool m_arrayFlat = true;
    size_t m_arrayCount = 0;
    std::string m_arrayText;
    ReadOutcome m_outcome;
    const char* m_loneScalar = nullptr;
    size_t m_errorPosition = 0;
    std::string m_errorWhat;
};

} // namespace hpcprof::import::detail
