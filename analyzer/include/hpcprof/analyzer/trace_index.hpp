// SPDX-License-Identifier: MIT
/// The small tables of a trace held in memory: processes, tracks, categories, strings,
/// communicators, objects. Events are never all loaded at once: the analyses stream each track's
/// events (its contiguous id range [first_event_id, last_event_id]) through their own scan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

namespace detail {
struct TrackScan; // the analyses' event scan (src/track_scan.hpp)
}

/// Attribution class of a category (the category table's `class` column). Setup (MPI start-up
/// and shutdown, communicator and window creation) is last so that the older classes keep their
/// values.
enum class EventClass : uint8_t { Compute, Communication, Io, Memory, Sync, Annotation, Setup };

/// Name of a class as stored in the trace ("communication", ...).
const char* eventClassName(EventClass c);

enum class TrackKind : uint8_t { CpuThread, GpuStream, NicQueue };

struct ProcessInfo {
    int64_t id = 0;
    std::optional<int64_t> rank;
    std::optional<int64_t> worldSize;
    std::string rankSource;            ///< process.rank_source ("fork" for a forked child)
    int64_t pid = 0;
    std::optional<int64_t> ppid;            ///< the parent's operating-system pid
    std::optional<int64_t> parentProcessId; ///< process.id of the recorded parent (fork)
    std::string host;
    std::string command;
    std::string cwd; ///< working directory it started in; empty when not recorded
    int64_t startTs = 0;
    std::optional<int64_t> endTs;
    bool execed = false; ///< end_state 'exec': an earlier image of the process that follows with its pid
    /// Imported from another profiler's trace (`hpcprof import`: clock_method 'recorded' or
    /// 'nccl_collectives'): its span is the profiler's recording, not the process's life.
    bool imported = false;
};

struct TrackInfo {
    int64_t id = 0;
    int64_t processId = 0;
    std::optional<int64_t> tid; ///< OS thread id for CPU tracks
    TrackKind kind = TrackKind::CpuThread;
    std::string name;
    std::optional<int64_t> device, stream;
    std::optional<int64_t> firstEventId, lastEventId;
    int64_t eventCount = 0;
    /// CPU tracks: when the thread stopped recording (full disk, quota, buffer limit, ...);
    /// nothing of it is recorded after that. Empty = recorded to its end.
    std::optional<int64_t> recordingStoppedTs;
    std::string stopReason; ///< thread.stop_reason: disk_full | quota | file_error | buffer_limit
};

struct CommunicatorInfo {
    std::string key;
    std::optional<int64_t> size;
    std::string kind;
};

/// Times a trace can hold: |ts| and |dur| below 2^62 ns (146 years). Rows beyond are damage;
/// the scan skips them, so ts + dur never overflows in an analysis.
inline constexpr int64_t kTimeLimitNs = int64_t(1) << 62;
inline bool timeInRange(int64_t ns) { return ns > -kTimeLimitNs && ns < kTimeLimitNs; }

class TraceIndex {
public:
    static Result<TraceIndex> load(const Trace& trace);

    const std::vector<ProcessInfo>& processes() const { return m_processes; }
    const std::vector<TrackInfo>& tracks() const { return m_tracks; }
    /// Tracks of one process, in id order.
    std::vector<const TrackInfo*> tracksOf(int64_t processId) const;

    const std::string& string(int64_t id) const;
    const std::string& categoryName(int64_t categoryId) const;
    EventClass categoryClass(int64_t categoryId) const;
    const CommunicatorInfo* communicator(int64_t id) const;
    /// Path or name of an object (the file of an I/O call).
    const std::string& objectName(int64_t objectId) const;
    /// What the object is to the program (file_class.hpp); Unknown for no object.
    FileClass objectClass(int64_t objectId) const;
    /// Total number of events over all tracks (from the track table).
    int64_t eventCount() const;

private:
    friend struct detail::TrackScan;
    std::vector<ProcessInfo> m_processes;
    std::vector<TrackInfo> m_tracks;
    std::vector<std::string> m_strings;
    std::unordered_map<int64_t, std::pair<std::string, EventClass>> m_categories;
    std::vector<int8_t> m_classById; ///< EventClass by category id, -1 = unknown (the scan's lookup)
    std::unordered_map<int64_t, CommunicatorInfo> m_communicators;
    struct ObjectInfo {
        int64_t nameId;
        FileClass fileClass;
    };
    std::unordered_map<int64_t, ObjectInfo> m_objects;
};

} // namespace hpcprof::analyzer
