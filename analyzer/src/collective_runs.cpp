// SPDX-License-Identifier: MIT
#include "collective_runs.hpp"

#include "sort_unless_sorted.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "hpcprof/schema/file_io.hpp"

namespace hpcprof::analyzer::detail {

namespace {

/// A call of a run before it is encoded (the rank is the run's).
struct Record {
    int64_t communicatorId, seq, ts, end, bytes, nameId, eventId;
    uint64_t positionSmall; ///< scan position << 1 | small
};

/// Most bytes one encoded call takes: eight varints of at most ten bytes.
constexpr size_t kMaxCallBytes = 80;

/// What the side-by-side read of the runs may buffer in all (a run gets its share, at least
/// two calls' worth): the sweep's memory whatever the number of calls.
constexpr size_t kSweepBufferBytes = size_t(8) << 20;

Record toRecord(const CollectiveCall& c, size_t position, bool small) {
    return {c.communicatorId, c.seq, c.ts, c.end, c.bytes, c.nameId, c.eventId, uint64_t(position) << 1 | (small ? 1 : 0)};
}

RunCall fromRecord(const Record& r, int64_t rank) {
    RunCall out;
    out.call = {rank, r.communicatorId, r.seq, r.ts, r.end, r.bytes, r.nameId, r.eventId};
    out.position = uint32_t(r.positionSmall >> 1);
    out.small = r.positionSmall & 1;
    return out;
}

// A run is stored compactly (at 64 bytes a call the file was 15 GB at 1 B events, and pwrite's
// copies into the page cache alone were 12 % of a 64-rank report's CPU): each field as a zigzag
// varint of its difference from the previous call's (the end from the call's own start). Sorted
// by instance, a run's communicator and name rarely change, seq steps by one, and starts, event
// ids and positions grow a little: 12 bytes a call on the generated MPI job (bench/scale/jobgen),
// 80 at most. The differences wrap (unsigned), so any values come back exact.

uint64_t zigzag(uint64_t d) { return d << 1 ^ uint64_t(int64_t(d) >> 63); }
uint64_t unzigzag(uint64_t z) { return z >> 1 ^ (0 - (z & 1)); }

void putVarint(std::vector<uint8_t>& out, uint64_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(uint8_t(v) | 0x80);
    out.push_back(uint8_t(v));
}

/// The varint at p (before end) into v: past it, or nullptr for one cut short or too long.
const uint8_t* getVarint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        const uint8_t b = *p++;
        v |= uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return p;
    }
    return nullptr;
}

/// The calls of one run, each against the one before.
class RunEncoder {
public:
    void put(const Record& r, std::vector<uint8_t>& out) {
        putVarint(out, zigzag(uint64_t(r.communicatorId) - uint64_t(m_prev.communicatorId)));
        putVarint(out, zigzag(uint64_t(r.seq) - uint64_t(m_prev.seq)));
        putVarint(out, zigzag(uint64_t(r.ts) - uint64_t(m_prev.ts)));
        putVarint(out, zigzag(uint64_t(r.end) - uint64_t(r.ts)));
        putVarint(out, zigzag(uint64_t(r.bytes) - uint64_t(m_prev.bytes)));
        putVarint(out, zigzag(uint64_t(r.nameId) - uint64_t(m_prev.nameId)));
        putVarint(out, zigzag(uint64_t(r.eventId) - uint64_t(m_prev.eventId)));
        putVarint(out, zigzag(r.positionSmall - m_prev.positionSmall));
        m_prev = r;
    }

private:
    Record m_prev{};
};

class RunDecoder {
public:
    /// The call at p (before end) into r: past it, or nullptr for bytes that are no call.
    const uint8_t* get(const uint8_t* p, const uint8_t* end, Record& r) {
        uint64_t d[8];
        for (uint64_t& v : d)
            if (!(p = getVarint(p, end, v))) return nullptr;
        auto plus = [](int64_t base, uint64_t z) { return int64_t(uint64_t(base) + unzigzag(z)); };
        r.communicatorId = plus(m_prev.communicatorId, d[0]);
        r.seq = plus(m_prev.seq, d[1]);
        r.ts = plus(m_prev.ts, d[2]);
        r.end = plus(r.ts, d[3]);
        r.bytes = plus(m_prev.bytes, d[4]);
        r.nameId = plus(m_prev.nameId, d[5]);
        r.eventId = plus(m_prev.eventId, d[6]);
        r.positionSmall = m_prev.positionSmall + unzigzag(d[7]);
        m_prev = r;
        return p;
    }

private:
    Record m_prev{};
};

Status damagedFile() { return Status::error("analysis: the temporary file of collective calls reads back damaged"); }

/// Where the temporary file goes: $TMPDIR, else /tmp.
std::string temporaryFolder() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/// An unlinked file in temporaryFolder(); -1 (errno set) when none can be made.
int openTemporary() {
    std::string path = temporaryFolder() + "/hpcprof-collectives-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd >= 0) unlink(path.c_str());
    return fd;
}

double mebibytes(size_t bytes) { return double(bytes) / double(1 << 20); }

} // namespace

/// A rank's run: where its bytes are, and how many calls they hold.
struct CollectiveRuns::Run {
    size_t offset = 0, bytes = 0, calls = 0;
};

struct CollectiveRuns::Impl {
    int fd = -1;                  ///< the temporary file, -1: in memory
    std::vector<uint8_t> memory;  ///< the runs when there is no file
    size_t bytes = 0, calls = 0;  ///< of all runs
    size_t memoryLimit = SIZE_MAX; ///< bytes memory may hold when the file failed
    std::string fileFailure;      ///< why the runs are in memory; empty: memory was asked for
    std::map<int64_t, Run> runs;

    ~Impl() {
        if (fd >= 0) close(fd);
    }

    Status read(size_t offset, size_t n, uint8_t* out) const {
        if (fd < 0) {
            std::copy_n(memory.begin() + ptrdiff_t(offset), n, out);
            return {};
        }
        if (!schema::fileio::preadAll(fd, out, n, off_t(offset)))
            return Status::error(std::string("analysis: reading the temporary file of collective calls failed: ") +
                                 std::strerror(errno));
        return {};
    }

    /// Memory may take `more` bytes after a failed file only while all of them stay under the
    /// limit: past it the analysis stops and says where room is missing, rather than growing
    /// until the machine kills it.
    Status roomInMemory(size_t more, size_t moreCalls) const {
        if (fileFailure.empty() || bytes + more <= memoryLimit) return {};
        const double perCall = double(bytes + more) / double(std::max<size_t>(1, calls + moreCalls));
        return Status::error(fmt::format(
            "analysis: {}, and the collective calls ({:.1f} MiB so far, {:.0f} bytes a call) are more than the "
            "{:.1f} MiB the analysis keeps in memory instead: point TMPDIR to a folder with room for about {:.0f} "
            "bytes per collective call of the trace",
            fileFailure, mebibytes(bytes + more), perCall, mebibytes(memoryLimit), perCall));
    }

    /// The file could not take more (full disk): what it holds moves to memory, and so does the rest.
    Status toMemory(size_t more, size_t moreCalls) {
        fileFailure = fmt::format("the temporary file of collective calls in {} (TMPDIR) could not grow past {:.1f} MiB: {}",
                                  temporaryFolder(), mebibytes(bytes), std::strerror(errno ? errno : ENOSPC));
        HPCPROF_RETURN_IF_ERROR(roomInMemory(more, moreCalls));
        memory.resize(bytes);
        const Status st = read(0, bytes, memory.data());
        close(fd);
        fd = -1;
        return st;
    }

    Status append(const std::vector<uint8_t>& run, size_t runCalls) {
        if (fd >= 0 && !schema::fileio::pwriteAll(fd, run.data(), run.size(), off_t(bytes)))
            HPCPROF_RETURN_IF_ERROR(toMemory(run.size(), runCalls));
        if (fd < 0) {
            HPCPROF_RETURN_IF_ERROR(roomInMemory(run.size(), runCalls));
            memory.insert(memory.end(), run.begin(), run.end());
        }
        bytes += run.size();
        calls += runCalls;
        return {};
    }
};

CollectiveRuns::CollectiveRuns(bool inMemory, size_t memoryLimitBytes) : m(std::make_unique<Impl>()) {
    m->memoryLimit = memoryLimitBytes;
    if (inMemory) return;
    m->fd = openTemporary();
    if (m->fd < 0)
        m->fileFailure = fmt::format("no temporary file for the collective calls could be made in {} (TMPDIR): {}",
                                     temporaryFolder(), std::strerror(errno));
}
CollectiveRuns::~CollectiveRuns() = default;
CollectiveRuns::CollectiveRuns(CollectiveRuns&&) noexcept = default;
CollectiveRuns& CollectiveRuns::operator=(CollectiveRuns&&) noexcept = default;

Status CollectiveRuns::addRank(int64_t rank, const std::vector<CollectiveCall>& calls, const std::vector<bool>& small) {
    if (calls.empty()) return {};
    std::vector<Record> rs;
    rs.reserve(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) rs.push_back(toRecord(calls[i], i, !small.empty() && small[i]));
    sortUnlessSorted(rs, [](const Record& a, const Record& b) {
        return std::tie(a.communicatorId, a.seq) < std::tie(b.communicatorId, b.seq);
    });
    std::vector<uint8_t> run;
    run.reserve(rs.size() * 16);
    RunEncoder encoder;
    for (const Record& r : rs) encoder.put(r, run);
    m->runs[rank] = {m->bytes, run.size(), rs.size()};
    return m->append(run, rs.size());
}

std::vector<int64_t> CollectiveRuns::ranks() const {
    std::vector<int64_t> out;
    for (const auto& [r, run] : m->runs) out.push_back(r);
    return out;
}

size_t CollectiveRuns::size() const { return m->calls; }
size_t CollectiveRuns::bytes() const { return m->bytes; }
bool CollectiveRuns::spilled() const { return m->fd >= 0; }

Status CollectiveRuns::readRank(int64_t rank, std::vector<RunCall>& out) const {
    out.clear();
    auto it = m->runs.find(rank);
    if (it == m->runs.end()) return {};
    const Run& run = it->second;
    std::vector<uint8_t> bytes(run.bytes);
    HPCPROF_RETURN_IF_ERROR(m->read(run.offset, run.bytes, bytes.data()));
    out.reserve(run.calls);
    RunDecoder decoder;
    const uint8_t *p = bytes.data(), *end = p + bytes.size();
    Record r{};
    for (size_t i = 0; i < run.calls; ++i) {
        if (!(p = decoder.get(p, end, r))) return damagedFile();
        out.push_back(fromRecord(r, rank));
    }
    return {};
}

namespace {

/// One run read in buffer-sized pieces, or `extra` in instance order.
struct Cursor {
    int64_t rank = 0;        ///< the run's (extra: the current call's)
    int source = 0;          ///< 0 a run, 1 extra
    size_t count = 0, next = 0;      ///< the calls, the next to decode
    size_t fileAt = 0, fileEnd = 0;  ///< the run's bytes not read yet
    std::vector<uint8_t> buffer;
    size_t at = 0, filled = 0; ///< in buffer: the next byte, and how many were read
    RunDecoder decoder;
    const std::vector<CollectiveCall>* extra = nullptr;
    std::vector<uint32_t> order; ///< extra's indices in instance order
    RunCall current;
    bool done = false; ///< past its last call

    /// To the next call (`read(offset, n, out)` reads n bytes of the runs), or done.
    template <typename Read>
    Status advance(const Read& read) {
        if (next == count) {
            done = true;
            return {};
        }
        if (source == 1) {
            current.call = (*extra)[order[next++]];
            current.small = false;
            return {};
        }
        if (filled - at < kMaxCallBytes && fileAt < fileEnd) { // the unread bytes first, then more
            std::memmove(buffer.data(), buffer.data() + at, filled - at);
            filled -= at;
            at = 0;
            const size_t n = std::min(buffer.size() - filled, fileEnd - fileAt);
            HPCPROF_RETURN_IF_ERROR(read(fileAt, n, buffer.data() + filled));
            fileAt += n;
            filled += n;
        }
        Record r{};
        const uint8_t* p = decoder.get(buffer.data() + at, buffer.data() + filled, r);
        if (!p) return damagedFile();
        at = size_t(p - buffer.data());
        current = fromRecord(r, rank);
        ++next;
        return {};
    }
};

/// A cursor per run, in rank order, sharing the sweep's buffer.
std::vector<Cursor> runCursors(const std::map<int64_t, CollectiveRuns::Run>& runs, size_t cursors) {
    std::vector<Cursor> out(runs.size());
    const size_t share = std::max(2 * kMaxCallBytes, kSweepBufferBytes / std::max<size_t>(1, cursors));
    size_t k = 0;
    for (const auto& [rank, run] : runs) {
        Cursor& c = out[k++];
        c.rank = rank;
        c.count = run.calls;
        c.fileAt = run.offset;
        c.fileEnd = run.offset + run.bytes;
        c.buffer.resize(std::min(share, run.bytes));
    }
    return out;
}

/// The cursor of the calls outside the runs, in instance order (rank among equals).
Cursor extraCursor(const std::vector<CollectiveCall>& extra) {
    Cursor c;
    c.source = 1;
    c.extra = &extra;
    c.count = extra.size();
    c.order.resize(extra.size());
    for (size_t i = 0; i < extra.size(); ++i) c.order[i] = uint32_t(i);
    std::stable_sort(c.order.begin(), c.order.end(), [&](uint32_t a, uint32_t b) {
        return std::tie(extra[a].communicatorId, extra[a].seq, extra[a].rank) <
               std::tie(extra[b].communicatorId, extra[b].seq, extra[b].rank);
    });
    return c;
}

/// A tournament of k sorted sources that keeps each match's loser: the winner (the source
/// whose head comes first) after one source's head changed costs the log2(k) matches on that
/// source's path only. `before(a, b)`: source a's head comes before b's.
template <typename Before>
class LoserTree {
public:
    LoserTree(size_t k, Before before) : m_k(k), m_node(std::max<size_t>(k, 1), kNone), m_before(before) {
        // Each source parks at the first empty node on its way up; a node passes a winner on
        // once both its subtrees have delivered theirs.
        for (size_t i = 0; i < k; ++i) play(i, true);
    }
    size_t winner() const { return m_node[0]; }
    /// After the head of source `i` (the last winner) changed.
    void replay(size_t i) { play(i, false); }

private:
    static constexpr size_t kNone = SIZE_MAX;
    void play(size_t i, bool building) {
        size_t w = i;
        for (size_t node = (i + m_k) / 2; node > 0; node /= 2) {
            if (building && m_node[node] == kNone) {
                m_node[node] = w;
                return;
            }
            if (m_before(m_node[node], w)) std::swap(m_node[node], w);
        }
        m_node[0] = w;
    }
    size_t m_k;
    std::vector<size_t> m_node; ///< [0]: the winner, [1, k): each match's loser
    Before m_before;
};

} // namespace

Status CollectiveRuns::sweep(const std::vector<CollectiveCall>& extra,
                             const std::function<void(const CollectiveCall&, bool small)>& each) const {
    std::vector<Cursor> cursors = runCursors(m->runs, m->runs.size() + (extra.empty() ? 0 : 1));
    if (!extra.empty()) cursors.push_back(extraCursor(extra));
    if (cursors.empty()) return {};
    auto read = [this](size_t offset, size_t n, uint8_t* out) { return m->read(offset, n, out); };
    for (Cursor& c : cursors) HPCPROF_RETURN_IF_ERROR(c.advance(read));
    // The cursors merged by (communicator, seq, rank, source, cursor) in a loser tree: log2(k)
    // comparisons a call where a binary heap's pop and push made about twice as many (the
    // sweep is serial: it was 4 % of a report's samples at 256 ranks).
    auto before = [&](size_t a, size_t b) {
        const Cursor &ca = cursors[a], &cb = cursors[b];
        if (ca.done || cb.done) return ca.done == cb.done ? a < b : cb.done;
        const CollectiveCall &x = ca.current.call, &y = cb.current.call;
        return std::tie(x.communicatorId, x.seq, x.rank, ca.source, a) < std::tie(y.communicatorId, y.seq, y.rank, cb.source, b);
    };
    LoserTree tree(cursors.size(), before);
    for (size_t w = tree.winner(); !cursors[w].done; w = tree.winner()) {
        each(cursors[w].current.call, cursors[w].current.small);
        HPCPROF_RETURN_IF_ERROR(cursors[w].advance(read));
        tree.replay(w);
    }
    return {};
}

} // namespace hpcprof::analyzer::detail
