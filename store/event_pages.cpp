// SPDX-License-Identifier: MIT
#include "event_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <string>

#include "hpcprof/schema/file_io.hpp"

namespace hpcprof::store {

using namespace pages;

namespace {

/// An unlinked read-write file in `dir`: O_TMPFILE where the file system has it, else a named
/// temporary file removed at once.
int anonymousFile(const std::filesystem::path& dir) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    std::string name = (dir / ".hpcprof-events-XXXXXX").string();
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) unlink(name.c_str());
    return fd;
}

} // namespace

EventPages::EventPages(int fd, uint32_t pageSize, uint32_t usable)
    : m_fd(fd), m_pageSize(pageSize), m_usable(usable), m_record(size_t(1 + 9 * kColumns[Event] + 8)) {
    for (int t = 0; t < TableCount_; ++t)
        m_packers[t] = std::make_unique<LeafPacker>(pageSize, usable, [this, t](const uint8_t* page, int64_t last) {
            return spill(Table(t), page, last);
        });
}

EventPages::~EventPages() {
    if (m_map) munmap(const_cast<uint8_t*>(m_map), m_mapBytes);
    if (m_fd >= 0) ::close(m_fd);
}

Result<std::unique_ptr<EventPages>> EventPages::create(const std::filesystem::path& dir, uint32_t pageSize,
                                                       uint32_t usable) {
    const int fd = anonymousFile(dir.empty() ? std::filesystem::path(".") : dir);
    if (fd < 0) return Status::error(dir.string() + ": cannot create the event rows' spill file");
    return std::unique_ptr<EventPages>(new EventPages(fd, pageSize, usable));
}

Status EventPages::spill(Table t, const uint8_t* page, int64_t lastRowid) {
    if (!schema::fileio::pwriteAll(m_fd, page, m_pageSize, off_t(m_spilled) * m_pageSize))
        return Status::error("cannot write the event rows' spill file (disk full?)");
    m_leaves[t].emplace_back(m_spilled++, lastRowid);
    return {};
}

Status EventPages::addEvent(int64_t id, const EventRow& e, const std::optional<int64_t>& offset) {
    const std::array<std::optional<int64_t>, kColumns[Event]> columns = {
        std::nullopt, e.trackId, e.ts, e.dur, e.categoryId, e.nameId, e.depth, e.bytes,
        e.objectId, e.peer, e.communicatorId, e.seq, e.correlationId, e.count, offset};
    const int64_t n = encodeIntegerRecord(columns.data(), columns.size(), m_record.data());
    return m_packers[Event]->add(id, m_record.data(), n);
}

Status EventPages::addDetail(int64_t id, const EventDetail& d) {
    const std::array<std::optional<int64_t>, kColumns[Detail]> columns = {std::nullopt, d.errnoValue, d.fd, d.tag};
    const int64_t n = encodeIntegerRecord(columns.data(), columns.size(), m_record.data());
    return m_packers[Detail]->add(id, m_record.data(), n);
}

Status EventPages::flush() {
    for (auto& p : m_packers) HPCPROF_RETURN_IF_ERROR(p->flush());
    return {};
}

int64_t EventPages::rows(Table t) const { return m_packers[t]->rows(); }

Result<const uint8_t*> EventPages::mapSpill() const {
    if (m_map || m_spilled == 0) return m_map;
    m_mapBytes = size_t(m_spilled) * m_pageSize;
    void* p = mmap(nullptr, m_mapBytes, PROT_READ, MAP_SHARED, m_fd, 0);
    if (p == MAP_FAILED) return Status::error("cannot map the event rows' spill file");
    madvise(p, m_mapBytes, MADV_SEQUENTIAL);
    m_map = static_cast<const uint8_t*>(p);
    return m_map;
}

Status EventPages::writeTable(const std::filesystem::path& trace, uint32_t root, Table t,
                              const uint8_t* spilled) const {
    auto tree = TreeAppender::open(trace, root);
    if (!tree) return tree.status();
    if (tree->pageSize() != m_pageSize || tree->usable() != m_usable) // leaves built for another page
        return Status::error(trace.string() + ": page size or reserved bytes differ from the leaves'");
    for (const auto& [index, last] : m_leaves[t]) {
        const uint8_t* leaf = spilled + size_t(index) * m_pageSize;
        // Read before it is written: pwrite's copy from a mapped page not faulted in yet stops
        // short, and ext4 then zeroes the new blocks of the trace before it tries again (a
        // third of a node's conversion at 62 M events). A read fault maps its neighbours too.
        [[maybe_unused]] const volatile uint8_t touched = *leaf;
        Status s = tree->addLeaf(leaf, last);
        // Each leaf is read once: mapped and kept, a node's leaves (about 43 bytes an event)
        // made the conversion's resident size grow with its events (2.7 GB at 62 M events).
        releaseMapped(leaf, m_pageSize);
        if (!s.ok()) {
            tree->abandon();
            return s;
        }
    }
    return tree->finish();
}

Status EventPages::write(const std::filesystem::path& trace, const uint32_t (&roots)[TableCount_],
                         bool (&failed)[TableCount_], std::string& why) const {
    auto spilled = mapSpill();
    if (!spilled) return spilled.status();
    for (int t = 0; t < TableCount_; ++t) {
        failed[t] = false;
        if (m_leaves[t].empty()) continue;
        Status s = writeTable(trace, roots[t], Table(t), *spilled);
        if (!s.ok()) {
            failed[t] = true;
            why = s.message();
        }
    }
    return {};
}

Status EventPages::replay(Table t, const Row& row) const {
    auto spilled = mapSpill();
    if (!spilled) return spilled.status();
    std::array<std::optional<int64_t>, kColumns[Event]> columns;
    for (const auto& leaf : m_leaves[t]) {
        const uint8_t* page = *spilled + size_t(leaf.first) * m_pageSize;
        for (uint32_t i = 0, cells = get16(page + 3); i < cells; ++i) {
            const uint8_t* c = page + get16(page + 8 + 2 * i);
            uint64_t size = 0, rowid = 0, header = 0, type = 0;
            c += getVarint(c, &size);
            c += getVarint(c, &rowid);
            getVarint(c, &header);
            const uint8_t* body = c + header;
            size_t n = 0;
            for (const uint8_t* h = c + varintLen(header); h < c + header && n < columns.size(); ++n) {
                h += getVarint(h, &type);
                columns[n] = type == 0 ? std::nullopt : std::optional<int64_t>(readInteger(type, body));
                body += serialLen(type);
            }
            HPCPROF_RETURN_IF_ERROR(row(int64_t(rowid), columns.data(), n));
        }
        releaseMapped(page, m_pageSize);
    }
    return {};
}

} // namespace hpcprof::store
