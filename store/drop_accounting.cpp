// SPDX-License-Identifier: MIT
#include "drop_accounting.hpp"

#include <cstring>

#include <fmt/format.h>

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Stat;

namespace {

/// What a user reads about a stop reason, and what to do about it.
std::string stopReasonText(raw::DropReason r, int32_t err) {
    std::string cause;
    switch (r) {
    case raw::DropReason::BufferLimit:
        return "the per-thread limit HPCPROF_THREAD_BUFFER_MB was reached (raise it)";
    case raw::DropReason::DiskFull: cause = "the raw directory's filesystem was full"; break;
    case raw::DropReason::Quota: cause = "the disk quota was exhausted"; break;
    default: cause = "a raw file could not grow"; break;
    }
    if (err > 0) cause += std::string(" (") + std::strerror(err) + ")";
    return cause + ": free space there or write the trace elsewhere (-o)";
}

} // namespace

std::string_view stopReasonName(raw::DropReason r) {
    switch (r) {
    case raw::DropReason::BufferLimit: return "buffer_limit";
    case raw::DropReason::DiskFull: return "disk_full";
    case raw::DropReason::Quota: return "quota";
    case raw::DropReason::FileError: return "file_error";
    default: return "";
    }
}

ThreadRecording ProcessDrops::addThread(const ThreadDrops& d, int64_t stoppedTs) {
    ThreadRecording recording;
    recording.recordsDropped = int64_t(d.total());
    if (d.stoppedTicks) {
        recording.stoppedTs = stoppedTs;
        recording.stopReason = std::string(stopReasonName(d.stopReason));
    }
    for (size_t i = 0; i < d.dropped.size(); ++i) m_byReason[i] += int64_t(d.dropped[i]);
    m_total += int64_t(d.total());
    if (!d.stoppedTicks) return recording;
    ++m_threadsStopped;
    if (stoppedTs < m_firstStopTs) {
        m_firstStopTs = stoppedTs;
        m_firstReason = d.stopReason;
        m_firstErrno = d.stopErrno;
    }
    return recording;
}

void ProcessDrops::report(const raw::ProcessHeader& h, int64_t processStartTs,
                          const std::function<int64_t(uint64_t)>& toTraceTicks,
                          const std::filesystem::path& dir,
                          const std::function<void(Stat, int64_t)>& addStat,
                          std::vector<std::string>& warnings) {
    int64_t withoutFile = int64_t(h.droppedRecords);
    m_total += withoutFile;
    int64_t threadsWithoutFile = 0;
    raw::DropReason withoutFileReason = raw::DropReason::None;
    if (h.version >= 4) {
        threadsWithoutFile = h.threadsWithoutFile;
        uint64_t most = 0;
        for (uint32_t r = 0; r < raw::kDropReasonCount; ++r) {
            m_byReason[r] += int64_t(h.droppedWithoutFile[r]);
            if (raw::stopsThread(raw::DropReason(r)) && h.droppedWithoutFile[r] > most) {
                most = h.droppedWithoutFile[r];
                withoutFileReason = raw::DropReason(r);
            }
        }
    }
    addStat(Stat::RecordsDropped, m_total);
    addStat(Stat::RecordsDroppedDiskFull, m_byReason[size_t(raw::DropReason::DiskFull)]);
    addStat(Stat::RecordsDroppedQuota, m_byReason[size_t(raw::DropReason::Quota)]);
    addStat(Stat::RecordsDroppedFileError, m_byReason[size_t(raw::DropReason::FileError)]);
    addStat(Stat::RecordsDroppedBufferLimit, m_byReason[size_t(raw::DropReason::BufferLimit)]);
    addStat(Stat::ThreadsStoppedRecording, m_threadsStopped);
    addStat(Stat::ThreadsWithoutRawFile, threadsWithoutFile);
    std::string where = " (" + dir.filename().string() + ")";
    if (m_threadsStopped > 0)
        warnings.push_back(fmt::format(
            "process {}{}: {} thread{} stopped recording, the first {:.3f} s after the process "
            "started, because {}; {} records lost (thread.recording_stopped_ts)",
            h.pid, where, m_threadsStopped, m_threadsStopped == 1 ? "" : "s",
            double(m_firstStopTs - processStartTs) / 1e9, stopReasonText(m_firstReason, m_firstErrno),
            m_total));
    if (threadsWithoutFile > 0) {
        std::string when;
        if (h.firstDropWithoutFileTicks)
            when = fmt::format(", the first {:.3f} s after the process started",
                               double(toTraceTicks(h.firstDropWithoutFileTicks) - processStartTs) / 1e9);
        warnings.push_back(fmt::format(
            "process {}{}: {} thread{} could not create a raw file{}, because {}: their calls are "
            "not in the trace",
            h.pid, where, threadsWithoutFile, threadsWithoutFile == 1 ? "" : "s", when,
            stopReasonText(withoutFileReason, 0)));
    }
}

} // namespace hpcprof::store
