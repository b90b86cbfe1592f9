// SPDX-License-Identifier: MIT
#include "shard_pages.hpp"

#include "table_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

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

/// Whether the record's header size and every serial type in it are one byte each.
bool oneByteHeader(const uint8_t* rec, int64_t size) {
    const int64_t headerSize = rec[0];
    if (headerSize >= 0x80 || headerSize > size) return false;
    for (int64_t h = 1; h < headerSize; ++h)
        if (rec[h] >= 0x80) return false;
    return true;
}

/// The usual record: a one-byte header size and one-byte serial types (integers, NULLs, short
/// text), which the rewritten record keeps (integer and NULL types are one byte), so its header
/// is as long. Its body is copied in stretches of unchanged values, the changed values written
/// between them (a shifted time, an offset or mapped id, at its new width). Its length; 0 when
/// the record is not such a record; -1 for damage or a value an op cannot apply to.
int64_t rewriteOneByteHeader(const uint8_t* rec, int64_t size, const std::vector<ColumnOp>& ops, uint8_t* out) {
    const int64_t headerSize = rec[0];
    if (!oneByteHeader(rec, size)) return 0;
    out[0] = uint8_t(headerSize);
    const ColumnOp* op = ops.data();
    const size_t opCount = ops.size();
    int64_t r = headerSize, w = headerSize, stretch = headerSize; // read, write, unchanged since
    for (int64_t h = 1; h < headerSize; ++h) {
        const uint8_t t = rec[h];
        const int64_t len = serialLen(t);
        if (len < 0 || len > size - r) return -1;
        out[h] = t;
        const size_t n = size_t(h - 1);
        if (t != 0 && n < opCount && op[n].kind != ColumnOp::Kind::Copy) {
            Value c{t, rec + r, 0};
            if (!apply(op[n], c)) return -1;
            if (!c.bytes || c.type != t) { // a new value, or NULL for an id the map lacks
                std::memcpy(out + w, rec + stretch, size_t(r - stretch));
                w += r - stretch;
                out[h] = uint8_t(c.type);
                if (!c.bytes) writeInteger(out + w, c.type, c.v);
                w += c.bytes ? 0 : serialLen(c.type);
                stretch = r + len;
            }
        }
        r += len;
    }
    std::memcpy(out + w, rec + stretch, size_t(size - stretch));
    return w + (size - stretch);
}

/// One record rewritten through `ops` into `out` (the new record's length), -1 for a record
/// this code does not handle.
int64_t rewriteRecord(const uint8_t* rec, int64_t size, const std::vector<ColumnOp>& ops, uint8_t* out) {
    if (const int64_t n = rewriteOneByteHeader(rec, size, ops, out)) return n;
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

} // namespace

struct TableAppender::State {
    explicit State(TreeAppender t)
        : tree(std::move(t)), packer(tree.pageSize(), tree.usable(),
                                     [this](const uint8_t* page, int64_t last) { return tree.addLeaf(page, last); }),
          record(size_t(tree.pageSize()) * 2) {}
    TreeAppender tree;
    LeafPacker packer;
    std::vector<uint8_t> record;
};

TableAppender::TableAppender(std::unique_ptr<State> state) : m_state(std::move(state)) {}
TableAppender::TableAppender(TableAppender&&) noexcept = default;
TableAppender& TableAppender::operator=(TableAppender&&) noexcept = default;
TableAppender::~TableAppender() = default;

int64_t TableAppender::rows() const { return m_state->packer.rows(); }

Result<TableAppender> TableAppender::open(const std::filesystem::path& trace, uint32_t rootPage,
                                          uint64_t pendingByte) {
    auto tree = TreeAppender::open(trace, rootPage, pendingByte);
    if (!tree) return tree.status();
    return TableAppender(std::make_unique<State>(std::move(tree.value())));
}

Status TableAppender::append(const std::filesystem::path& shard, uint32_t shardRoot, int64_t first, int64_t last,
                             int64_t rowidOffset, const std::vector<ColumnOp>& ops) {
    State& s = *m_state;
    PageFile in;
    HPCPROF_RETURN_IF_ERROR(in.open(shard, O_RDONLY));
    HPCPROF_RETURN_IF_ERROR(in.map());
    Status failed;
    const bool asIs = std::all_of(ops.begin(), ops.end(), [](const ColumnOp& o) { return o.kind == ColumnOp::Kind::Copy; });
    const int64_t maxLocal = maxLocalRecord(s.tree.usable());
    auto emit = [&](int64_t rowid, const uint8_t* rec, int64_t size) {
        const int64_t id = rowid + rowidOffset;
        if (id <= s.packer.lastRowid() || size > int64_t(s.record.size()) / 2) return false;
        const int64_t n = asIs ? size : rewriteRecord(rec, size, ops, s.record.data());
        if (n < 0 || n > maxLocal) return false;
        failed = s.packer.add(id, asIs ? rec : s.record.data(), n);
        return failed.ok();
    };
    RangeScan<decltype(emit)> scan(in, first, last, emit);
    scan.page(shardRoot, 0);
    HPCPROF_RETURN_IF_ERROR(failed);
    if (!scan.error.empty()) return Status::error(shard.string() + ": " + scan.error);
    return {};
}

Status TableAppender::finish() {
    HPCPROF_RETURN_IF_ERROR(m_state->packer.flush());
    return m_state->tree.finish();
}

void TableAppender::abandon() { m_state->tree.abandon(); }

} // namespace hpcprof::store
