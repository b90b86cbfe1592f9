// SPDX-License-Identifier: MIT
#include "rowid_table_pages.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cmath>

#include "trace_access.hpp"

namespace hpcprof::analyzer::detail {

namespace {

using namespace schema::pages;

/// Whether `table` has `rowidColumn` first, as the rowid's alias (a record holds NULL there),
/// and every one of `names` (their positions into `columns`).
bool mapColumns(sqlite3* db, const std::string& table, const std::string& rowidColumn,
                const std::vector<std::string>& names, std::vector<uint8_t>& columns) {
    schema::Statement info(db, "SELECT cid, name, type, pk FROM pragma_table_info(?1, 'main')");
    info.bind(1, table);
    columns.assign(names.size(), 0);
    std::vector<bool> found(names.size());
    bool rowidAlias = false;
    int pks = 0;
    while (info.step()) {
        const int64_t cid = info.int64(0);
        const std::string name = info.text(1);
        pks += info.int64(3) > 0;
        if (name == rowidColumn) rowidAlias = cid == 0 && info.int64(3) == 1 && info.text(2) == "INTEGER";
        for (size_t f = 0; f < names.size(); ++f)
            if (name == names[f] && cid > 0 && cid < 64) columns[f] = uint8_t(cid), found[f] = true;
    }
    if (!info.error().ok() || !rowidAlias || pks != 1) return false;
    for (bool f : found)
        if (!f) return false;
    return true;
}

} // namespace

bool realToInteger(double r, int64_t& v) {
    if (std::isnan(r)) return false;
    if (r <= double(INT64_MIN)) v = INT64_MIN;
    else if (r >= double(INT64_MAX)) v = INT64_MAX;
    else v = int64_t(r);
    return true;
}

bool integerValue(uint64_t t, const uint8_t* p, int64_t& v) {
    if (isInteger(t)) {
        v = readInteger(t, p);
        return true;
    }
    return t == 7 && realToInteger(readReal(p), v);
}

std::unique_ptr<RowidTablePages> RowidTablePages::open(const Trace& trace, const std::string& table,
                                                       const std::string& rowidColumn,
                                                       const std::vector<std::string>& names,
                                                       std::vector<uint8_t>& columns) {
    sqlite3* db = detail::db(trace);
    // An older trace's tables are read through temporary views of the same names.
    schema::Statement adapted(db, "SELECT 1 FROM temp.sqlite_master WHERE name = ?1");
    if (!adapted.valid()) return nullptr;
    adapted.bind(1, table);
    if (adapted.step() || !adapted.error().ok()) return nullptr;
    if (!mapColumns(db, table, rowidColumn, names, columns)) return nullptr;
    std::unique_ptr<RowidTablePages> r(new RowidTablePages);
    // The lookup of the table's root stays stepped: the read lock it takes is held until the
    // reader goes, so the file holds the pages SQL would read.
    r->m_lock = schema::Statement(db, "SELECT rootpage FROM main.sqlite_master WHERE type = 'table' AND name = ?1");
    if (!r->m_lock.valid()) return nullptr;
    r->m_lock.bind(1, table);
    if (!r->m_lock.step()) return nullptr;
    r->m_path = trace.path();
    r->m_table = table;
    return r->openFile(detail::file(trace), r->m_lock.int64(0)) ? std::move(r) : nullptr;
}

bool RowidTablePages::openFile(const std::string& file, int64_t root) {
    if (root <= 0 || root > UINT32_MAX || !m_file.open(file, O_RDONLY).ok()) return false;
    m_root = uint32_t(root);
    // A WAL file's newest pages may be in the WAL, which only SQLite reads.
    if (m_file.writeVersion != 1 || m_file.readVersion != 1) return false;
    // A table b-tree (a WITHOUT ROWID table's is an index b-tree).
    const uint8_t* page = m_file.page(m_root, 0);
    const uint8_t type = page ? page[m_root == 1 ? 100 : 0] : 0;
    return type == kLeafTable || type == kInteriorTable;
}

Status RowidTablePages::damaged(const std::string& why, int64_t at) const {
    return Status::error(m_path + ": damaged trace: the " + m_table + " table (at event " + std::to_string(at) +
                         "): " + why);
}

std::unique_ptr<IntegerColumnPages> IntegerColumnPages::open(const Trace& trace, const std::string& table,
                                                             const std::string& rowidColumn,
                                                             const std::vector<std::string>& names) {
    if (names.empty() || names.size() > kMaxColumns) return nullptr;
    std::unique_ptr<IntegerColumnPages> r(new IntegerColumnPages);
    r->m_table = RowidTablePages::open(trace, table, rowidColumn, names, r->m_columns);
    if (!r->m_table) return nullptr;
    r->m_last = *std::max_element(r->m_columns.begin(), r->m_columns.end());
    return r;
}

bool IntegerColumnPages::decode(const uint8_t* rec, int64_t size, int64_t* values, bool* nulls) const {
    uint64_t headerSize = 0;
    int64_t h = getVarintIn(rec, rec + size, &headerSize);
    if (!h || headerSize > uint64_t(size)) return false;
    int64_t at = int64_t(headerSize);
    for (size_t c = 0; c <= m_last; ++c) {
        uint64_t t = 0;
        const int used = h < int64_t(headerSize) ? getVarintIn(rec + h, rec + headerSize, &t) : 0;
        if (!used) return false; // a short record (a column added later): SQL gives its default
        h += used;
        const int64_t len = serialLen(t);
        if (len < 0 || len > size - at) return false;
        for (size_t k = 0; k < m_columns.size(); ++k) {
            if (m_columns[k] != c) continue;
            nulls[k] = t == 0;
            values[k] = 0;
            if (t != 0 && !integerValue(t, rec + at, values[k])) return false;
        }
        at += len;
    }
    return true;
}

} // namespace hpcprof::analyzer::detail
