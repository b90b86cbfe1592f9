// SPDX-License-Identifier: MIT
#include "table_pages.hpp"

#include "direct_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "hpcprof/schema/file_io.hpp"

namespace hpcprof::store::pages {

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

int varintLen(uint64_t v) {
    if (v < 0x80) return 1;
    int n = 1;
    while (n < 9 && (v >> (7 * n))) ++n;
    return v >> 56 ? 9 : n;
}

int64_t encodeIntegerRecord(const std::optional<int64_t>* columns, size_t n, uint8_t* out) {
    // Every serial type of an integer or NULL is below 10: one byte each, and so is the header
    // size (1 + n < 128).
    out[0] = uint8_t(1 + n);
    int64_t w = int64_t(1 + n);
    for (size_t i = 0; i < n; ++i) {
        if (!columns[i]) {
            out[1 + i] = 0;
            continue;
        }
        const uint64_t t = integerType(*columns[i]);
        out[1 + i] = uint8_t(t);
        storeInteger(out + w, t, *columns[i]); // `out` has 8 bytes of room past the record
        w += serialLen(t);
    }
    return w;
}

// ---- LeafPacker

LeafPacker::LeafPacker(uint32_t pageSize, uint32_t usable, Sink sink, NextPage next)
    : m_pageSize(pageSize), m_usable(usable), m_sink(std::move(sink)), m_next(std::move(next)) {
    if (!m_next) m_leaf.resize(pageSize);
}

Status LeafPacker::flush() {
    if (m_cells == 0) return {};
    // Every byte of the page is written (the page may hold an earlier leaf's bytes): the header,
    // the free space between the cell pointers and the cells, and the reserved bytes at the end.
    uint8_t* page = m_page;
    const uint32_t pointersEnd = 8 + 2 * m_cells;
    page[0] = kLeafTable;
    page[1] = page[2] = 0; // no freeblock
    put16(page + 3, m_cells);
    put16(page + 5, m_content == 65536 ? 0 : m_content);
    page[7] = 0; // no fragmented bytes
    std::memset(page + pointersEnd, 0, m_content - pointersEnd);
    std::memset(page + m_usable, 0, m_pageSize - m_usable);
    m_page = nullptr;
    m_cells = 0;
    m_content = m_usable;
    return m_sink(page, m_lastRowid);
}

Status LeafPacker::add(int64_t rowid, const uint8_t* record, int64_t size) {
    if (rowid <= m_lastRowid || size > maxLocalRecord(m_usable) || size < 0)
        return Status::error("a row the page writer does not handle");
    uint8_t head[64]; // two varints (at most 18 bytes); copyShort may read up to 64
    int64_t h = putVarint(head, uint64_t(size));
    h += putVarint(head + h, uint64_t(rowid));
    const int64_t n = h + size;
    if (m_page && 8 + 2 * (m_cells + 1) + n > m_content) HPCPROF_RETURN_IF_ERROR(flush());
    if (!m_page) {
        m_page = m_next ? m_next() : m_leaf.data();
        m_content = m_usable;
    }
    m_content -= uint32_t(n);
    copyShort(m_page + m_content, head, size_t(h));
    copyShort(m_page + m_content + h, record, size_t(size));
    put16(m_page + 8 + 2 * m_cells, m_content);
    ++m_cells;
    m_lastRowid = rowid;
    ++m_rows;
    return {};
}

// ---- TreeAppender

struct TreeAppender::State {
    PageFile file;
    std::filesystem::path path;
    uint32_t root = 0, pages = 0; ///< the table's root; the file's pages before the append
    uint32_t next = 0;            ///< last page number given out
    uint64_t pendingByte = 0;     ///< SQLite never uses the page holding this offset (its locks)
    std::vector<uint8_t> held;    ///< the first leaf, written once a second one shows the root is interior
    bool holding = false;
    std::vector<std::pair<uint32_t, int64_t>> level; ///< (page, largest rowid) of the written leaves
    DirectWriter direct;        ///< big aligned stretches of leaves past the page cache
    bool directOpened = false;  ///< opened at the first stretch it could take
    uint64_t directBytes = 0;

    uint32_t allocate() {
        ++next;
        if (uint64_t(next - 1) * file.pageSize <= pendingByte && pendingByte < uint64_t(next) * file.pageSize) ++next;
        return next;
    }

    off_t offset(uint32_t pgno) const { return off_t(pgno - 1) * file.pageSize; }
    Status write(uint32_t pgno, const uint8_t* page) { return writeAll(offset(pgno), page, file.pageSize); }

    /// A leaf: held while it may be the only one (then it is the root), written after.
    Status addLeaf(const uint8_t* page, int64_t lastRowid) {
        if (!level.empty() && lastRowid <= level.back().second)
            return Status::error(path.string() + ": leaves out of rowid order");
        if (level.empty()) {
            held.assign(page, page + file.pageSize);
            holding = true;
            level.emplace_back(0, lastRowid);
            return {};
        }
        if (holding) {
            level[0].first = allocate();
            HPCPROF_RETURN_IF_ERROR(write(level[0].first, held.data()));
            holding = false;
        }
        level.emplace_back(allocate(), lastRowid);
        return write(level.back().first, page);
    }

    /// `n` full leaves laid end to end: the first two as addLeaf takes them, the rest on
    /// consecutive pages where it can, one write per stretch.
    Status addLeaves(const uint8_t* leaves, const int64_t* lastRowids, size_t n) {
        size_t i = 0;
        for (; i < n && (level.empty() || holding); ++i)
            HPCPROF_RETURN_IF_ERROR(addLeaf(leaves + i * file.pageSize, lastRowids[i]));
        const size_t from = level.size();
        for (size_t k = i; k < n; ++k) {
            if (lastRowids[k] <= level.back().second) return Status::error(path.string() + ": leaves out of rowid order");
            level.emplace_back(allocate(), lastRowids[k]);
        }
        for (size_t k = from; k < level.size();) {
            size_t end = k + 1;
            while (end < level.size() && level[end].first == level[end - 1].first + 1) ++end;
            const uint8_t* data = leaves + (i + k - from) * file.pageSize;
            HPCPROF_RETURN_IF_ERROR(writeLeaves(offset(level[k].first), data, (end - k) * file.pageSize));
            k = end;
        }
        return {};
    }

    /// A stretch of leaves: direct where it can (direct_io.hpp), the rest buffered.
    Status writeLeaves(off_t at, const uint8_t* data, size_t bytes) {
        if (!directOpened && bytes >= DirectWriter::kMinBytes) {
            direct.open(path);
            directOpened = true;
        }
        if (direct.fits(data, bytes, at)) {
            bool failed = false;
            const size_t done = direct.write(data, bytes, at, failed);
            if (failed) return Status::error(path.string() + ": write failed (disk full?)");
            directBytes += done;
            data += done, at += off_t(done), bytes -= done;
        }
        return writeAll(at, data, bytes);
    }

    Status writeAll(off_t at, const uint8_t* data, size_t bytes) {
        if (schema::fileio::pwriteAll(file.fd, data, bytes, at)) return {};
        return Status::error(path.string() + ": write failed (disk full?)");
    }

    /// Groups of children for one level of interior pages (each with at least two).
    std::vector<std::vector<std::pair<uint32_t, int64_t>>> group() const {
        std::vector<std::vector<std::pair<uint32_t, int64_t>>> groups(1);
        uint32_t used = 12;
        for (const auto& child : level) {
            auto& page = groups.back();
            // Adding a child turns the page's right-most child into a cell.
            const uint32_t grow = page.empty() ? 0 : 2 + 4 + uint32_t(varintLen(uint64_t(page.back().second)));
            if (!page.empty() && used + grow > file.usable) {
                groups.emplace_back();
                used = 12;
            } else {
                used += grow;
            }
            groups.back().push_back(child);
        }
        if (groups.size() > 1 && groups.back().size() == 1) {
            auto& prev = groups[groups.size() - 2];
            groups.back().insert(groups.back().begin(), prev.back());
            prev.pop_back();
        }
        return groups;
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
        if (!schema::fileio::preadAll(file.fd, h, sizeof h, 0)) return Status::error(path.string() + ": short read");
        const uint32_t counter = get32(h + 24) + 1;
        put32(h + 24, counter);
        put32(h + 28, std::max(next, pages));
        put32(h + 92, counter);
        if (!schema::fileio::pwriteAll(file.fd, h, sizeof h, 0)) return Status::error(path.string() + ": write failed");
        return {};
    }
};

TreeAppender::TreeAppender(std::unique_ptr<State> state) : m_state(std::move(state)) {}
TreeAppender::TreeAppender(TreeAppender&&) noexcept = default;
TreeAppender& TreeAppender::operator=(TreeAppender&&) noexcept = default;
TreeAppender::~TreeAppender() = default;

uint64_t TreeAppender::directBytes() const { return m_state->directBytes; }
uint32_t TreeAppender::pageSize() const { return m_state->file.pageSize; }
uint32_t TreeAppender::usable() const { return m_state->file.usable; }

Result<TreeAppender> TreeAppender::open(const std::filesystem::path& trace, uint32_t rootPage, uint64_t pendingByte) {
    auto s = std::make_unique<State>();
    s->path = trace;
    s->pendingByte = pendingByte;
    HPCPROF_RETURN_IF_ERROR(s->file.open(trace, O_RDWR));
    uint8_t h[100];
    if (!schema::fileio::preadAll(s->file.fd, h, sizeof h, 0)) return Status::error(trace.string() + ": short read");
    if (get32(h + 52) != 0) return Status::error(trace.string() + ": auto-vacuum database");
    if (get32(h + 44) != 4) return Status::error(trace.string() + ": schema format is not 4");
    if (get32(h + 24) != get32(h + 92)) return Status::error(trace.string() + ": page count not in header");
    s->pages = s->next = get32(h + 28);
    std::vector<uint8_t> root(s->file.pageSize);
    if (rootPage < 2 || !s->file.read(rootPage, root.data()) || root[0] != kLeafTable || get16(root.data() + 3) != 0)
        return Status::error(trace.string() + ": the table to append to is not empty");
    s->root = rootPage;
    return TreeAppender(std::move(s));
}

Status TreeAppender::addLeaf(const uint8_t* page, int64_t lastRowid) { return m_state->addLeaf(page, lastRowid); }

Status TreeAppender::addLeaves(const uint8_t* leaves, const int64_t* lastRowids, size_t n) {
    return m_state->addLeaves(leaves, lastRowids, n);
}

Status TreeAppender::finish() {
    State& s = *m_state;
    if (s.holding) { // one leaf: it is the root
        HPCPROF_RETURN_IF_ERROR(s.write(s.root, s.held.data()));
        return s.writeHeader();
    }
    while (s.level.size() > 1) {
        const auto groups = s.group();
        std::vector<std::pair<uint32_t, int64_t>> up;
        for (const auto& children : groups) {
            const uint32_t pgno = groups.size() == 1 ? s.root : s.allocate();
            HPCPROF_RETURN_IF_ERROR(s.writeInterior(pgno, children));
            up.emplace_back(pgno, children.back().second);
        }
        s.level = std::move(up);
    }
    return s.writeHeader();
}

void TreeAppender::abandon() {
    if (ftruncate(m_state->file.fd, off_t(m_state->pages) * m_state->file.pageSize) != 0) {
        // The header still gives the old page count: SQLite ignores the pages past it.
    }
}

} // namespace hpcprof::store::pages
