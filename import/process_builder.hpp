// SPDX-License-Identifier: MIT
// Collects the events of one imported process (one rank's file, or one process of an exported
// trace) per track, then writes them: each track sorted by start (longer first on ties, so
// parents precede children), nesting depth from a stack of open ends, flow points resolved to
// correlation ids, NCCL kernels numbered per communicator. Memory is one process's events in a
// compact 48-byte form; rare facts live in a side table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <new>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "chrome_reader.hpp"
#include "hpcprof/store/nesting_depth.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::import {

inline constexpr int64_t kNoValue = INT64_MIN;

/// One event waiting to be written; times are absolute ns (file time base).
struct PendingEvent {
    int64_t ts = 0;
    int64_t dur = 0;
    int64_t correlation = kNoValue;
    int64_t bytes = kNoValue;
    int32_t nameId = 0;
    int32_t extra = -1;     ///< index into ProcessBuilder's extras, -1 if none
    uint32_t order = 0;     ///< arrival order: the final tie-breaker of the sort
    uint8_t category = 0;
    uint8_t copyKind = 0;   ///< memcpy kinds as indexes into kCopyKinds / kMemoryKinds (0 none)
    uint8_t srcKind = 0;
    uint8_t dstKind = 0;
};
static_assert(sizeof(PendingEvent) == 48);
static_assert(std::is_trivially_copyable_v<PendingEvent>);

/// Facts only a few events have: collective metadata, hpcprof columns from exports, free args.
struct EventExtra {
    std::optional<int64_t> peer, seq, count;
    std::string communicator;
    std::optional<int64_t> communicatorSize;
    std::string communicatorKind = "nccl";
    std::string collective; ///< collective of a GPU comm kernel ("AllReduce"), for alignment
    std::string object;     ///< what the event acted on (a file path), from exports
    store::EventDetail detail;
    std::vector<std::pair<std::string, ArgValue>> args;
};

/// A flow point ('s'/'t'/'f' event) that links a slice on this track to a correlation id.
struct FlowPoint {
    int64_t ts;
    int64_t id;
    bool nextSlice; ///< 'f' without "bp":"e" binds to the next slice, others to the enclosing one
};

/// A track's events in arrival order, in fixed-size chunks: growing never copies the events or
/// holds an old and a new buffer at once (a vector's reallocation peak was a third of the
/// import's memory on a 10M-event rank).
class EventChunks {
public:
    void push_back(const PendingEvent& e) {
        if ((m_size & kMask) == 0) m_chunks.push_back(allocateChunk());
        new (&m_chunks.back()[m_size & kMask]) PendingEvent(e);
        ++m_size;
    }
    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    PendingEvent& operator[](size_t i) { return m_chunks[i >> kShift][i & kMask]; }
    const PendingEvent& operator[](size_t i) const { return m_chunks[i >> kShift][i & kMask]; }
    /// Moves the events into `out` (replacing its contents), freeing each chunk once copied:
    /// the peak is the events plus one chunk.
    void moveTo(std::vector<PendingEvent>& out) {
        out.clear();
        out.shrink_to_fit();
        out.reserve(m_size);
        for (size_t c = 0; c < m_chunks.size(); ++c) {
            size_t n = std::min(kChunk, m_size - c * kChunk);
            // Only the part about to be filled: faulting in all of `out` at once would hold
            // it and all the chunks together.
            prefault(out.data() + out.size(), n * sizeof(PendingEvent));
            out.insert(out.end(), m_chunks[c].get(), m_chunks[c].get() + n);
            m_chunks[c].reset();
        }
        m_chunks.clear();
        m_size = 0;
    }

private:
    static constexpr size_t kShift = 15;
    static constexpr size_t kChunk = size_t(1) << kShift; // 1.5 MiB of events
    static constexpr size_t kMask = kChunk - 1;
    /// Chunks are mapped and unmapped directly: malloc would keep freed chunks in its heap
    /// (its mmap threshold grows with freed sizes), and moveTo() relies on each freed chunk
    /// going back to the system at once.
    struct Unmap {
        void operator()(PendingEvent* p) const;
    };
    using Chunk = std::unique_ptr<PendingEvent[], Unmap>;
    static Chunk allocateChunk();
    /// Faults in the whole pages of [p, p + bytes) for writing with one call (the copy
    /// would otherwise fault every 4 KiB); does nothing where the kernel cannot.
    static void prefault(void* p, size_t bytes);
    std::vector<Chunk> m_chunks;
    size_t m_size = 0;
};

struct PendingTrack {
    bool gpu = false;
    int64_t device = 0, stream = 0; ///< gpu
    int64_t tid = 0;                ///< cpu: operating-system thread id (0 if unknown)
    std::string threadName;         ///< cpu: thread name from metadata
    std::string name;               ///< display name; default "thread T" / "GPU d stream s"
    bool explicitThread = true;     ///< cpu: a real OS thread row is written
    std::string kindName;           ///< track.kind when not the lane's default (exports: nic_queue)
    bool hasDevice = false;         ///< a non-GPU track that still has device/stream (NIC queues)
    int64_t sortKey = 0;
    EventChunks pending;                ///< events as they arrive
    std::vector<PendingEvent> events;   ///< the same, contiguous, once the process is written
    std::vector<FlowPoint> flows;
};

/// Identity of the process row.
struct ProcessFacts {
    std::optional<int64_t> rank;
    std::string rankSource;
    std::optional<int64_t> worldSize;
    std::string host = "unknown";
    int64_t pid = 0;
    std::string command;
    std::string sourceFile;
};

/// What writing a process produced, for alignment and the report.
struct WrittenProcess {
    int64_t processId = 0;
    std::optional<int64_t> rank;
    int64_t events = 0;
    int64_t minTs = 0, maxEnd = 0; ///< absolute ns; minTs > maxEnd when empty
    /// End times (absolute ns) of GPU collective kernels, per alignment key, in start order.
    std::map<std::string, std::vector<int64_t>> collectiveEnds;
};

class ProcessBuilder {
public:
    using StatCounts = store::StatCounts;

    /// CPU track for an (already numeric) pid/tid key.
    PendingTrack& cpuTrack(int64_t pidKey, int64_t tidKey);
    PendingTrack& gpuTrack(int64_t device, int64_t stream);
    /// An existing track, or nullptr.
    PendingTrack* findTrack(bool gpu, int64_t a, int64_t b) {
        auto it = m_tracks.find({gpu, a, b});
        return it == m_tracks.end() ? nullptr : it->second.get();
    }
    uint32_t nextOrder() { return m_order++; }
    int32_t addExtra(EventExtra extra);
    EventExtra& extra(int32_t index) { return m_extras[size_t(index)]; }

    bool empty() const;
    /// Calls fn(pidKey, tidKey, track) for every CPU track.
    template <typename Fn> void forEachCpuTrack(Fn&& fn) {
        for (auto& [key, t] : m_tracks)
            if (!std::get<0>(key)) fn(std::get<1>(key), std::get<2>(key), *t);
    }
    /// Smallest start over all events (absolute ns), empty when there are none.
    std::optional<int64_t> minTs() const;
    /// Removes the events that start at or before `lo` or end at or after `hi`; returns how many.
    int64_t dropEventsOutside(int64_t lo, int64_t hi);

    ProcessFacts& facts() { return m_facts; }
    StatCounts& stats() { return m_stats; }
    void count(schema::Stat s, int64_t n = 1) { m_stats[size_t(s)] += n; }
    /// Counts an event of category `cat` into stat `s` and into the stat's per-category counts
    /// (which name the categories in the trace's stats): unknown and not analysed categories.
    void countCategory(schema::Stat s, std::string_view cat) {
        count(s);
        // A file's events of one category tend to come in runs: the last entry is kept.
        if (!m_lastCategory || m_lastCategory->first.first != size_t(s) ||
            m_lastCategory->first.second != cat)
            m_lastCategory = &*m_categoryCounts.try_emplace({size_t(s), std::string(cat)}).first;
        ++m_lastCategory->second;
    }
    /// Events per (stat, category) counted by countCategory().
    const std::map<std::pair<size_t, std::string>, int64_t>& categoryCounts() const {
        return m_categoryCounts;
    }

    /// Writes the process, its threads, tracks and events with ts relative to `originNs`.
    /// Releases the events as it goes.
    Result<WrittenProcess> write(store::TraceWriter& w, int64_t processId, int64_t originNs);

private:
    // Steps of write().
    /// Moves each track's events into one sorted vector; the process's time span into `out`.
    void sortTracks(WrittenProcess& out);
    void resolveFlows(PendingTrack& t);
    void numberCollectives(WrittenProcess& out);
    /// The track row (and its thread row, for a CPU thread); returns the track id.
    int64_t insertTrack(store::TraceWriter& w, int64_t processId, const PendingTrack& t);
    /// The track and its events (then released); counts them into `out`.
    Status writeTrack(store::TraceWriter& w, int64_t processId, int64_t originNs,
                      store::NestingDepth& depth, PendingTrack& t, WrittenProcess& out);
    Status insertProcess(store::TraceWriter& w, const WrittenProcess& out, int64_t originNs);

    std::map<std::tuple<bool, int64_t, int64_t>, std::unique_ptr<PendingTrack>> m_tracks;
    PendingTrack* m_lastTrack = nullptr;
    std::tuple<bool, int64_t, int64_t> m_lastKey{false, INT64_MIN, INT64_MIN};
    std::vector<EventExtra> m_extras;
    uint32_t m_order = 0;
    ProcessFacts m_facts;
    StatCounts m_stats{};
    std::map<std::pair<size_t, std::string>, int64_t> m_categoryCounts;
    std::pair<const std::pair<size_t, std::string>, int64_t>* m_lastCategory = nullptr;
};

/// Names for PendingEvent's memcpy kind codes (index 0 = none).
inline constexpr const char* kCopyKinds[] = {"", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
inline constexpr const char* kMemoryKinds[] = {"", "pageable", "pinned", "device", "managed"};
uint8_t copyKindCode(std::string_view kind);
uint8_t memoryKindCode(std::string_view kind);

} // namespace hpcprof::import
