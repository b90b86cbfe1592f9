// SPDX-License-Identifier: MIT
// What a process could not record: per thread (the thread headers: when and why it stopped,
// what it dropped by reason) and per process (threads that never got a file), turned into the
// thread rows' recording columns, the stats by reason and one warning per process that tells
// the user what happened and what to do.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

/// thread.stop_reason of a stopping DropReason ("" for the others).
std::string_view stopReasonName(schema::raw::DropReason r);

class ProcessDrops {
public:
    /// A thread's drops; `stoppedTs` is its stop in trace ns (ignored when it never stopped).
    /// Returns the thread row's recording columns.
    ThreadRecording addThread(const ThreadDrops& d, int64_t stoppedTs);

    /// Adds the process header's drops (threads without a file), then counts everything in the
    /// stats and writes at most two warnings. `processStartTs` and `toTraceTicks` place the
    /// first drop of a thread without a file on the trace's time base.
    void report(const schema::raw::ProcessHeader& h, int64_t processStartTs,
                const std::function<int64_t(uint64_t)>& toTraceTicks, const std::filesystem::path& dir,
                const std::function<void(schema::Stat, int64_t)>& addStat,
                std::vector<std::string>& warnings);

private:
    std::array<int64_t, schema::raw::kDropReasonCount> m_byReason{};
    int64_t m_total = 0;
    int64_t m_threadsStopped = 0;
    int64_t m_firstStopTs = INT64_MAX; ///< trace time of the earliest stop
    schema::raw::DropReason m_firstReason = schema::raw::DropReason::None;
    int32_t m_firstErrno = 0;
};

} // namespace hpcprof::store
