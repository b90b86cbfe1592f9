// SPDX-License-Identifier: MIT
// The store step's side of the data-family seam. Each family with raw records of its own, or
// rows beyond the generic event row, implements StoreFamily once (families/<name>/); the merge
// loop iterates over the registered families and never names one:
//
//   per run:      StoreFamily (made fresh for each merge; holds what spans processes)
//   per process:  converter()  ->  prepare(threads)       take its raw records (ThreadRecords::
//                                                         sections[slot]), add the events they
//                                                         make to their threads
//                                  decorate(e, row)       before the insert of an event it owns
//                                  inserted(e, id)        after it (args, side rows)
//                                  finish(processId, end) its own tracks and rows
//   per run:      finishRun(writer, warnings)             what needs every process
//
// A raw event is owned by at most one family (RawEvent::family = its slot + 1); only owned
// events reach decorate/inserted, so the loop pays nothing for the others. Ordering between
// families is explicit: prepareAfter() names the families whose prepare() (and finish()) must
// run first; storeFamilies() sorts by it and refuses cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clock_mapping.hpp"
#include "communication_fields.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "hpcprof/status.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

/// What a family's converter is given about the process being converted.
struct ProcessContext {
    TraceWriter& writer;
    const schema::raw::ProcessHeader& header;
    const TickConverter& clock;
    std::function<int64_t(uint64_t)> ticksToTrace;    ///< raw event ticks -> trace ns
    std::function<int64_t(int64_t)> monotonicToTrace; ///< this process's CLOCK_MONOTONIC ns -> trace ns
    StringLookup strings;                             ///< the process's string ids (and its parent's)
    std::function<void(schema::Stat, int64_t)> addStat;
    std::vector<std::string>& warnings;
    std::string host;
};

/// One family's conversion of one process.
class ProcessConverter {
public:
    virtual ~ProcessConverter() = default;
    /// Before the thread loop: takes the family's records out of every thread and adds the
    /// events they make (owned ones with RawEvent::family set).
    virtual void prepare(std::vector<ThreadRecords>& threads) = 0;
    /// An owned event's row before it is inserted (name, category, correlation, ...).
    virtual void decorate(const RawEvent& e, EventRow& row) {
        (void)e;
        (void)row;
    }
    /// An owned event once inserted: its args and side rows.
    virtual void inserted(const RawEvent& e, int64_t eventId) {
        (void)e;
        (void)eventId;
    }
    /// After every thread's events: the family's own tracks and rows. `lastEnd` (the process's
    /// last activity, trace ns) may be raised.
    virtual Status finish(int64_t processId, int64_t& lastEnd) {
        (void)processId;
        (void)lastEnd;
        return {};
    }
};

/// A data family's part of the store step, made fresh for each merge.
class StoreFamily {
public:
    virtual ~StoreFamily() = default;
    virtual std::string_view name() const = 0;
    /// The raw record kinds the reader keeps aside for this family, in file order.
    virtual std::vector<schema::raw::RecordKind> recordKinds() const { return {}; }
    /// Families whose converters must prepare (and finish) before this one's: it reads the
    /// events they add.
    virtual std::vector<std::string_view> prepareAfter() const { return {}; }
    /// The converter of one process; `slot` is this family's index in ThreadRecords::sections and
    /// the RawEvent::family value (slot + 1) of the events it owns.
    virtual std::unique_ptr<ProcessConverter> converter(const ProcessContext& ctx, int slot) = 0;
    /// Once every process is in: what needs them all.
    virtual Status finishRun(TraceWriter& writer, std::vector<std::string>& warnings) {
        (void)writer;
        (void)warnings;
        return {};
    }
};

/// The registered families (families/families.def) that have a store part, ordered so that
/// every prepareAfter() holds; an error names an unknown family or a cycle.
Result<std::vector<std::unique_ptr<StoreFamily>>> storeFamilies();

/// Which section of ThreadRecords each raw record kind goes to (-1: none), for the reader.
RecordRouting recordRouting(const std::vector<std::unique_ptr<StoreFamily>>& families);

} // namespace hpcprof::store
