// SPDX-License-Identifier: MIT
// Parses a run of whole traceEvents elements (cut by json_scanner) and hands each to the sink,
// filling the same ParsedEvent the nlohmann SAX handler fills, by the same rules (the shared
// helpers in sax_handler.hpp). simdjson validates the batch's UTF-8 in one vectorised pass; a
// small recursive-descent parser does the rest (simdjson's On-Demand API was measured no faster
// here: per-event navigation, not tokenising, dominates at ~300 bytes per event).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "chrome_reader.hpp"

namespace hpcprof::import {

/// Bytes the parser may read past the end of a batch (16-byte loads); they must be allocated.
inline constexpr size_t kBatchPadding = 64;

struct BatchOutcome {
    size_t delivered = 0;       ///< elements handed to the sink, in order
    bool ok = true;
    std::string error;          ///< what is wrong, when !ok
    size_t errorOffset = 0;     ///< offset in the batch text near the damage, when !ok
};

class EventBatchParser {
public:
    EventBatchParser();
    ~EventBatchParser();
    EventBatchParser(const EventBatchParser&) = delete;
    EventBatchParser& operator=(const EventBatchParser&) = delete;

    /// `text` is a JSON array "[e1,e2,...]" of `len` bytes with at least kBatchPadding readable
    /// bytes after it. Elements up to the first damaged one reach the sink.
    BatchOutcome parse(const char* text, size_t len, EventSink& sink);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace hpcprof::import
