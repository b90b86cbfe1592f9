// SPDX-License-Identifier: MIT
// Test support: builds small traces from a compact description through the real TraceWriter.
// Events may be added in any order; they are written per track, sorted by ts (unless a test
// asks for the given order, to build deliberately unsorted traces).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::test {

/// A non-blocking request an MPI wait/test completed (a row of mpi_completion).
struct CompletionSpec {
    std::string postLabel; ///< EventSpec::label of the posting call
    bool recv = false;
    int64_t peer = 0, tag = 0, bytes = 0;
};

struct EventSpec {
    schema::Category category{};
    std::string name;
    int64_t ts = 0, dur = 0, depth = 0;
    std::optional<int64_t> bytes, peer, seq, tag, count, correlationId;
    std::optional<std::string> communicator, object;
    int64_t communicatorSize = 0;
    std::vector<std::pair<std::string, std::string>> args;
    std::vector<std::pair<std::string, int64_t>> intArgs;
    std::optional<std::string> label;        ///< names the event for completions
    std::vector<CompletionSpec> completions; ///< requests this wait/test completed

    EventSpec& withLabel(std::string l) { label = std::move(l); return *this; }
    EventSpec& withCommunicator(std::string key, int64_t size) {
        communicator = std::move(key);
        communicatorSize = size;
        return *this;
    }
    /// This wait/test completed the request posted by the event labelled `postLabel`.
    EventSpec& completes(std::string postLabel, bool recv, int64_t peer, int64_t tag, int64_t bytes) {
        completions.push_back({std::move(postLabel), recv, peer, tag, bytes});
        return *this;
    }

    EventSpec& withBytes(int64_t b) { bytes = b; return *this; }
    EventSpec& withPeer(int64_t p) { peer = p; return *this; }
    EventSpec& withTag(int64_t t) { tag = t; return *this; }
    EventSpec& withDepth(int64_t d) { depth = d; return *this; }
    EventSpec& withCount(int64_t c) { count = c; return *this; }
    EventSpec& withObject(std::string path) { object = std::move(path); return *this; }
    EventSpec& withArg(std::string k, std::string v) { args.emplace_back(std::move(k), std::move(v)); return *this; }
    EventSpec& withArg(std::string k, int64_t v) { intArgs.emplace_back(std::move(k), v); return *this; }
    /// Collective instance `seq` of communicator `key` with `size` members.
    EventSpec& collective(std::string key, int64_t size, int64_t s) {
        communicator = std::move(key);
        communicatorSize = size;
        seq = s;
        return *this;
    }
};

class TraceBuilder {
public:
    /// A rank process alive over [start, end], with its main thread track (tid == pid). Returns
    /// the main track's handle. rank < 0 makes a non-rank process.
    int rank(int64_t rank, int64_t start, int64_t end, int64_t worldSize = 0);
    /// Another CPU thread of the process that owns `track`.
    int thread(int mainTrack, int64_t tid);
    /// A GPU stream of the process that owns `track`.
    int gpuStream(int mainTrack, int64_t device, int64_t stream);
    /// A NIC queue-pair lane (track kind nic_queue, "<device> QP <qp>") of the process that owns
    /// `track`.
    int nicQueue(int mainTrack, const std::string& device, int64_t qp);

    EventSpec& event(int track, schema::Category c, std::string name, int64_t ts, int64_t dur);
    /// The CPU thread of `track` stopped recording at `ts` (thread.recording_stopped_ts).
    void stopRecording(int track, int64_t ts, std::string reason = "disk_full") {
        m_tracks.at(size_t(track)).stoppedTs = ts;
        m_tracks.at(size_t(track)).stopReason = std::move(reason);
    }
    /// The host name and rank source of the process that owns `track` (default: "node<rank/4>"
    /// and "test").
    void setHost(int track, std::string host) { m_processes.at(size_t(m_tracks.at(size_t(track)).process)).host = std::move(host); }
    void setRankSource(int track, std::string source) {
        m_processes.at(size_t(m_tracks.at(size_t(track)).process)).rankSource = std::move(source);
    }
    /// The process that owns `track` was imported from another profiler's trace
    /// (clock_method 'recorded'): its span is that profiler's recording.
    void setImported(int track) { m_processes.at(size_t(m_tracks.at(size_t(track)).process)).imported = true; }
    void setMetadata(std::string key, std::string value) { m_metadata[std::move(key)] = std::move(value); }
    /// Keep events in the order added (for unsorted-trace tests).
    void keepInsertionOrder() { m_sort = false; }

    /// Writes the trace; throws (test failure) on any writer error.
    void write(const std::string& path) const;

private:
    struct Process {
        int64_t id, pid, start, end;
        std::optional<int64_t> rank, worldSize;
        std::string host, rankSource;
        bool imported = false;
    };
    struct Track {
        int process;
        std::optional<int64_t> tid;
        bool gpu = false;
        std::string nicName; ///< non-empty: a nic_queue track
        int64_t device = 0, stream = 0;
        std::optional<int64_t> stoppedTs;
        std::string stopReason;
        std::deque<EventSpec> events;
    };
    std::vector<Process> m_processes;
    std::vector<Track> m_tracks;
    std::map<std::string, std::string> m_metadata;
    bool m_sort = true;
};

} // namespace hpcprof::test
