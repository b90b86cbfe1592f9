// SPDX-License-Identifier: MIT
// One thread of a process into the trace: its thread row, its cpu_thread track and its events
// in start order, each generic call record turned into an event row (time base, category, name,
// nesting depth, bytes, object, communication fields, errno) and handed to the data family that
// owns it (family.hpp) before and after its insert.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "family.hpp"
#include "hpcprof/store/nesting_depth.hpp"
#include "process_clock.hpp"
#include "process_strings.hpp"

namespace hpcprof::store {

class ThreadEvents {
public:
    explicit ThreadEvents(TraceWriter& w) : m_w(w) {}

    /// What the events of one process are converted with.
    struct Process {
        int64_t processId = 0;
        const ProcessClock* clock = nullptr;
        ProcessStrings* strings = nullptr;
        StringLookup lookup; ///< strings->lookup(), made once
        std::vector<ProcessConverter*> owners; ///< by RawEvent::family - 1
        std::function<void(schema::Stat, int64_t)> addStat;
    };

    /// Writes thread `t` of `p` (its events are consumed); raises `lastEnd` to its last event's
    /// end and adds the number written to `events`.
    Status write(const Process& p, ThreadRecords& t, const ThreadRecording& recording,
                 int64_t& lastEnd, int64_t& events);

private:
    /// The positions of `t`'s events in start order (ties in position order); empty when they
    /// are.
    static std::vector<uint32_t> startOrder(const ThreadRecords& t);
    /// The string id of an op's name, interned on first use (by raw op id: every event needs it).
    int64_t opName(uint16_t op, const schema::OpInfo& info);
    /// The row of generic event `e` (without its owner's decoration); false when it must be
    /// skipped (an op this build does not know).
    bool row(const Process& p, const ThreadRecords& t, const RawEvent& e, EventRow& row,
             EventDetail& d, std::vector<PendingArg>& args);

    TraceWriter& m_w;
    NestingDepth m_depth;
    std::vector<int64_t> m_opNames; ///< by raw op id, 0 = not interned yet
};

} // namespace hpcprof::store
