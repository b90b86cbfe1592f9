// SPDX-License-Identifier: MIT
#include "shard_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace hpcprof::store {

namespace {

constexpr uint8_t kLeafTable = 0x0D, kInteriorTable = 0x05;
constexpr size_t kMaxColumns = 64;

uint32_t get16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
uint32_t get32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
void put16(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v); }

/// SQLite's varint: 7 bits a byte, high bit set on all but the last; a 9th byte holds 8 bits.
int getVarintSlow(const uint8_t* p, uint64_t* v) {
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i) {
        x = x << 7 | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    *v = x << 8 | p[8];
    return 9;
}

int putVarintSlow(uint8_t* p, uint64_t v) {
    if (v >> 56) {
        p[8] = uint8_t(v);
        v >>= 8;
        for (int i = 7; i >= 0; --i, v >>= 7) p[i] = uint8_t((v & 0x7f) | 0x80);
        return 9;
    }
    uint8_t buf[9];
    int n = 0;
    do {
        buf[n++] = uint8_t((v & 0x7f) | 0x80);
        v >>= 7;
    } while (v);
    buf[0] &= 0x7f;
    for (int i = 0; i < n; ++i) p[i] = buf[n - 1 - i];
    return n;
}

// One byte: most serial types and header sizes (the per-row path).
inline int getVarint(const uint8_t* p, uint64_t* v) {
    if (p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    return getVarintSlow(p, v);
}

inline int putVarint(uint8_t* p, uint64_t v) {
    if (v < 0x80) {
        p[0] = uint8_t(v);
        return 1;
    }
    return putVarintSlow(p, v);
}

/// A varint that must end before `end` (a damaged page's last cell): its length, 0 when it
/// does not.
int getVarintIn(const uint8_t* p, const uint8_t* end, uint64_t* v) {
    if (p >= end) return 0;
    if (end - p >= 9) return getVarint(p, v);
    uint8_t tmp[9] = {};
    std::memcpy(tmp, p, size_t(end - p));
    const int n = getVarint(tmp, v);
    return n <= end - p ? n : 0;
}

int varintLen(uint64_t v) {
    if (v < 0x80) return 1;
    int n = 1;
    while (n < 9 && (v >> (7 * n))) ++n;
    return v >> 56 ? 9 : n;
}

/// Bytes of a record body value of serial type t; -1 for the reserved types.
int64_t serialLen(uint64_t t) {
    static constexpr int8_t kFixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
    return t < 12 ? kFixed[t] : int64_t((t - 12) / 2);
}

bool isInteger(uint64_t t) { return (t >= 1 && t <= 6) || t == 8 || t == 9; }

int64_t readInteger(uint64_t t, const uint8_t* p) {
    if (t == 8) return 0;
    if (t == 9) return 1;
    const int64_t n = serialLen(t);
    int64_t v = int8_t(p[0]); // sign from the first byte
    for (int64_t i = 1; i < n; ++i) v = int64_t(uint64_t(v) << 8 | p[i]);
    return v;
}

/// The serial type SQLite writes for an integer (schema format 4: 0 and 1 take no body).
uint64_t integerType(int64_t v) {
    if (v == 0 || v == 1) return 8 + uint64_t(v);
    const uint64_t u = v < 0 ? ~uint64_t(v) : uint64_t(v);
    if (u <= 127) return 1;
    if (u <= 32767) return 2;
    if (u <= 8388607) return 3;
    if (u <= 2147483647) return 4;
    if (u <= 0x7fffffffffffULL) return 5;
    return 6;
}

void writeInteger(uint8_t* p, uint64_t t, int64_t v) {
    const int64_t n = serialLen(t);
    for (int64_t i = n - 1; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

/// One value of a record: its serial type and where its bytes are (nullptr: in `v`, changed).
struct Value {
    uint64_t type;
    const uint8_t* bytes;
    int64_t v;
};

/// `op` applied to an integer or NULL value; false for a value it cannot apply to.
bool apply(const ColumnOp& op, Value& c) {
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
            writeInteger(out + w, values[i].type, values[i].v);
            w += len;
        }
    }
    if (stretch) std::memcpy(out + w, from, size_t(stretch)), w += stretch;
    return w;
}

/// One record rewritten through `ops` into `out` (the new record's length), -1 for a record
/// this code does not handle.
int64_t rewriteRecord(const uint8_t* rec, int64_t size, const std::vector<ColumnOp>& ops, uint8_t* out) {
    uint64_t headerSize = 0;
    int64_t h = getVarintIn(rec, rec + size, &headerSize);
    if (!h || headerSize > uint64_t(size)) return -1;
    std::array<Value, kMaxColumns> values; // not value-initialised: filled up to n (zeroing cost more than the row)
    std::array<const uint8_t*, kMaxColumns> was;  // where each changed value's old bytes are
    size_t n = 0;
    bool sameTypes = true;
    for (int64_t b = 0; h < int64_t(headerSize); ++n) {
        if (n == kMaxColumns) return -1;
        Value& c = values[n];
        const int used = getVarintIn(rec + h, rec + headerSize, &c.type);
        if (!used) return -1;
        h += used;
        const int64_t len = serialLen(c.type);
        if (len < 0 || len > size - int64_t(headerSize) - b) return -1;
        c.bytes = was[n] = rec + headerSize + b;
        b += len;
        const uint64_t before = c.type;
        if (n < ops.size() && !apply(ops[n], c)) return -1;
        sameTypes &= c.type == before;
    }
    if (!sameTypes) return writeRecord(values.data(), n, out);
    // Every new value as wide as the old (the usual case: a time shifted, an id offset within its
    // width): the record as it is, the changed values written over the old.
    std::memcpy(out, rec, size_t(size));
    for (size_t i = 0; i < n; ++i)
        if (!values[i].bytes) writeInteger(out + (was[i] - rec), values[i].type, values[i].v);
    return size;
}

/// A SQLite file read page by page.
struct PageFile {
    int fd = -1;
    uint32_t pageSize = 0, usable = 0;

    Status open(const std::filesystem::path& path, int flags) {
        fd = ::open(path.c_str(), flags | O_CLOEXEC);
        if (fd < 0) return Status::error(path.string() + ": cannot open");
        uint8_t h[100];
        if (pread(fd, h, sizeof h, 0) != ssize_t(sizeof h) || std::memcmp(h, "SQLite format 3", 16) != 0)
            return Status::error(path.string() + ": not a SQLite file");
        pageSize = get16(h + 16) == 1 ? 65536 : get16(h + 16);
        usable = pageSize - h[20];
        return {};
    }
    /// The whole file mapped (shards: their pages read in place, not copied out).
    Status map() {
        struct stat st{};
        if (fstat(fd, &st) != 0 || st.st_size < off_t(pageSize)) return Status::error("cannot map a shard");
        void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) return Status::error("cannot map a shard");
        madvise(p, size_t(st.st_size), MADV_SEQUENTIAL);
        mapped = static_cast<const uint8_t*>(p);
        mappedPages = uint32_t(uint64_t(st.st_size) / pageSize);
        return {};
    }
    /// A page read: its memory no longer counted to this process (the file's pages stay in the
    /// page cache). Without it a merge's resident size grows with the shards it read.
    void release(const uint8_t* page) const {
        const uintptr_t system = uintptr_t(sysconf(_SC_PAGESIZE));
        const uintptr_t from = uintptr_t(page) & ~(system - 1), to = (uintptr_t(page) + pageSize) & ~(system - 1);
        if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    }

    /// Page `pgno` of a mapped file, nullptr past its end.
    const uint8_t* at(uint32_t pgno) const { return pgno >= 1 && pgno <= mappedPages ? mapped + uint64_t(pgno - 1) * pageSize : nullptr; }

    ~PageFile() {
        if (mapped) munmap(const_cast<uint8_t*>(mapped), size_t(mappedPages) * pageSize);
        if (fd >= 0) ::close(fd);
    }
    const uint8_t* mapped = nullptr;
    uint32_t mappedPages = 0;
    bool read(uint32_t pgno, uint8_t* buf) const {
        return pread(fd, buf, pageSize, off_t(pgno - 1) * pageSize) == ssize_t(pageSize);
    }
};

/// The rows [first, last] of a table b-tree in rowid order, to `emit(rowid, record, size)`.
template <class Emit>
class RangeScan {
public:
    RangeScan(const PageFile& f, int64_t first, int64_t last, Emit& emit)
        : m_f(f), m_first(first), m_last(last), m_emit(emit) {}

    /// false: stop (past `last`, or an error in m_error).
    bool page(uint32_t pgno, int depth) {
        if (depth > 20) return fail("b-tree too deep");
        if (++m_visited > m_f.mappedPages) return fail("b-tree pages visited twice");
        const uint8_t* p = m_f.at(pgno);
        if (!p) return fail("page past the end of the file");
        const uint8_t* hdr = p + (pgno == 1 ? 100 : 0);
        const uint32_t cells = get16(hdr + 3);
        const uint32_t headerLen = hdr[0] == kLeafTable ? 8 : 12;
        if (uint32_t(hdr - p) + headerLen + 2 * cells > m_f.usable) return fail("damaged b-tree page");
        if (hdr[0] == kLeafTable) {
            const bool more = leaf(p, hdr, cells);
            m_f.release(p);
            return more;
        }
        if (hdr[0] != kInteriorTable) return fail("not a table b-tree page");
        for (uint32_t i = 0; i < cells; ++i) {
            const uint8_t* c = cell(p, hdr, headerLen, i);
            if (!c) return fail("damaged b-tree page");
            uint64_t key = 0;
            if (!getVarintIn(c + 4, p + m_f.usable, &key)) return fail("damaged b-tree page");
            if (int64_t(key) >= m_first && !page(get32(c), depth + 1)) return false;
            if (int64_t(key) >= m_last) return false;
        }
        return page(get32(hdr + 8), depth + 1);
    }

    std::string error;

private:
    bool fail(const char* why) {
        error = why;
        return false;
    }

    /// Cell i of a page, nullptr when its offset lies outside the page's cell area (damage).
    const uint8_t* cell(const uint8_t* p, const uint8_t* hdr, uint32_t headerLen, uint32_t i) const {
        const uint32_t off = get16(hdr + headerLen + 2 * i);
        if (off < uint32_t(hdr - p) + headerLen + 2 * i + 2 || off + 4 > m_f.usable) return nullptr;
        return p + off;
    }

    bool leaf(const uint8_t* p, const uint8_t* hdr, uint32_t cells) {
        for (uint32_t i = 0; i < cells; ++i) {
            const uint8_t* c = cell(p, hdr, 8, i);
            if (!c) return fail("damaged b-tree page");
            uint64_t size = 0, rowid = 0;
            const uint8_t* end = p + m_f.usable;
            const int a = getVarintIn(c, end, &size), b = a ? getVarintIn(c + a, end, &rowid) : 0;
            if (!b) return fail("damaged b-tree page");
            c += a + b;
            if (int64_t(rowid) < m_first) continue;
            if (int64_t(rowid) > m_last) return false;
            if (size > m_f.usable - 35) return fail("a record overflows its page");
            if (c + size > p + m_f.usable) return fail("damaged b-tree page");
            if (!m_emit(int64_t(rowid), c, int64_t(size))) return fail("a record this copy does not handle");
        }
        return true;
    }

    const PageFile& m_f;
    int64_t m_first, m_last;
    Emit& m_emit;
    uint32_t m_visited = 0;
};

} // namespace

struct TableAppender::State {
    PageFile file;
    std::filesystem::path path;
    uint32_t root = 0, pages = 0; ///< the table's root; the file's pages before the append
    uint32_t next = 0;            ///< last page number given out
    uint64_t pendingByte = 0;     ///< SQLite never uses the page holding this offset (its locks)
    std::vector<uint8_t> leaf;    ///< the leaf being filled
    uint32_t cells = 0, content = 0;
    int64_t leafMax = 0, lastRowid = INT64_MIN, rows = 0;
    std::vector<uint8_t> held;    ///< the first full leaf, written once a second one shows the root is interior
    bool holding = false;
    std::vector<std::pair<uint32_t, int64_t>> level; ///< (page, largest rowid) of the written leaves
    std::vector<uint8_t> cell, record;

    uint32_t allocate() {
        ++next;
        if (uint64_t(next - 1) * file.pageSize <= pendingByte && pendingByte < uint64_t(next) * file.pageSize) ++next;
        return next;
    }

    Status write(uint32_t pgno, const uint8_t* page) {
        if (pwrite(file.fd, page, file.pageSize, off_t(pgno - 1) * file.pageSize) != ssize_t(file.pageSize))
            return Status::error(path.string() + ": write failed (disk full?)");
        return {};
    }

    void startLeaf() {
        std::fill(leaf.begin(), leaf.end(), 0);
        cells = 0;
        content = file.usable;
    }

    /// The filled leaf: held while it may be the only one (then it is the root), written after.
    Status closeLeaf() {
        if (cells == 0) return {};
        leaf[0] = kLeafTable;
        put16(leaf.data() + 3, cells);
        put16(leaf.data() + 5, content == 65536 ? 0 : content);
        if (level.empty() && !holding) {
            held = leaf;
            holding = true;
            level.emplace_back(0, leafMax);
        } else {
            if (holding) {
                level[0].first = allocate();
                HPCPROF_RETURN_IF_ERROR(write(level[0].first, held.data()));
                holding = false;
            }
            level.emplace_back(allocate(), leafMax);
            HPCPROF_RETURN_IF_ERROR(write(level.back().first, leaf.data()));
        }
        startLeaf();
        return {};
    }

    Status addCell(int64_t rowid, const uint8_t* rec, int64_t size) {
        uint8_t* c = cell.data();
        int64_t n = putVarint(c, uint64_t(size));
        n += putVarint(c + n, uint64_t(rowid));
        std::memcpy(c + n, rec, size_t(size));
        n += size;
        if (8 + 2 * (cells + 1) + n > content) HPCPROF_RETURN_IF_ERROR(closeLeaf());
        content -= uint32_t(n);
        std::memcpy(leaf.data() + content, c, size_t(n));
        put16(leaf.data() + 8 + 2 * cells, content);
        ++cells;
        leafMax = rowid;
        ++rows;
        return {};
    }

    /// Groups of children for one level of interior pages (each with at least two).
    std::vector<std::vector<std::pair<uint32_t, int64_t>>> group() const {
        std::vector<std::vector<std::pair<uint32_t, int64_t>>> pages(1);
        uint32_t used = 12;
        for (const auto& child : level) {
            auto& page = pages.back();
            // Adding a child turns the page's right-most child into a cell.
            const uint32_t grow = page.empty() ? 0 : 2 + 4 + uint32_t(varintLen(uint64_t(page.back().second)));
            if (!page.empty() && used + grow > file.usable) {
                pages.emplace_back();
                used = 12;
            } else {
                used += grow;
            }
            pages.back().push_back(child);
        }
        if (pages.size() > 1 && pages.back().size() == 1) {
            auto& prev = pages[pages.size() - 2];
            pages.back().insert(pages.back().begin(), prev.back());
            prev.pop_back();
        }
        return pages;
    }

    Status writeInterior(uint32_t pgno, const std::vector<std::pair<uint32_t, int64_t>>& children) {
        std::vector<uint8_t> page(file.pageSize, 0);
        uint32_t top = file.usable;
        const uint32_t hdr = pgno == 1 ? 100 : 0;
        for (size_t i = 0; i + 1 < children.size(); ++i) {
            uint8_t c[13];
            put32(c, children[i].first);
            const uint32_t n = 4 + uint32_t(putVarint(c + 4, uint64_t(children[i].second)));
            top -= n;
            std::memcpy(page.data() + top, c, n);
            put16(page.data() + hdr + 12 + 2 * i, top);
        }
        page[hdr] = kInteriorTable;
        put16(page.data() + hdr + 3, uint32_t(children.size() - 1));
        put16(page.data() + hdr + 5, top == 65536 ? 0 : top);
        put32(page.data() + hdr + 8, children.back().first);
        return write(pgno, page.data());
    }

    Status writeHeader() {
        uint8_t h[100];
        if (pread(file.fd, h, sizeof h, 0) != ssize_t(sizeof h)) return Status::error(path.string() + ": short read");
        const uint32_t counter = get32(h + 24) + 1;
        put32(h + 24, counter);
        put32(h + 28, std::max(next, pages));
        put32(h + 92, counter);
        if (pwrite(file.fd, h, sizeof h, 0) != ssize_t(sizeof h)) return Status::error(path.string() + ": write failed");
        return {};
    }
};

TableAppender::TableAppender(std::unique_ptr<State> state) : m_state(std::move(state)) {}
TableAppender::TableAppender(TableAppender&&) noexcept = default;
TableAppender& TableAppender::operator=(TableAppender&&) noexcept = default;
TableAppender::~TableAppender() = default;

int64_t TableAppender::rows() const { return m_state->rows; }

Result<TableAppender> TableAppender::open(const std::filesystem::path& trace, uint32_t rootPage,
                                          uint64_t pendingByte) {
    auto s = std::make_unique<State>();
    s->path = trace;
    s->pendingByte = pendingByte;
    HPCPROF_RETURN_IF_ERROR(s->file.open(trace, O_RDWR));
    uint8_t h[100];
    if (pread(s->file.fd, h, sizeof h, 0) != ssize_t(sizeof h)) return Status::error(trace.string() + ": short read");
    if (get32(h + 52) != 0) return Status::error(trace.string() + ": auto-vacuum database");
    if (get32(h + 44) != 4) return Status::error(trace.string() + ": schema format is not 4");
    if (get32(h + 24) != get32(h + 92)) return Status::error(trace.string() + ": page count not in header");
    s->pages = s->next = get32(h + 28);
    std::vector<uint8_t> root(s->file.pageSize);
    if (rootPage < 2 || !s->file.read(rootPage, root.data()) || root[0] != kLeafTable || get16(root.data() + 3) != 0)
        return Status::error(trace.string() + ": the table to append to is not empty");
    s->root = rootPage;
    s->leaf.resize(s->file.pageSize);
    s->cell.resize(s->file.pageSize + 18);
    s->record.resize(s->file.pageSize * 2);
    s->startLeaf();
    return TableAppender(std::move(s));
}

Status TableAppender::append(const std::filesystem::path& shard, uint32_t shardRoot, int64_t first, int64_t last,
                             int64_t rowidOffset, const std::vector<ColumnOp>& ops) {
    State& s = *m_state;
    PageFile in;
    HPCPROF_RETURN_IF_ERROR(in.open(shard, O_RDONLY));
    HPCPROF_RETURN_IF_ERROR(in.map());
    Status failed;
    const bool asIs = std::all_of(ops.begin(), ops.end(), [](const ColumnOp& o) { return o.kind == ColumnOp::Kind::Copy; });
    auto emit = [&](int64_t rowid, const uint8_t* rec, int64_t size) {
        const int64_t id = rowid + rowidOffset;
        if (id <= s.lastRowid || size > int64_t(s.record.size()) / 2) return false;
        const int64_t n = asIs ? size : rewriteRecord(rec, size, ops, s.record.data());
        if (n < 0 || n > int64_t(s.file.usable) - 35) return false;
        s.lastRowid = id;
        failed = s.addCell(id, asIs ? rec : s.record.data(), n);
        return failed.ok();
    };
    RangeScan<decltype(emit)> scan(in, first, last, emit);
    scan.page(shardRoot, 0);
    HPCPROF_RETURN_IF_ERROR(failed);
    if (!scan.error.empty()) return Status::error(shard.string() + ": " + scan.error);
    return {};
}

Status TableAppender::finish() {
    State& s = *m_state;
    HPCPROF_RETURN_IF_ERROR(s.closeLeaf());
    if (s.holding) { // one leaf: it is the root
        HPCPROF_RETURN_IF_ERROR(s.write(s.root, s.held.data()));
        return s.writeHeader();
    }
    while (s.level.size() > 1) {
        const auto pages = s.group();
        std::vector<std::pair<uint32_t, int64_t>> up;
        for (const auto& children : pages) {
            const uint32_t pgno = pages.size() == 1 ? s.root : s.allocate();
            HPCPROF_RETURN_IF_ERROR(s.writeInterior(pgno, children));
            up.emplace_back(pgno, children.back().second);
        }
        s.level = std::move(up);
    }
    return s.writeHeader();
}

void TableAppender::abandon() {
    if (ftruncate(m_state->file.fd, off_t(m_state->pages) * m_state->file.pageSize) != 0) {
        // The header still gives the old page count: SQLite ignores the pages past it.
    }
}

} // namespace hpcprof::store
