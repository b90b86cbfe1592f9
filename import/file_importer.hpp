// SPDX-License-Identifier: MIT
// Interprets the events of one input file: Kineto categories onto CPU thread and GPU stream
// tracks, B/E pairs, instants, flows and metadata; files written by `hpcprof export` are read
// back with their hpcprof categories, tracks and processes restored. Hands finished processes
// to the import session, which writes them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chrome_reader.hpp"
#include "kineto_mapping.hpp"
#include "process_builder.hpp"

namespace hpcprof::import {

/// Marker the exporter writes as the top-level "hpcprof" object (before traceEvents).
inline constexpr std::string_view kExportFormat = "hpcprof-chrome";

/// How a finished process is to be placed in the trace.
struct ProcessPlacement {
    int64_t baseNs = 0;                     ///< added to the file's event times
    std::optional<int64_t> declaredOriginNs; ///< an export's time origin (absolute ns)
    bool rankFinal = false;                 ///< rank decided by the file (may be none)
    size_t fileIndex = 0;                   ///< order of the file among the inputs
};

/// What the importer needs from the session that owns the trace writer.
class ImportSession {
public:
    virtual ~ImportSession() = default;
    virtual int32_t nameId(std::string_view name) = 0;
    virtual Status writeProcess(ProcessBuilder& builder, const ProcessPlacement& placement) = 0;
};

class FileImporter : public EventSink {
public:
    FileImporter(ImportSession& session, std::string path, size_t fileIndex);

    void onEvent(const ParsedEvent& e) override;
    void onTopLevel(const std::string& key, const ArgValue& value) override;
    void onNonObjectEvent() override;

    /// Writes every process still held; `truncated` marks the file as damaged in stats.
    Status finish(bool truncated);
    /// First error from writing a process mid-file (export mode flushes early).
    const Status& error() const { return m_error; }
    /// Objects in the event array, and those with a phase ("ph") of the right type: JSON whose
    /// objects have none is not a trace.
    int64_t eventObjects() const { return m_objects; }
    int64_t phasedEvents() const { return m_phased; }

private:
    struct TrackMeta { // thread_name metadata of an exported track
        std::string name, kind, threadName;
        std::optional<int64_t> device, stream, tid;
    };
    struct OpenBegin {
        ProcessBuilder* builder;
        PendingTrack* track;
        uint32_t index;
    };

    int64_t idKey(const IdField& f);
    ProcessBuilder& builderFor(int64_t pidKey);
    /// A time in ns; empty when absent, or when it overflows or is beyond the times a trace
    /// holds (countBadTime tells which).
    std::optional<int64_t> timeNs(const TimeField& f) const;
    std::optional<int64_t> timeNsUnchecked(const TimeField& f) const;
    /// Counts an event refused for its time `f`: out of range when present, else malformed.
    void countBadTime(const TimeField& f);
    /// Refuses the file for a base time no trace can hold (`key` = `v`).
    void refuseBase(const std::string& key, const ArgValue& v);
    /// The start of an event that needs a time and a name; empty (counted) when either is
    /// missing or the time is out of range.
    std::optional<int64_t> namedStart(const ParsedEvent& e);
    // One per event type (ph): X, B, E, i/I/R, s/t/f.
    void onComplete(const ParsedEvent& e);
    void onBegin(const ParsedEvent& e);
    void onEnd(const ParsedEvent& e);
    void onInstant(const ParsedEvent& e);
    void onFlowPoint(const ParsedEvent& e);
    void onMetadata(const ParsedEvent& e, int64_t pidKey, int64_t tidKey);
    void onFlow(const ParsedEvent& e, int64_t pidKey, int64_t tidKey, int64_t ts);
    PendingTrack& trackFor(ProcessBuilder& b, const ParsedEvent& e, int64_t pidKey,
                           int64_t tidKey, bool gpuLane);
    /// Builds the event from a complete/begin/instant event; false if it was skipped (its
    /// category is not analysed: `track` is then null).
    bool makeEvent(const ParsedEvent& e, int64_t ts, int64_t dur, ProcessBuilder*& b,
                   PendingTrack*& track);
    /// The event's category: an export's own, else cachedCategory() (unknown ones counted).
    CategoryMapping eventCategory(const ParsedEvent& e, ProcessBuilder& b);
    /// mapCategory() of the event, from a per-file cache of categories.
    CategoryMapping cachedCategory(const ParsedEvent& e);
    void fillKinetoFacts(const ParsedEvent& e, PendingEvent& pe, ProcessBuilder& b);
    void fillExportFacts(const ParsedEvent& e, PendingEvent& pe, ProcessBuilder& b);
    /// Writes the process of `pidKey` (if held) and forgets it.
    Status flush(int64_t pidKey, bool truncated);
    // Steps of flush().
    /// B events of `b` that never saw their E: zero duration, counted as unmatched.
    void closeOpenBegins(ProcessBuilder& b);
    /// An export's process: the process row its process_name metadata carries.
    void exportProcessFacts(int64_t pidKey, ProcessBuilder& b);
    /// An export's process: its listed tracks, with their names, kinds and devices restored.
    void exportTracks(int64_t pidKey, ProcessBuilder& b);
    /// A Kineto file: rank (distributedInfo, else the file name), world size, pid, command.
    void kinetoProcessFacts(ProcessBuilder& b, ProcessPlacement& place);
    /// A Kineto file: thread ids and names of the CPU tracks.
    void kinetoTracks(ProcessBuilder& b);
    /// A Kineto file: flow points that came before their track, now that all tracks exist.
    void attachLateFlows(ProcessBuilder& b);
    void countFileStat(schema::Stat s);

    ImportSession& m_session;
    std::string m_path;
    size_t m_fileIndex;
    bool m_exportMode = false;
    int64_t m_nsPerUnit = 1000; // Chrome traces count in microseconds
    int64_t m_baseNs = 0;
    std::optional<int64_t> m_declaredOrigin;
    std::optional<int64_t> m_distRank, m_distWorldSize;
    std::string m_backend;

    std::map<int64_t, std::unique_ptr<ProcessBuilder>> m_builders; // pidKey (export) or 0 (Kineto)
    std::optional<int64_t> m_currentExportPid;
    std::set<int64_t> m_flushedPids;
    std::map<std::string, int64_t> m_syntheticIds; // string pid/tid -> negative key
    std::vector<std::string> m_syntheticNames;
    std::map<int64_t, std::string> m_processNames;
    std::map<int64_t, std::map<std::string, ArgValue>> m_processMeta; // export facts per pid
    std::map<std::pair<int64_t, int64_t>, std::string> m_threadNames;
    std::map<std::pair<int64_t, int64_t>, TrackMeta> m_trackMeta;
    std::map<std::pair<int64_t, int64_t>, std::vector<OpenBegin>> m_open;
    struct LateFlow {
        int64_t pidKey, tidKey;
        FlowPoint point;
    };
    std::vector<LateFlow> m_lateFlows; // flow points that arrived before their track
    std::optional<int64_t> m_cpuPid;
    int64_t m_objects = 0, m_phased = 0;
    store::StatCounts m_pendingStats{}; // counted before any process exists
    Status m_error;
    struct CatCacheEntry {
        std::string cat;
        CategoryMapping mapping{};
        bool perEvent = false; ///< the mapping also depends on the name and args (kernels)
    };
    std::array<CatCacheEntry, 16> m_catCache;
    size_t m_catCacheSize = 0;
};

} // namespace hpcprof::import
