// SPDX-License-Identifier: MIT
// Reads a run's raw directory (see schemas/include/hpcprof/schema/raw_format.hpp): the process
// folders, their headers, and the records of each thread file. Damaged or partial files are
// read as far as they are valid and the problems counted, never thrown.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hpcprof/schema/raw_format.hpp"
#include "huge_page_allocator.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::store {

/// Problems met while reading raw files (folded into the trace's stats table).
struct RawProblems {
    int64_t unreadableFiles = 0;
    int64_t tornRecords = 0;
    int64_t truncatedFiles = 0;
    int64_t processesWithoutHeader = 0; ///< empty process.bin: the agent could not write it
    int64_t tailsIgnored = 0; ///< files longer than their header's capacity (the rest not read)
    std::vector<std::string> messages; ///< one line per unreadable file
};

/// An event record decoded out of the file (plain copy of EventRecord without its atomic). A
/// thread's events are decoded whole before they are written, so its size is the conversion's
/// memory per event (72 bytes; 96 when the in-flight call's facts were carried by every event).
struct RawEvent {
    uint8_t flags;
    /// The data family that owns this event (its slot + 1, family.hpp), 0 = none: only owned
    /// events reach a family's decorate/inserted hooks.
    uint8_t family = 0;
    uint16_t op;
    int32_t status;
    uint64_t start;
    uint64_t end;
    int64_t bytes;
    uint32_t objectId;
    int32_t fd;
    int32_t peer;
    int32_t tag;
    uint32_t commId;
    uint32_t seq;
    int64_t aux;
    uint32_t familyIndex = 0; ///< the owning family's own reference (its facts about the event)
    /// The call its thread was still inside when the process was last seen (in_flight.hpp):
    /// `end` is its start; ThreadRecords::unfinishedUntilTs says until when it lasted.
    bool unfinished = false;
};
static_assert(sizeof(RawEvent) == 72, "the conversion holds a thread's events in memory");

/// An event of `op` from `start` to `end` with nothing else known (no bytes, descriptor, peer or
/// offset): where the converters of the GPU and RDMA sections start their events.
inline RawEvent spanEvent(uint16_t op, uint64_t start, uint64_t end) {
    RawEvent e{};
    e.op = op;
    e.start = start;
    e.end = end;
    e.bytes = -1;
    e.fd = -1;
    e.peer = -1;
    e.aux = -1;
    return e;
}

/// A string definition reassembled from its pieces.
struct RawString {
    uint32_t id;
    std::string text;
};

/// A 64-byte raw record kept as bytes (a family's section).
using RawRecordBytes = std::array<char, 64>;

/// The records of one data family in one thread file, in file order, each with the number of
/// events read before it (so a family can tie a record to the event that follows it).
struct RecordSection {
    std::vector<RawRecordBytes> records;
    std::vector<uint32_t> eventsBefore;
    void add(const char* record, size_t events) {
        std::memcpy(records.emplace_back().data(), record, sizeof(RawRecordBytes));
        eventsBefore.push_back(uint32_t(events));
    }
};

/// Which section each record kind goes to (by kind byte), -1 = no family reads it.
using RecordRouting = std::array<int8_t, 256>;

/// The kind byte of a raw record.
inline schema::raw::RecordKind recordKind(const RawRecordBytes& bytes) {
    return static_cast<schema::raw::RecordKind>(bytes[0]);
}

/// The record as its typed layout (a copy: the bytes carry no alignment guarantee).
template <typename T> T recordAs(const RawRecordBytes& bytes) {
    static_assert(sizeof(T) <= sizeof(RawRecordBytes));
    T r;
    std::memcpy(static_cast<void*>(&r), bytes.data(), sizeof(T));
    return r;
}

/// Why and when a thread stopped recording, and what it could not record (format 4 thread
/// headers; all zero for older files).
struct ThreadDrops {
    uint64_t stoppedTicks = 0; ///< raw ticks when it stopped recording, 0 = it never did
    schema::raw::DropReason stopReason = schema::raw::DropReason::None;
    int32_t stopErrno = 0;     ///< errno of the failed file operation, 0 = none
    std::array<uint64_t, schema::raw::kDropReasonCount> dropped{}; ///< by DropReason
    uint64_t total() const {
        uint64_t n = 0;
        for (uint64_t d : dropped) n += d;
        return n;
    }
};

/// One thread file's committed records, in file order.
struct ThreadRecords {
    /// A spare file the agent made ahead for a thread that never started (thread-spare-<n> with
    /// an empty header), or the file of a thread whose process ended before it finished setting
    /// it up (empty header, no record): no thread, nothing lost.
    bool unusedSpare = false;
    int32_t tid = 0;
    std::string name;
    ThreadDrops drops;
    /// The call the thread was inside when its file was read (format 6 header; op 0 = none),
    /// and whether the line was caught torn (killed while writing it).
    schema::raw::InFlightCall inFlight{};
    bool inFlightTorn = false;
    /// When the thread was last seen inside that call (trace ns): the end of its unfinished
    /// event (RawEvent::unfinished; in_flight.hpp).
    int64_t unfinishedUntilTs = 0;
    std::vector<RawEvent, HugePageAllocator<RawEvent>> events;
    /// How many of the first events the reader saw in start order as it decoded them, so that
    /// the writer need not read them all again to know (ThreadEvents::startOrder). Families add
    /// events after these and never move a decoded event's start.
    size_t eventsInStartOrder = 0;
    std::vector<RawString> strings;
    int64_t incompleteStrings = 0; ///< strings whose last piece never arrived
    /// Every other record, by the family that converts it (RecordRouting; family.hpp).
    std::vector<RecordSection> sections;
};

/// The records of section `slot` of `t`; empty for a thread without them (one a family added).
inline std::vector<RawRecordBytes>& sectionRecords(ThreadRecords& t, int slot) {
    if (t.sections.size() <= size_t(slot)) t.sections.resize(size_t(slot) + 1);
    return t.sections[size_t(slot)].records;
}

inline const std::vector<RawRecordBytes>& sectionRecords(const ThreadRecords& t, int slot) {
    static const std::vector<RawRecordBytes> kNone;
    return t.sections.size() > size_t(slot) ? t.sections[size_t(slot)].records : kNone;
}

/// True when `t` holds no event and no record but those of section `slot`.
inline bool onlySection(const ThreadRecords& t, int slot) {
    if (!t.events.empty()) return false;
    for (size_t i = 0; i < t.sections.size(); ++i)
        if (int(i) != slot && !t.sections[i].records.empty()) return false;
    return true;
}

/// One process folder: its header and its thread files (not yet read).
struct RawProcess {
    std::filesystem::path dir;
    schema::raw::ProcessHeader header{};
    std::vector<std::filesystem::path> threadFiles;
};

/// Lists the process folders of `rawDir`, oldest first. Folders whose header is missing or
/// invalid are skipped and counted in `problems`.
Result<std::vector<RawProcess>> listProcesses(const std::filesystem::path& rawDir,
                                              RawProblems& problems);

/// The routing of the registered families (family.hpp, storeFamilies()).
const RecordRouting& registeredRecordRouting();

/// Reads the committed records of one thread file: events and strings, and the records of each
/// family into its section (`routing`; a kind no family reads counts as torn).
ThreadRecords readThreadFile(const std::filesystem::path& file, RawProblems& problems,
                             const RecordRouting& routing = registeredRecordRouting());

} // namespace hpcprof::store
