// SPDX-License-Identifier: MIT
// Store-side meaning of the communication fields of a raw event (MPI, sockets): communicator,
// collective instance, partner, message tag, folded polls; and the reclassification of plain
// read/write calls on sockets as communication.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

/// Looks up a process-local string id; nullptr if unknown.
using StringLookup = std::function<const std::string*(uint32_t)>;

/// A free-form attribute to attach once the event id is known.
struct PendingArg {
    std::string key;
    int64_t value = 0;
    std::string text; ///< a text value instead of `value` when not empty
};

/// Fills communicator, seq, peer, tag, count of `row`/`detail` from `e`. Returns false when the
/// event names a communicator string that is unknown (counted by the caller).
bool applyCommunicationFields(const RawEvent& e, const schema::OpInfo& op, const StringLookup& strings,
                              TraceWriter& writer, EventRow& row, EventDetail& detail,
                              std::vector<PendingArg>& args);

/// The category to store: descriptor calls on sockets (read, write, close, ...) are
/// communication (category socket), not I/O.
schema::Category effectiveCategory(const schema::OpInfo& op, std::string_view objectKind);

} // namespace hpcprof::store
