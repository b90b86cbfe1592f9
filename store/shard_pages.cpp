// SPDX-License-Identifier: MIT
#include "shard_pages.hpp"

#include "table_pages.hpp"

#include "direct_io.hpp"
#include "huge_page_allocator.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace hpcprof::store {

namespace {

using namespace pages;

constexpr size_t kMaxColumns = 64;

/// One value of a record: its serial type and where its bytes are (nullptr: in `v`, changed).
struct Value {
    uint64_t type;
    const uint8_t* bytes;
    int64_t v;
};

/// `op` applied to an integer or NULL value; false for a value it cannot apply to.
[[gnu::always_inline]] inline bool apply(const ColumnOp& op, Value& c) {
    if (op.kind == ColumnOp::Kind::Copy || c.type == 0) return true;
    if (!isInteger(c.type)) return false;
    int64_t v = readInteger(c.type, c.bytes);
    if (op.kind == ColumnOp::Kind::Add) {
        v += op.add;
    } else if (v < 0 || uint64_t(v) >= op.map->size() || (*op.map)[size_t(v)] < 0) {
        c.type = 0; // unmapped: NULL
        return true;
    } else {
        v = (*op.map)[size_t(v)];
    }
    c.type = integerType(v);
    c.bytes = nullptr;
    c.v = v;
    return true;
}

/// The record of `n` values into `out`; its length.
int64_t writeRecord(const Value* values, size_t n, uint8_t* out) {
    int64_t typesLen = 0;
    for (size_t i = 0; i < n; ++i) typesLen += varintLen(values[i].type);
    int64_t header = typesLen + 1;
    if (varintLen(uint64_t(header)) > 1) header = typesLen + varintLen(uint64_t(typesLen + 2));
    int64_t w = putVarint(out, uint64_t(header));
    for (size_t i = 0; i < n; ++i) w += putVarint(out + w, values[i].type);
    // Unchanged values lie next to each other in the old body: one memcpy per stretch of them.
    const uint8_t* from = nullptr;
    int64_t stretch = 0;
    for (size_t i = 0; i < n; ++i) {
        const int64_t len = serialLen(values[i].type);
        if (values[i].bytes && values[i].bytes == from + stretch) {
            stretch += len;
            continue;
        }
        if (stretch) std::memcpy(out + w, from, size_t(stretch)), w += stretch;
        from = values[i].bytes, stretch = 0;
        if (from) {
            stretch = len;
        } else {
            storeInteger(out + w, values[i].type, values[i].v); // `out` has room past the record
            w += len;
        }
    }
    if (stretch) std::memcpy(out + w, from, size_t(stretch)), w += stretch;
    return w;
}

/// Body lengths of the one-byte serial types (-1: the reserved 10 and 11).
constexpr std::array<int8_t, 128> kOneByteLen = [] {
    std::array<int8_t, 128> len{};
    for (uint64_t t = 0; t < len.size(); ++t) len[t] = int8_t(serialLen(t));
    return len;
}();

/// The columns a run's ops change (bit i: column i), the ops themselves, and whether any does.
struct RecordRewrite {
    explicit RecordRewrite(const std::vector<ColumnOp>& o) : ops(o) {
        for (size_t i = 0; i < ops.size() && i < 64; ++i)
            if (ops[i].kind != ColumnOp::Kind::Copy) changed |= uint64_t(1) << i;
        wide = ops.size() > 64 && std::any_of(ops.begin() + 64, ops.end(), [](const ColumnOp& op) {
                   return op.kind != ColumnOp::Kind::Copy;
               });
    }
    bool asIs() const { return changed == 0 && !wide; }
    const std::vector<ColumnOp>& ops;
    uint64_t changed = 0;
    bool wide = false; ///< a changed column past the 64th: only the general path
};

// A value of up to 8 bytes is copied as one 8-byte move (moveBytes<8>): its reader reads pages
// into buffers with PageFile::kSlack bytes after them, and the rewritten record's buffer has room
// past the record, so the bytes past the value are harmless to read and write.
static_assert(schema::pages::PageFile::kSlack >= 16, "a record's header is read 16 bytes at a time");

/// A changed column's value of type t at `r`, through `op`, written at `o` (advanced past it)
/// and its type at `type`; false for a value the op cannot apply to.
[[gnu::always_inline]] inline bool writeChanged(const ColumnOp& op, uint8_t t, const uint8_t* r, uint8_t& type,
                                                uint8_t*& o) {
    Value c{t, r, 0};
    if (!apply(op, c)) return false;
    type = uint8_t(c.type);
    if (c.bytes && c.type == t) {
        moveBytes<8>(o, r), o += kOneByteLen[t];
    } else if (!c.bytes) { // a new value (0 and 1 take no bytes); or NULL, unmapped
        storeInteger(o, c.type, c.v), o += serialLen(c.type);
    }
    return true;
}

/// The usual record: a one-byte header size and one-byte serial types (integers, NULLs, short
/// text), which the rewritten record keeps (integer and NULL types are one byte), so its header
/// is as long. Its values are copied one by one (short ones as 8-byte moves), the changed ones
/// written at their new width (a shifted time, an offset or mapped id, a NULL for an id the map
/// lacks). Its length; 0 when the record is not such a record; -1 for damage or a value an op
/// cannot apply to. `rec` lies in a page buffer with PageFile::kSlack bytes after the page (a
/// short header is read 16 bytes at a time), and `out` has room past the record.
int64_t rewriteOneByteHeader(const uint8_t* rec, int64_t size, const RecordRewrite& rw, uint8_t* out) {
    const int64_t headerSize = rec[0];
    if (headerSize >= 0x80 || headerSize > size || rw.wide) return 0;
    if (headerSize <= 16) { // the usual header (up to 15 columns): one 16-byte move, into the slack
        moveBytes<16>(out, rec);
    } else {
        std::memcpy(out, rec, size_t(headerSize));
    }
    const uint8_t* r = rec + headerSize; // where the next value is read
    const uint8_t* const end = rec + size;
    uint8_t* o = out + headerSize; // and written
    uint64_t changed = rw.changed; // bit 0: this column's
    // The branches taken per column follow the columns (changed or not), the same for every
    // record; whether a value is NULL varies from record to record and is tested only for the
    // changed columns.
    for (int64_t h = 1; h < headerSize; ++h, changed >>= 1) {
        const uint8_t t = rec[h];
        if (t >= 0x80) return 0;
        const int64_t len = kOneByteLen[t];
        if (len < 0 || len > end - r) return -1;
        if (!(changed & 1)) {
            if (len <= 8) {
                moveBytes<8>(o, r);
            } else {
                std::memcpy(o, r, size_t(len));
            }
            o += len;
        } else if (t != 0 && !writeChanged(rw.ops[size_t(h - 1)], t, r, out[h], o)) {
            return -1;
        }
        r += len;
    }
    if (r != end) std::memcpy(o, r, size_t(end - r)); // bytes past the last value (none in a record SQLite wrote)
    return (o - out) + (end - r);
}

/// One record rewritten through `ops` into `out` (the new record's length), -1 for a record
/// this code does not handle.
int64_t rewriteRecord(const uint8_t* rec, int64_t size, const RecordRewrite& rw, uint8_t* out) {
    if (const int64_t n = rewriteOneByteHeader(rec, size, rw, out)) return n;
    const std::vector<ColumnOp>& ops = rw.ops;
    // The rare rest (a multi-byte header or serial type: long text, a blob): decoded and written
    // again whole.
    uint64_t headerSize = 0;
    int64_t h = getVarintIn(rec, rec + size, &headerSize);
    if (!h || headerSize > uint64_t(size)) return -1;
    std::array<Value, kMaxColumns> values; // not value-initialised: filled up to n
    size_t n = 0;
    for (int64_t b = 0; h < int64_t(headerSize); ++n) {
        if (n == kMaxColumns) return -1;
        Value& c = values[n];
        const int used = getVarintIn(rec + h, rec + headerSize, &c.type);
        if (!used) return -1;
        h += used;
        const int64_t len = serialLen(c.type);
        if (len < 0 || len > size - int64_t(headerSize) - b) return -1;
        c.bytes = rec + headerSize + b;
        b += len;
        if (n < ops.size() && !apply(ops[n], c)) return -1;
    }
    return writeRecord(values.data(), n, out);
}

/// Rows of a shard's rowid range rewritten and packed into leaves by one thread on its own: about
/// 25 MB of leaves, whose last leaf is the only one not full (+0.3 % pages). Fixed, so that the
/// trace is the same file whatever the number of threads.
constexpr int64_t kWindowRows = int64_t(1) << 19;
/// A range of sparse rowids gets wider windows rather than more of them.
constexpr uint64_t kMaxWindows = uint64_t(1) << 16;

/// One window of a run: the shard's rowids [first, last], its leaves once packed.
struct PackedWindow {
    int64_t first = 0, last = 0;
    /// Full pages, end to end (a recycled buffer: may be longer). Its own mapping, so page-
    /// aligned: the file takes it past the page cache (direct_io.hpp).
    std::vector<uint8_t, HugePageAllocator<uint8_t>> leaves;
    std::vector<int64_t> lastRowids; ///< per leaf: lastRowids.size() pages of `leaves` are the window's
    int64_t firstRowid = INT64_MAX;  ///< in the trace
    int64_t rows = 0;
    Status status;
    bool ready = false;
};

/// The shard's rowids [first, last] cut into windows of `rows` rowids (more where that would make
/// too many).
std::vector<PackedWindow> windowsOf(int64_t first, int64_t last, int64_t rows) {
    std::vector<PackedWindow> windows;
    if (last < first) return windows;
    const uint64_t span = std::max(uint64_t(rows), (uint64_t(last) - uint64_t(first)) / kMaxWindows + 1);
    for (int64_t from = first;;) {
        PackedWindow& w = windows.emplace_back();
        w.first = from;
        w.last = uint64_t(last) - uint64_t(from) < span ? last : int64_t(uint64_t(from) + span - 1);
        if (w.last == last) break;
        from = w.last + 1;
    }
    return windows;
}

/// What every window of one run shares.
struct RunSource {
    const std::filesystem::path& shard;
    uint32_t root;
    int64_t rowidOffset;
    const std::vector<ColumnOp>& ops;
    uint32_t pageSize, usable;
    bool pastCache; ///< each window's leaves read in one piece past the cache (readsPastCache)
    std::atomic<uint64_t>& preloaded; ///< pages read past the cache, all windows
};

/// Most bytes of leaves one window reads in one piece (PageFile::preload).
constexpr uint64_t kMaxPreloadBytes = uint64_t(64) << 20;

/// Interior levels of the table b-tree rooted at `root` above its leaves (down the left-most
/// children to a leaf); -1 for anything unexpected.
int interiorLevels(const PageFile& in, uint32_t root) {
    int levels = 0;
    for (uint32_t pgno = root; levels + 1 < PageFile::kMaxDepth; ++levels) {
        const uint8_t* p = in.page(pgno, levels);
        if (!p) return -1;
        const uint8_t* hdr = p + (pgno == 1 ? 100 : 0);
        if (hdr[0] == kLeafTable) return levels;
        if (hdr[0] != kInteriorTable || get16(hdr + 3) == 0) return -1;
        const uint32_t off = get16(hdr + 12);
        if (off + 4 > in.usable) return -1;
        pgno = get32(p + off);
    }
    return -1;
}

/// The leaves that hold rows [first, last], in order, from the interior pages alone.
struct LeafCollector {
    const PageFile& in;
    int64_t first, last;
    int levels;
    size_t most; ///< more leaves than this: give up
    std::vector<uint32_t> leaves;

    /// The children of interior page `pgno` at `depth` that hold rows of [first, last]; false
    /// for anything unexpected or too many.
    bool interior(uint32_t pgno, int depth) {
        const uint8_t* p = in.page(pgno, depth); // each depth has its own buffer: p stays valid
        if (!p) return false;
        const uint8_t* hdr = p + (pgno == 1 ? 100 : 0);
        const uint32_t cells = get16(hdr + 3);
        if (hdr[0] != kInteriorTable || uint32_t(hdr - p) + 12 + 2 * cells > in.usable) return false;
        for (uint32_t i = 0; i < cells; ++i) { // child i holds the rowids up to key i
            const uint32_t off = get16(hdr + 12 + 2 * i);
            uint64_t key = 0;
            if (off + 4 > in.usable || !getVarintIn(p + off + 4, p + in.usable, &key)) return false;
            if (int64_t(key) >= first && !child(get32(p + off), depth)) return false;
            if (int64_t(key) >= last) return true;
        }
        return child(get32(hdr + 8), depth); // the right-most child: rowids past the last key
    }

    bool child(uint32_t pgno, int depth) {
        if (depth + 1 < levels) return interior(pgno, depth + 1);
        leaves.push_back(pgno);
        return leaves.size() <= most;
    }
};

/// The leaves of the rows [first, last] of the table b-tree rooted at `root`, as (first page,
/// pages) when they lie close together (a bulk-loaded table's leaves follow each other, but for
/// the lock-byte page) and fit kMaxPreloadBytes; nullopt otherwise, or for anything unexpected
/// (the scan that follows reads page by page and reports damage its own way).
std::optional<std::pair<uint32_t, uint32_t>> leafSpan(const PageFile& in, uint32_t root, int64_t first, int64_t last) {
    const int levels = interiorLevels(in, root);
    if (levels <= 0) return std::nullopt; // one leaf: nothing to gain
    LeafCollector c{in, first, last, levels, size_t(kMaxPreloadBytes / in.pageSize), {}};
    if (!c.interior(root, 0) || c.leaves.empty()) return std::nullopt;
    const std::vector<uint32_t>& leaves = c.leaves;
    if (!std::is_sorted(leaves.begin(), leaves.end()) ||
        std::adjacent_find(leaves.begin(), leaves.end()) != leaves.end())
        return std::nullopt;
    const uint64_t span = uint64_t(leaves.back()) - leaves.front() + 1;
    if (span > leaves.size() + 2 || span > c.most) return std::nullopt; // scattered: page by page
    return std::pair{leaves.front(), uint32_t(span)};
}

/// Window `w` of the run: its records rewritten through the ops and packed into leaves.
Status packWindow(PageFile& in, const RunSource& run, PackedWindow& w) {
    if (run.pastCache)
        if (auto span = leafSpan(in, run.root, w.first, w.last); span && in.preload(span->first, span->second))
            run.preloaded += span->second;
    const RecordRewrite rewrite(run.ops);
    const bool asIs = rewrite.asIs();
    const int64_t maxLocal = maxLocalRecord(run.usable);
    std::vector<uint8_t> record(size_t(run.pageSize) * 2);
    // Leaves are packed in place in the window's buffer, which keeps its size from window to
    // window (grown, never cleared: the packer writes every byte of a page).
    const size_t pageSize = run.pageSize;
    auto nextPage = [&w, pageSize] {
        const size_t need = (w.lastRowids.size() + 1) * pageSize;
        if (w.leaves.size() < need)
            w.leaves.resize(std::max({need, 2 * w.leaves.size(), hugePageArrays::kMinBytes}));
        return w.leaves.data() + w.lastRowids.size() * pageSize;
    };
    LeafPacker packer(run.pageSize, run.usable, [&w](const uint8_t*, int64_t lastRowid) {
        w.lastRowids.push_back(lastRowid);
        return Status{};
    }, nextPage);
    Status failed;
    auto emit = [&](int64_t rowid, const uint8_t* rec, int64_t size) {
        if (size > int64_t(record.size()) / 2) return false;
        const int64_t n = asIs ? size : rewriteRecord(rec, size, rewrite, record.data());
        if (n < 0 || n > maxLocal) return false;
        const int64_t id = rowid + run.rowidOffset;
        w.firstRowid = std::min(w.firstRowid, id);
        failed = packer.add(id, asIs ? rec : record.data(), n);
        return failed.ok();
    };
    RangeScan<decltype(emit)> scan(in, w.first, w.last, emit);
    scan.page(run.root, 0);
    HPCPROF_RETURN_IF_ERROR(failed);
    if (!scan.error.empty()) return Status::error(run.shard.string() + ": " + scan.error);
    HPCPROF_RETURN_IF_ERROR(packer.flush());
    w.rows = packer.rows();
    return {};
}

/// The windows of one run and their hand-over: worker threads claim them in order, at most two
/// each ahead of the one the file waits for (the memory bound), and the writing thread takes
/// them packed, in order. A written window's buffer goes to the next claim (its capacity kept).
struct WindowQueue {
    WindowQueue(std::vector<PackedWindow> w, unsigned wanted)
        : windows(std::move(w)), threads(std::clamp(wanted, 1u, unsigned(std::clamp<size_t>(windows.size(), 1, 64)))),
          ahead(2 * size_t(threads)) {}

    /// The next window for a worker, false when there is none left (or the writing stopped).
    bool claim(size_t& i) {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stop || next == windows.size() || next < writtenUpTo + ahead; });
        if (stop || next == windows.size()) return false;
        i = next++;
        if (!spare.empty()) {
            windows[i].leaves = std::move(spare.back());
            spare.pop_back();
        }
        return true;
    }

    void packed(size_t i, Status st) {
        {
            std::lock_guard lock(mu);
            windows[i].status = std::move(st);
            windows[i].ready = true;
        }
        cv.notify_all();
    }

    void waitPacked(size_t i) {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return windows[i].ready; });
    }

    /// Window i is in the file (or failed: `ok` false stops the workers).
    void written(size_t i, bool ok) {
        {
            std::lock_guard lock(mu);
            spare.push_back(std::move(windows[i].leaves));
            writtenUpTo = i + 1;
            stop = !ok;
        }
        cv.notify_all();
    }

    void stopAll() {
        {
            std::lock_guard lock(mu);
            stop = true;
        }
        cv.notify_all();
    }

    std::vector<PackedWindow> windows;
    const unsigned threads;

private:
    const size_t ahead;
    std::mutex mu;
    std::condition_variable cv;
    size_t next = 0, writtenUpTo = 0;
    bool stop = false;
    std::vector<std::vector<uint8_t, HugePageAllocator<uint8_t>>> spare;
};

} // namespace

struct TableAppender::State {
    State(TreeAppender t, int64_t w) : tree(std::move(t)), windowRows(w > 0 ? w : kWindowRows) {}
    TreeAppender tree;
    int64_t windowRows;
    int64_t rows = 0, lastRowid = INT64_MIN;
    std::atomic<uint64_t> preloaded{0};
    /// Readers of the last run's shard, one per worker, kept for that shard's next runs: each
    /// keeps its buffers (a preload's span of up to kMaxPreloadBytes) instead of mapping and
    /// touching new ones per run.
    std::string readersOf;
    std::vector<std::unique_ptr<PageFile>> readers;

    /// Reader `i` of `shard` (opened on first use); null with `failed` set when it cannot open.
    PageFile* reader(size_t i, const std::filesystem::path& shard, Status& failed) {
        std::unique_ptr<PageFile>& in = readers[i];
        if (in) return in.get();
        in = std::make_unique<PageFile>();
        failed = in->open(shard, O_RDONLY);
        if (!failed.ok()) in.reset();
        return in.get();
    }

    /// A packed window's leaves to the file, in order.
    Status take(PackedWindow& w) {
        HPCPROF_RETURN_IF_ERROR(w.status);
        if (w.rows == 0) return {};
        if (w.firstRowid <= lastRowid) return Status::error("rows out of rowid order");
        HPCPROF_RETURN_IF_ERROR(tree.addLeaves(w.leaves.data(), w.lastRowids.data(), w.lastRowids.size()));
        rows += w.rows;
        lastRowid = w.lastRowids.back();
        return {};
    }
};

TableAppender::TableAppender(std::unique_ptr<State> state) : m_state(std::move(state)) {}
TableAppender::TableAppender(TableAppender&&) noexcept = default;
TableAppender& TableAppender::operator=(TableAppender&&) noexcept = default;
TableAppender::~TableAppender() = default;

int64_t TableAppender::rows() const { return m_state->rows; }
uint64_t TableAppender::directBytes() const { return m_state->tree.directBytes(); }
uint64_t TableAppender::preloadedPages() const { return m_state->preloaded; }

Result<TableAppender> TableAppender::open(const std::filesystem::path& trace, uint32_t rootPage,
                                          uint64_t pendingByte, int64_t windowRows) {
    auto tree = TreeAppender::open(trace, rootPage, pendingByte);
    if (!tree) return tree.status();
    return TableAppender(std::make_unique<State>(std::move(tree.value()), windowRows));
}

Status TableAppender::append(const std::filesystem::path& shard, uint32_t shardRoot, int64_t first, int64_t last,
                             int64_t rowidOffset, const std::vector<ColumnOp>& ops, unsigned threads, bool pastCache) {
    State& s = *m_state;
    WindowQueue q(windowsOf(first, last, s.windowRows), threads);
    if (q.windows.empty()) return {};
    const RunSource run{shard, shardRoot, rowidOffset, ops, s.tree.pageSize(), s.tree.usable(), pastCache, s.preloaded};
    if (s.readersOf != shard.string()) s.readers.clear(), s.readersOf = shard.string();
    if (s.readers.size() < q.threads) s.readers.resize(q.threads);
    auto worker = [&](size_t t) {
        // Read, not mapped: a mapping's pages released by one thread cost every other a TLB
        // shoot-down, and a shard cut short is then a short read rather than a SIGBUS.
        Status opened;
        PageFile* in = s.reader(t, shard, opened);
        for (size_t i = 0; q.claim(i);) q.packed(i, in ? packWindow(*in, run, q.windows[i]) : opened);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < q.threads; ++t) pool.emplace_back(worker, size_t(t));
    Status result;
    for (size_t i = 0; i < q.windows.size() && result.ok(); ++i) {
        q.waitPacked(i);
        result = s.take(q.windows[i]);
        q.written(i, result.ok());
    }
    q.stopAll();
    for (auto& t : pool) t.join();
    return result;
}

Status TableAppender::finish() { return m_state->tree.finish(); }

void TableAppender::abandon() { m_state->tree.abandon(); }

} // namespace hpcprof::store
