// SPDX-License-Identifier: MIT
// Everything the details panel shows about one event, read on a worker thread: its columns with
// names resolved, free-form args, and the events it is correlated with (the API call that
// launched a kernel and the reverse, the other members' calls of the same collective instance).
#pragma once

#include <QString>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/trace_data.hpp"

namespace hpcprof::gui {

struct RelatedEvent {
    int64_t eventId = 0, trackId = 0, ts = 0, dur = 0, rank = -1;
    QString name, relation; ///< relation: "launched by", "launched", "same collective"
};

struct EventDetails {
    int64_t eventId = 0, trackId = 0, processId = 0, rank = -1;
    int64_t ts = 0, dur = 0, bytes = -1, peer = -1, seq = -1, correlationId = -1, count = 1;
    int64_t depth = 0;
    QString name, category, className, track, communicator, file;
    std::vector<std::pair<QString, QString>> extra; ///< event_detail and event_arg values
    std::vector<RelatedEvent> related;
};

/// Reads event `eventId` (worker thread). At most `maxRelated` correlated events.
Result<EventDetails> lookupEvent(const TraceData& data, int64_t eventId, size_t maxRelated = 64);

/// The details as rich text with links "event:<id>" to the related events.
QString detailsHtml(const EventDetails& d);

} // namespace hpcprof::gui
