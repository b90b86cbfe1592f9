// SPDX-License-Identifier: MIT
// Parses one traceEvents element straight from the read buffer and hands it to the sink,
// filling the same ParsedEvent the nlohmann SAX handler fills, by the same rules (the shared
// helpers in sax_handler.hpp). An element cut by the end of the buffer asks for more input, so
// the reader needs no separate pass to find where elements end. (simdjson's On-Demand API over
// pre-cut batches was measured no faster here: per-event navigation, not tokenising, dominates
// at ~300 bytes per event; simdjson still validates the UTF-8 of each block.)
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "chrome_reader.hpp"

namespace hpcprof::import {

/// Bytes the parser may read past `end` (16-byte loads); they must be allocated.
inline constexpr size_t kParserPadding = 16;

struct ElementOutcome {
    enum class Kind : unsigned char { Done, NeedMore, Error };
    Kind kind = Kind::Done;
    size_t length = 0;          ///< Done: bytes the element took
    std::string error;          ///< Error: what is wrong
    size_t errorOffset = 0;     ///< Error: offset from `begin` near the damage
};

class EventParser {
public:
    EventParser();
    ~EventParser();
    EventParser(const EventParser&) = delete;
    EventParser& operator=(const EventParser&) = delete;

    /// Parses the element at `begin` (not whitespace). NeedMore: it runs past `end` and more
    /// input may follow (`atEof` false). Bytes from begin + `utf8Bad` on are known not to be
    /// valid UTF-8. Only a whole, valid element reaches the sink.
    ElementOutcome parse(const char* begin, const char* end, bool atEof, size_t utf8Bad,
                         EventSink& sink);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace hpcprof::import
