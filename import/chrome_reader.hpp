// SPDX-License-Identifier: MIT
// Streaming reader of Chrome trace JSON (the format PyTorch's profiler, Kineto, writes): a SAX
// handler over nlohmann::json that hands each element of `traceEvents` (or of a bare top-level
// array) to a sink as it is parsed, and keeps the scalar top-level facts (distributedInfo,
// deviceProperties, ...). Nothing is held beyond the current event, so memory does not grow with
// the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::import {

/// A JSON scalar kept from an event's args or from the top level. Flat arrays of scalars are
/// kept as Text joined by ','; deeper values are dropped.
struct ArgValue {
    enum class Kind : uint8_t { Null, Bool, Int, Real, Text };
    Kind kind = Kind::Null;
    int64_t i = 0;      ///< Int, Bool (0/1)
    double d = 0;       ///< Real
    std::string text;   ///< Text
    bool isNumber() const { return kind == Kind::Int || kind == Kind::Real; }
};

/// pid, tid and flow ids, which Chrome traces allow as numbers or strings.
struct IdField {
    bool present = false;
    bool isInt = false;
    int64_t i = 0;
    std::string text;
};

/// ts or dur as written: an integer, or the text of a fractional number (converted exactly later).
struct TimeField {
    bool present = false;
    bool isInt = false;
    int64_t i = 0;
    std::string text;
    /// The fast parser's digits of a plain "int.frac" text (see detail::Scalar), so the usual
    /// times convert without reading the text again; false when only the text is known.
    bool decimal = false;
    uint8_t fracDigits = 0;
    uint32_t fracPart = 0;
    uint64_t intPart = 0;
};

/// One element of traceEvents, with the fields hpcprof reads. Reused between events.
struct ParsedEvent {
    char ph = 0;
    bool hasName = false;
    std::string name;
    std::string cat;
    IdField pid, tid, id;
    TimeField ts, dur;
    std::string bp;
    bool typeError = false; ///< a known field had the wrong JSON type (the event is malformed)
    std::vector<std::pair<std::string, ArgValue>> args; ///< first argCount entries are valid
    size_t argCount = 0;

    const ArgValue* arg(std::string_view key) const {
        for (size_t i = 0; i < argCount; ++i)
            if (args[i].first == key) return &args[i].second;
        return nullptr;
    }
};

/// Receives what the reader parses, in file order.
class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void onEvent(const ParsedEvent& event) = 0;
    /// A scalar outside traceEvents: "key", "object.member" or "array.<index>.member".
    virtual void onTopLevel(const std::string& key, const ArgValue& value) = 0;
    /// An element of traceEvents that is not an object.
    virtual void onNonObjectEvent() = 0;
};

struct ReadOutcome {
    bool complete = true;   ///< false: the JSON or the compressed stream ended in an error
    std::string error;      ///< "parse error at line L, column C (byte N): ..." when incomplete
    uint64_t bytes = 0;     ///< uncompressed bytes read
    int64_t events = 0;     ///< elements of traceEvents seen
    bool eventArray = false; ///< a traceEvents array (or a top-level array) was reached
    /// Set when the document parsed but is not a trace: what it is instead ("a JSON number",
    /// "a PyTorch execution trace ...", "an object whose traceEvents is an object", ...).
    std::string notATrace;
};

/// Called about every 64k events with (uncompressed bytes, on-disk bytes read).
using ProgressFn = std::function<void(uint64_t bytes, uint64_t fileBytes)>;

/// Streams `path` (plain or gzip) into `sink`. A file that cannot be opened is an error Status;
/// a parse error is reported in the outcome so the caller can keep or drop what was read.
Result<ReadOutcome> readChromeTrace(const std::string& path, EventSink& sink,
                                    const ProgressFn& progress = {});

} // namespace hpcprof::import
