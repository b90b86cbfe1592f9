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

/// A call as a run stores it (the rank is the run's): 64 bytes.
struct Record {
    int64_t communicatorId, seq, ts, end, bytes, nameId, eventId;
    uint64_t positionSmall; ///< scan position << 1 | small
};
static_assert(sizeof(Record) == 64);

/// What the side-by-side read of the runs may buffer in all (a run gets its share, at least 16
/// calls): the sweep's memory whatever the number of calls.
constexpr size_t kSweepBufferRecords = (8u << 20) / sizeof(Record);

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

double mebibytes(size_t records) { return double(records * sizeof(Record)) / double(1 << 20); }

} // namespace

struct CollectiveRuns::Impl {
    int fd = -1;                  ///< the temporary file, -1: in memory
    std::vector<Record> memory;   ///< the records when there is no file
    size_t records = 0;           ///< in all
    size_t memoryLimit = SIZE_MAX; ///< records memory may hold when the file failed
    std::string fileFailure;      ///< why the records are in memory; empty: memory was asked for
    std::map<int64_t, std::pair<size_t, size_t>> runs; ///< rank -> (first record, count)

    ~Impl() {
        if (fd >= 0) close(fd);
    }

    Status read(size_t first, size_t n, Record* out) const {
        if (fd < 0) {
            std::copy_n(memory.begin() + ptrdiff_t(first), n, out);
            return {};
        }
        if (!schema::fileio::preadAll(fd, out, n * sizeof(Record), off_t(first * sizeof(Record))))
            return Status::error(std::string("analysis: reading the temporary file of collective calls failed: ") +
                                 std::strerror(errno));
        return {};
    }

    /// Memory may take `more` records after a failed file only while all of them stay under the
    /// limit: past it the analysis stops and says where room is missing, rather than growing
    /// until the machine kills it.
    Status roomInMemory(size_t more) const {
        if (fileFailure.empty() || records + more <= memoryLimit) return {};
        return Status::error(fmt::format(
            "analysis: {}, and the collective calls ({:.1f} MiB so far, {} bytes a call) are more than the {:.1f} MiB "
            "the analysis keeps in memory instead: point TMPDIR to a folder with room for {} bytes per "
            "collective call of the trace",
            fileFailure, mebibytes(records + more), sizeof(Record), mebibytes(memoryLimit), sizeof(Record)));
    }

    /// The file could not take more (full disk): what it holds moves to memory, and so does the rest.
    Status toMemory(size_t more) {
        fileFailure = fmt::format("the temporary file of collective calls in {} (TMPDIR) could not grow past {:.1f} MiB: {}",
                                  temporaryFolder(), mebibytes(records), std::strerror(errno ? errno : ENOSPC));
        HPCPROF_RETURN_IF_ERROR(roomInMemory(more));
        memory.resize(records);
        const Status st = read(0, records, memory.data());
        close(fd);
        fd = -1;
        return st;
    }

    Status append(const std::vector<Record>& rs) {
        if (fd >= 0 && !schema::fileio::pwriteAll(fd, rs.data(), rs.size() * sizeof(Record), off_t(records * sizeof(Record))))
            HPCPROF_RETURN_IF_ERROR(toMemory(rs.size()));
        if (fd < 0) {
            HPCPROF_RETURN_IF_ERROR(roomInMemory(rs.size()));
            memory.insert(memory.end(), rs.begin(), rs.end());
        }
        records += rs.size();
        return {};
    }
};

CollectiveRuns::CollectiveRuns(bool inMemory, size_t memoryLimitBytes) : m(std::make_unique<Impl>()) {
    m->memoryLimit = memoryLimitBytes / sizeof(Record);
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
    m->runs[rank] = {m->records, rs.size()};
    return m->append(rs);
}

std::vector<int64_t> CollectiveRuns::ranks() const {
    std::vector<int64_t> out;
    for (const auto& [r, run] : m->runs) out.push_back(r);
    return out;
}

size_t CollectiveRuns::size() const { return m->records; }
bool CollectiveRuns::spilled() const { return m->fd >= 0; }

Status CollectiveRuns::readRank(int64_t rank, std::vector<RunCall>& out) const {
    out.clear();
    auto it = m->runs.find(rank);
    if (it == m->runs.end()) return {};
    std::vector<Record> rs(it->second.second);
    HPCPROF_RETURN_IF_ERROR(m->read(it->second.first, rs.size(), rs.data()));
    out.reserve(rs.size());
    for (const Record& r : rs) out.push_back(fromRecord(r, rank));
    return {};
}

namespace {

/// One run read in buffer-sized pieces, or `extra` in instance order.
struct Cursor {
    int64_t rank = 0;        ///< the run's (extra: the current call's)
    int source = 0;          ///< 0 a run, 1 extra
    size_t first = 0, count = 0, next = 0; ///< the run's records, the next to read
    std::vector<Record> buffer;
    size_t at = 0, filled = 0; ///< in buffer: the next, and how many were read
    const std::vector<CollectiveCall>* extra = nullptr;
    std::vector<uint32_t> order; ///< extra's indices in instance order
    RunCall current;
    bool done = false; ///< past its last call

    /// To the next call (`read(first, n, out)` reads n records of the runs), or done.
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
        if (at == filled) {
            filled = std::min(buffer.size(), count - next);
            HPCPROF_RETURN_IF_ERROR(read(first + next, filled, buffer.data()));
            at = 0;
        }
        current = fromRecord(buffer[at++], rank);
        ++next;
        return {};
    }
};

/// A cursor per run, in rank order, sharing the sweep's buffer.
std::vector<Cursor> runCursors(const std::map<int64_t, std::pair<size_t, size_t>>& runs, size_t cursors) {
    std::vector<Cursor> out(runs.size());
    const size_t share = std::max<size_t>(16, kSweepBufferRecords / std::max<size_t>(1, cursors));
    size_t k = 0;
    for (const auto& [rank, run] : runs) {
        Cursor& c = out[k++];
        c.rank = rank;
        std::tie(c.first, c.count) = run;
        c.buffer.resize(std::min(share, c.count));
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
    auto read = [this](size_t first, size_t n, Record* out) { return m->read(first, n, out); };
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
