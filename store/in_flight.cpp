// SPDX-License-Identifier: MIT
#include "in_flight.hpp"

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>

#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;

InFlightState readInFlight(const char* header, raw::InFlightCall& out) {
    const auto* line = reinterpret_cast<const raw::InFlightCall*>(
        header + offsetof(raw::ThreadFileHeader, inFlight));
    // A writer holds the line for a few stores: a handful of attempts meet it stable, unless it
    // was killed in the middle (then the line stays odd for good).
    for (int attempt = 0; attempt < 64; ++attempt) {
        uint32_t before = __atomic_load_n(&line->seq, __ATOMIC_ACQUIRE);
        std::memcpy(static_cast<void*>(&out), line, sizeof(out));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint32_t after = __atomic_load_n(&line->seq, __ATOMIC_RELAXED);
        if ((before & 1) == 0 && before == after)
            return out.op != 0 ? InFlightState::Call : InFlightState::None;
    }
    out = raw::InFlightCall{};
    return InFlightState::Torn;
}

RawEvent unfinishedEvent(const raw::InFlightCall& c) {
    RawEvent e{};
    e.flags = uint8_t(c.flags & ~raw::kInFlightPolling); // no event flag
    e.op = c.op;
    e.start = c.start;
    e.end = c.start;
    e.bytes = -1; // nothing is known to have moved
    e.objectId = c.objectId;
    e.fd = c.fd;
    e.peer = c.peer;
    e.tag = c.tag;
    e.commId = c.commId;
    e.seq = c.instance;
    e.aux = c.aux;
    e.unfinished = true;
    return e;
}

int64_t addUnfinishedCalls(std::vector<ThreadRecords>& threads, const std::function<int64_t()>& lastSeenTs,
                           int64_t& torn) {
    int64_t added = 0;
    std::optional<int64_t> seen;
    for (ThreadRecords& t : threads) {
        if (t.inFlightTorn) ++torn;
        if (t.inFlight.op == 0) continue;
        if (!seen) seen = lastSeenTs(); // before this thread's unfinished event is added
        t.events.push_back(unfinishedEvent(t.inFlight));
        t.unfinishedUntilTs = *seen;
        ++added;
    }
    return added;
}

Status writeUnfinished(TraceWriter& w, int64_t eventId, const raw::InFlightCall& c) {
    // Rare (a thread's call in flight at the end): a statement each is cheap enough.
    schema::Statement s(w.db(), "INSERT INTO " + std::string(schema::table::kEventUnfinished) +
                                    "(event_id, requested_bytes) VALUES (?, ?)");
    s.bind(1, eventId);
    s.bindOrNull(2, c.bytes, -1);
    HPCPROF_RETURN_IF_ERROR(s.run());
    if (c.requests > 0) w.insertEventArg(eventId, "requests", int64_t(c.requests));
    return {};
}

} // namespace hpcprof::store
