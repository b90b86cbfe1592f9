// SPDX-License-Identifier: MIT
#include "raw_reader.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "hpcprof/schema/catalog.hpp"
#include "in_flight.hpp"

namespace hpcprof::store {

namespace fs = std::filesystem;
namespace raw = schema::raw;

namespace {

bool readableVersion(uint32_t v) {
    return v >= raw::kOldestReadableVersion && v <= raw::kFormatVersion;
}

/// Turns `record` (the call a Repeat entry repeats) into the call entry `entry` stands for, which
/// starts its gap after `previousEnd` (the end of the call just before it).
void expandRepeat(char* record, const raw::RepeatLayout& layout, int32_t step, uint64_t entry,
                  uint64_t previousEnd) {
    uint64_t start, end;
    start = previousEnd + (entry >> 32);
    end = start + (entry & 0xffffffffu) - 1;
    std::memcpy(record + raw::kRepeatStartOffset, &start, 8);
    std::memcpy(record + layout.endOffset, &end, 8);
    if (layout.counterBytes == 4) {
        uint32_t c;
        std::memcpy(&c, record + layout.counterOffset, 4);
        c += uint32_t(step);
        std::memcpy(record + layout.counterOffset, &c, 4);
    } else {
        uint64_t c;
        std::memcpy(&c, record + layout.counterOffset, 8);
        c += uint64_t(int64_t(step));
        std::memcpy(record + layout.counterOffset, &c, 8);
    }
}

/// A read-only mapping of a whole file; empty if the file cannot be mapped. Keeps the
/// descriptor for dataRanges().
class MappedFile {
public:
    explicit MappedFile(const fs::path& path) {
        m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) return;
        struct stat st;
        if (::fstat(m_fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, m_fd, 0);
            if (m != MAP_FAILED) {
                m_data = static_cast<const char*>(m);
                m_size = size_t(st.st_size);
            }
        }
    }
    ~MappedFile() {
        if (m_data) ::munmap(const_cast<char*>(m_data), m_size);
        if (m_fd >= 0) ::close(m_fd);
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const char* data() const { return m_data; }
    size_t size() const { return m_size; }

    /// The parts of [from, to) that hold data, as the file system tells (SEEK_DATA/SEEK_HOLE):
    /// holes, which read as zeros, are left out. All of it where the file system cannot tell.
    /// At most kMaxRanges ranges; the last one then covers the rest.
    std::vector<std::pair<size_t, size_t>> dataRanges(size_t from, size_t to) const {
        static constexpr size_t kMaxRanges = 4096;
        std::vector<std::pair<size_t, size_t>> out;
        size_t pos = from;
        while (pos < to) {
            off_t d = ::lseek(m_fd, off_t(pos), SEEK_DATA);
            if (d < 0) {
                if (errno != ENXIO) out.emplace_back(pos, to); // cannot tell: all of it
                break;                                         // ENXIO: only a hole is left
            }
            if (size_t(d) >= to) break;
            off_t h = ::lseek(m_fd, d, SEEK_HOLE);
            size_t end = h < 0 || out.size() + 1 == kMaxRanges ? to : std::min(size_t(h), to);
            out.emplace_back(size_t(d), end);
            pos = end;
        }
        return out;
    }

private:
    int m_fd = -1;
    const char* m_data = nullptr;
    size_t m_size = 0;
};

/// Honest files have a few strings in flight at once (a signal handler's string between the
/// pieces of another); beyond this many, the oldest is given up (counted as incomplete).
constexpr size_t kMaxPendingStrings = 16;

bool readProcessHeader(const fs::path& file, raw::ProcessHeader& out) {
    MappedFile m(file);
    if (m.size() < sizeof(raw::ProcessHeader)) return false;
    std::memcpy(static_cast<void*>(&out), m.data(), sizeof(out));
    return out.magic == raw::kProcessMagic && readableVersion(out.version) &&
           out.recordSize == raw::kRecordSize;
}

} // namespace

Result<std::vector<RawProcess>> listProcesses(const fs::path& rawDir, RawProblems& problems) {
    std::error_code ec;
    if (!fs::is_directory(rawDir, ec))
        return Status::error(rawDir.string() + (fs::exists(rawDir, ec)
                                                    ? ": not a raw directory (not a folder)"
                                                    : ": not a raw directory (no such folder)"));
    std::vector<RawProcess> out;
    for (const auto& entry : fs::directory_iterator(rawDir, ec)) {
        if (!entry.is_directory() || entry.path().filename().string().rfind("proc-", 0) != 0)
            continue;
        RawProcess p;
        p.dir = entry.path();
        if (!readProcessHeader(p.dir / "process.bin", p.header)) {
            // Empty: the agent made the folder but had no disk space for the header (it then
            // lets the process run unrecorded).
            if (fs::file_size(p.dir / "process.bin", ec) == 0 && !ec) {
                problems.processesWithoutHeader++;
                problems.messages.push_back((p.dir / "process.bin").string() +
                                            ": empty: the agent could not write it (disk full?); "
                                            "this process was not recorded");
                continue;
            }
            ec.clear();
            problems.unreadableFiles++;
            problems.messages.push_back((p.dir / "process.bin").string() +
                                        ": missing or invalid process header");
            continue;
        }
        for (const auto& t : fs::directory_iterator(p.dir, ec))
            if (t.path().filename().string().rfind("thread-", 0) == 0)
                p.threadFiles.push_back(t.path());
        std::sort(p.threadFiles.begin(), p.threadFiles.end());
        out.push_back(std::move(p));
    }
    if (ec) return Status::error(rawDir.string() + ": " + ec.message());
    std::sort(out.begin(), out.end(), [](const RawProcess& a, const RawProcess& b) {
        return a.header.start.realtimeNs < b.header.start.realtimeNs;
    });
    return out;
}

namespace {

// ---- readThreadFile's steps: the header, the slot ranges worth reading, the records ----------

/// Slot ranges [first, last) of a thread file, in file order.
using SlotRanges = std::vector<std::pair<size_t, size_t>>;

/// One section per slot the routing names.
size_t sectionCount(const RecordRouting& routing) {
    int count = 0;
    for (int8_t slot : routing) count = std::max(count, slot + 1);
    return size_t(count);
}

/// Takes the thread, its name and what it could not record out of the header `h`.
void takeThreadHeader(const raw::ThreadFileHeader& h, ThreadRecords& out) {
    out.tid = h.tid;
    out.name.assign(h.threadName, strnlen(h.threadName, sizeof(h.threadName)));
    if (h.version >= 4) {
        out.drops.stoppedTicks = h.stoppedTicks;
        out.drops.stopReason = h.stopReason < raw::kDropReasonCount
                                   ? static_cast<raw::DropReason>(h.stopReason)
                                   : raw::DropReason::FileError;
        out.drops.stopErrno = h.stopErrno;
        std::copy(std::begin(h.dropped), std::end(h.dropped), out.drops.dropped.begin());
    }
}

/// True when the first record slot after the header is empty (or absent).
bool neverInitialised(const MappedFile& m) {
    const size_t end = std::min<size_t>(m.size(), raw::kHeaderSize + raw::kRecordSize);
    for (size_t i = raw::kHeaderSize; i < end; ++i)
        if (m.data()[i] != 0) return false;
    return true;
}

/// Reads the header of thread file `m` into `h` and its fields into `out`. False when there is
/// nothing more to read: the file is too short or not a thread file (counted in `problems`), or
/// an unused spare (out.unusedSpare).
bool readThreadHeader(const fs::path& file, const MappedFile& m, raw::ThreadFileHeader& h,
                      ThreadRecords& out, RawProblems& problems) {
    if (m.size() < sizeof(h)) {
        problems.unreadableFiles++;
        problems.messages.push_back(file.string() + ": too short for a thread header");
        return false;
    }
    std::memcpy(static_cast<void*>(&h), m.data(), sizeof(h));
    // No magic and no first record: an unused spare, or a thread whose process ended while it
    // set its file up (the agent writes the magic last and records nothing before it): nothing
    // was lost, nothing to read (it was reported as damaged now and then in CI). A zeroed header
    // in front of records is damage.
    if (h.magic == 0 && neverInitialised(m)) {
        out.unusedSpare = true;
        return false;
    }
    if (h.magic != raw::kThreadMagic || !readableVersion(h.version) ||
        h.recordSize != raw::kRecordSize) {
        problems.unreadableFiles++;
        problems.messages.push_back(file.string() + ": bad magic or unsupported raw format");
        return false;
    }
    takeThreadHeader(h, out);
    return true;
}

/// The slots worth reading. Only the slots the header accounts for are read: the agent maps
/// every slot (and counts it in `capacity`) before it writes there. A file longer than that
/// (extended after the run, a sparse copy, space reserved ahead) is not read past them; a
/// shorter one (cut short) is read to its end. When the header does not bound the file (its
/// capacity is beyond the file's end: damaged, or cut short), holes of a sparse file are skipped
/// rather than read page by page; what a hole covers counts as torn slots, like any other empty
/// slot.
SlotRanges slotRanges(const MappedFile& m, const raw::ThreadFileHeader& h, RawProblems& problems) {
    const size_t fileSlots = (m.size() - raw::kHeaderSize) / raw::kRecordSize;
    const size_t slots = size_t(std::min<uint64_t>(h.capacity, fileSlots));
    if (h.capacity > fileSlots) problems.truncatedFiles++;
    if (fileSlots > h.capacity) problems.tailsIgnored++;
    SlotRanges ranges;
    if (h.capacity > fileSlots) {
        const size_t fileEnd = raw::kHeaderSize + slots * raw::kRecordSize;
        for (auto [b, e] : m.dataRanges(raw::kHeaderSize, fileEnd))
            ranges.emplace_back((b - raw::kHeaderSize) / raw::kRecordSize,
                                (e - raw::kHeaderSize + raw::kRecordSize - 1) / raw::kRecordSize);
    } else if (slots > 0) {
        ranges.emplace_back(0, slots);
    }
    return ranges;
}

/// Cuts `ranges` after the last committed record: slots after it were never used (an Empty
/// slot before it was reserved but never completed: the process died mid-record).
void trimUnusedSlots(SlotRanges& ranges, const char* base) {
    size_t end = 0;
    while (!ranges.empty()) {
        end = ranges.back().second;
        while (end > ranges.back().first && base[(end - 1) * raw::kRecordSize] == 0) --end;
        if (end > ranges.back().first) break;
        ranges.pop_back();
        end = 0;
    }
    if (!ranges.empty()) ranges.back().second = end;
}

/// Room for the events, counted from the kind bytes (a Repeat slot stands for up to
/// kRepeatEntries calls). Always counted, never guessed from the slot count: a loop of like calls
/// is mostly Repeat slots (1 M pwrite calls fill 180 k slots), and reserving the slot count made
/// the vector grow three times over (a tenth of the conversion's CPU in copies and page faults);
/// a damaged file's slots may hold anything, and reserving a vast slot count failed with
/// bad_alloc. The pass reads one byte per slot, pages the reading touches next anyway.
size_t eventRoom(const SlotRanges& ranges, const char* base) {
    size_t events = 0;
    for (auto [b, e] : ranges)
        for (size_t i = b; i < e; ++i) {
            const auto kind = static_cast<raw::RecordKind>(base[i * raw::kRecordSize]);
            events += kind == raw::RecordKind::Event    ? 1
                      : kind == raw::RecordKind::Repeat ? raw::kRepeatEntries
                                                        : 0;
        }
    return events;
}

/// Reads the records of a thread file's slots into a ThreadRecords, in file order: events,
/// strings (reassembled from their pieces), the families' records into their sections, and the
/// calls Repeat records stand for.
class SlotReader {
public:
    SlotReader(ThreadRecords& out, RawProblems& problems, const RecordRouting& routing)
        : m_out(out), m_problems(problems), m_routing(routing) {}

    /// Reads the slots of `ranges`; the slots between them (holes) count as torn.
    void read(const char* base, const SlotRanges& ranges) {
        size_t previousEnd = 0;
        for (auto [first, last] : ranges) {
            first = std::max(first, previousEnd);
            if (first > previousEnd) {
                m_problems.tornRecords += int64_t(first - previousEnd); // a hole: never written
                endRun();                                               // a run does not span it
            }
            for (size_t i = first; i < last; ++i) readSlot(base + i * raw::kRecordSize);
            previousEnd = std::max(previousEnd, last);
        }
        m_out.incompleteStrings += int64_t(m_pending.size());
        if (m_ordered) m_out.eventsInStartOrder = m_out.events.size();
    }

private:
    /// One slot: a record, or a Repeat record standing for more calls like the ones before it.
    void readSlot(const char* rec) {
        if (static_cast<raw::RecordKind>(rec[0]) == raw::RecordKind::Repeat) {
            takeRepeat(rec);
            return;
        }
        take(rec);
        m_runCalls[0] = m_runCalls[1];
        if (raw::repeatLayout(rec)) std::memcpy(m_runCalls[1].data(), rec, raw::kRecordSize);
        else endRun();
    }

    /// The calls a Repeat record stands for, each taken as if it had its own slot.
    void takeRepeat(const char* rec) {
        raw::RepeatRecord r;
        std::memcpy(static_cast<void*>(&r), rec, sizeof(r));
        // Each entry repeats the call `period` back: the latest, or the one before it.
        size_t back = r.period == 2 ? 0 : 1;
        const raw::RepeatLayout* layout = raw::repeatLayout(m_runCalls[back].data());
        if (!layout || !raw::repeatLayout(m_runCalls[1].data()) || r.period > 2) {
            m_problems.tornRecords++; // the run's first records were never committed
            return;
        }
        for (uint32_t k = 0; k < raw::kRepeatEntries && r.entries[k] != 0; ++k) {
            alignas(8) RawRecordBytes call = m_runCalls[back];
            expandRepeat(call.data(), *layout, r.step, r.entries[k], endOf(m_runCalls[1]));
            take(call.data());
            m_runCalls[0] = m_runCalls[1];
            m_runCalls[1] = call;
        }
    }

    static uint64_t endOf(const RawRecordBytes& call) {
        uint64_t end;
        std::memcpy(&end, call.data() + raw::repeatLayout(call.data())->endOffset, 8);
        return end;
    }

    /// Slots since the last calls no longer form a run a Repeat record may continue.
    void endRun() { m_runCalls[0][0] = m_runCalls[1][0] = 0; }

    void take(const char* rec) {
        switch (static_cast<raw::RecordKind>(rec[0])) {
        case raw::RecordKind::Event:
            takeEvent(*reinterpret_cast<const raw::EventRecord*>(rec));
            break;
        case raw::RecordKind::String:
            takeString(*reinterpret_cast<const raw::StringRecord*>(rec));
            break;
        default: takeFamilyRecord(rec); break;
        }
    }

    void takeEvent(const raw::EventRecord& r) {
        // In start order until an event starts before the one decoded last (ThreadRecords::
        // eventsInStartOrder, set when the reading ends).
        if (r.start < m_lastStart && m_ordered) {
            m_ordered = false;
            m_out.eventsInStartOrder = m_out.events.size();
        }
        m_lastStart = r.start;
        m_out.events.push_back(RawEvent{r.flags, 0, r.op, r.status, r.start, r.end, r.bytes,
                                        r.objectId, r.fd, r.peer, r.tag, r.commId, r.seq, r.aux});
    }

    void takeString(const raw::StringRecord& r) {
        auto it = std::find_if(m_pending.begin(), m_pending.end(),
                               [&](const RawString& s) { return s.id == r.id; });
        if (it == m_pending.end()) {
            if (m_pending.size() == kMaxPendingStrings) {
                m_pending.erase(m_pending.begin());
                m_out.incompleteStrings++;
            }
            it = m_pending.insert(m_pending.end(), RawString{r.id, {}});
        }
        it->text.append(r.text, std::min<size_t>(r.length, raw::kStringPieceSize));
        if (r.last) {
            m_out.strings.push_back(std::move(*it));
            m_pending.erase(it);
        }
    }

    void takeFamilyRecord(const char* rec) {
        if (int8_t slot = m_routing[uint8_t(rec[0])]; slot >= 0)
            m_out.sections[size_t(slot)].add(rec, m_out.events.size());
        else
            m_problems.tornRecords++; // an empty slot (reserved, never completed) or damage
    }

    ThreadRecords& m_out;
    RawProblems& m_problems;
    const RecordRouting& m_routing;
    std::vector<RawString> m_pending; ///< strings whose pieces are still arriving (rarely > 1)
    uint64_t m_lastStart = 0; ///< the start of the event decoded last
    bool m_ordered = true;    ///< every event so far started no earlier than the one before
    /// The last two calls read (m_runCalls[1] the latest), as full records, while the slots
    /// since them are a run a Repeat record may continue (repeatLayout() of each is non-null);
    /// empty (kind 0) otherwise.
    alignas(8) RawRecordBytes m_runCalls[2]{};
};

} // namespace

ThreadRecords readThreadFile(const fs::path& file, RawProblems& problems,
                             const RecordRouting& routing) {
    ThreadRecords out;
    out.sections.resize(sectionCount(routing));
    MappedFile m(file);
    raw::ThreadFileHeader h;
    if (!readThreadHeader(file, m, h, out, problems)) return out;
    if (h.version >= 6)
        out.inFlightTorn = readInFlight(m.data(), out.inFlight) == InFlightState::Torn;
    SlotRanges ranges = slotRanges(m, h, problems);
    const char* base = m.data() + raw::kHeaderSize;
    trimUnusedSlots(ranges, base);
    try {
        out.events.reserve(eventRoom(ranges, base) + 1); // + 1: the call in flight (in_flight.cpp)
    } catch (const std::bad_alloc&) {
        // A damaged file's kind bytes claimed more than fits: grow as the events come instead.
    }
    SlotReader(out, problems, routing).read(base, ranges);
    return out;
}

} // namespace hpcprof::store
