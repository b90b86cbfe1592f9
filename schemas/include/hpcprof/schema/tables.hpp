// SPDX-License-Identifier: MIT
// C++ names for the trace schema in schemas/sql/hpcprof.sql. A unit test applies the DDL to an
// in-memory database and checks every name here against it, so code and DDL cannot drift.
#pragma once

#include <cstdint>
#include <string_view>

namespace hpcprof::schema {

/// PRAGMA user_version of traces this build writes and reads.
inline constexpr int kSchemaVersion = 3;
/// The oldest user_version this build still reads: version 2 kept the offset of positioned
/// calls in event_detail; openTraceReadOnly gives such a trace a temporary `event` view with
/// the offset column, so readers query both versions alike.
inline constexpr int kOldestReadableSchemaVersion = 2;
/// PRAGMA application_id marking hpcprof files ("HPCF").
inline constexpr int32_t kApplicationId = 0x48504346;

/// The DDL text (schemas/sql/hpcprof.sql), embedded at build time.
std::string_view ddl();

namespace table {
inline constexpr std::string_view kMetadata = "metadata";
inline constexpr std::string_view kString = "string";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kProcess = "process";
inline constexpr std::string_view kThread = "thread";
inline constexpr std::string_view kTrack = "track";
inline constexpr std::string_view kObject = "object";
inline constexpr std::string_view kCommunicator = "communicator";
inline constexpr std::string_view kEvent = "event";
inline constexpr std::string_view kEventDetail = "event_detail";
inline constexpr std::string_view kEventUnfinished = "event_unfinished";
inline constexpr std::string_view kEventArg = "event_arg";
inline constexpr std::string_view kMpiCompletion = "mpi_completion";
inline constexpr std::string_view kCounterTrack = "counter_track";
inline constexpr std::string_view kCounter = "counter";
inline constexpr std::string_view kStats = "stats";
inline constexpr std::string_view kStatsByProcess = "stats_by_process";
} // namespace table

namespace view {
inline constexpr std::string_view kEventView = "event_view";
inline constexpr std::string_view kCounterView = "counter_view";
inline constexpr std::string_view kStatsView = "stats_view";
} // namespace view

/// Columns of event_view that scripts may rely on (the documented stable surface; `unfinished`
/// is missing from traces written before it, see kAddedLater).
inline constexpr std::string_view kEventViewColumns[] = {
    "event_id", "rank",  "pid",    "tid",         "track", "track_kind", "category",
    "class",    "name",  "ts_ns",  "dur_ns",      "bytes", "peer",       "object",
    "object_kind", "communicator", "seq", "correlation_id", "count", "depth", "host",
    "process_id", "track_id", "unfinished"};

/// Tables and columns added within schema version 2: traces written before them lack them, and
/// readers open such traces (checkTraceTables does not ask for them; a reader that uses them
/// checks first). "table" or "table.column".
inline constexpr std::string_view kAddedLater[] = {"event_unfinished", "event_view.unfinished"};

inline constexpr std::string_view kCounterViewColumns[] = {"rank", "pid", "tid", "counter",
                                                           "unit", "ts_ns", "value"};

/// Columns of the internal tables the store writes, in insert order.
inline constexpr std::string_view kEventColumns[] = {
    "id",   "track_id", "ts",   "dur",             "category_id",    "name_id", "depth",
    "bytes", "object_id", "peer", "communicator_id", "seq", "correlation_id", "count", "offset"};

inline constexpr std::string_view kProcessColumns[] = {
    "id",         "rank",          "world_size",   "local_rank",     "rank_source",
    "host",       "pid",           "ppid",         "parent_process_id", "command",
    "exe",        "start_ts",      "end_ts",       "end_state",      "exit_code",
    "clock_method", "clock_offset_ns", "clock_drift_ppb", "clock_uncertainty_ns", "raw_dir",
    "cwd"};

inline constexpr std::string_view kThreadColumns[] = {
    "id", "process_id", "tid", "name", "recording_stopped_ts", "stop_reason", "records_dropped"};

inline constexpr std::string_view kTrackColumns[] = {
    "id", "process_id", "thread_id", "kind", "name", "device", "stream",
    "first_event_id", "last_event_id", "event_count"};

inline constexpr std::string_view kMpiCompletionColumns[] = {
    "event_id", "request", "post_event_id", "kind", "peer", "tag", "bytes"};

inline constexpr std::string_view kStatsColumns[] = {"id",    "name",       "severity",
                                                     "source", "value", "description"};

/// Metadata keys the store always writes.
namespace meta {
inline constexpr std::string_view kSchemaVersion = "schema_version";
inline constexpr std::string_view kHpcprofVersion = "hpcprof_version";
inline constexpr std::string_view kCommand = "command";
inline constexpr std::string_view kTimeOriginRealtimeNs = "time_origin_realtime_ns";
inline constexpr std::string_view kClockMethod = "clock_method";
inline constexpr std::string_view kCreatedBy = "created_by";
inline constexpr std::string_view kPartial = "partial";
/// Raw-file chunks the agent's provisioning helper mapped before a thread needed them, and
/// full-size chunks threads had to map themselves because it was not ahead (the small chunks a
/// thread's file starts with are always the thread's own and not counted). Sums over processes.
inline constexpr std::string_view kChunksMappedAhead = "raw_chunks_mapped_ahead";
inline constexpr std::string_view kChunksMappedOnThread = "raw_chunks_mapped_on_thread";
} // namespace meta

} // namespace hpcprof::schema
