// SPDX-License-Identifier: MIT
#include "columnar_pack.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "column_stream.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "temp_file.hpp"
#include "zstd_file.hpp"

namespace hpcprof::schema::columnar {

namespace {

// A zstd skippable frame (magic 0x184D2A5B, little-endian) opens the file, so zstd tools see a
// valid sequence of frames; its payload starts with this tag, then the layout.
constexpr unsigned char kSkippableMagic[4] = {0x5B, 0x2A, 0x4D, 0x18};
constexpr char kTag[16] = {'H', 'P', 'C', 'P', 'R', 'O', 'F', '-', 'C', 'O', 'L', 'S', '-', 'v', '1', '\n'};
/// Columns stored as differences from the previous row's value: ids and times grow along a
/// track (rows are in id order, each track a contiguous run sorted by ts), and sequential I/O
/// offsets grow by the call's size.
constexpr std::string_view kDeltaColumns[] = {"id", "track_id", "ts", "offset", "correlation_id", "seq"};

struct Column {
    std::string name;
    bool delta = false;
    uint64_t size = 0; ///< compressed bytes
};

struct Layout {
    uint64_t rows = 0, restSize = 0;
    std::vector<Column> columns;
};

void putU64(std::string& b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char(v >> (8 * i)));
}
bool getU64(const std::string& b, size_t& at, uint64_t& v) {
    if (at + 8 > b.size()) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(b[at + i])) << (8 * i);
    at += 8;
    return true;
}

std::string encodeLayout(const Layout& l) {
    std::string b(kTag, sizeof(kTag));
    putU64(b, l.rows);
    putU64(b, l.restSize);
    putU64(b, l.columns.size());
    for (const Column& c : l.columns) {
        b.push_back(char(c.delta));
        b.push_back(char(c.name.size()));
        b += c.name;
        putU64(b, c.size);
    }
    return b;
}

bool decodeLayout(const std::string& b, Layout& l) {
    if (b.size() < sizeof(kTag) || std::memcmp(b.data(), kTag, sizeof(kTag)) != 0) return false;
    size_t at = sizeof(kTag);
    uint64_t n = 0;
    if (!getU64(b, at, l.rows) || !getU64(b, at, l.restSize) || !getU64(b, at, n) || n > 64) return false;
    for (uint64_t i = 0; i < n; ++i) {
        if (at + 2 > b.size()) return false;
        Column c;
        c.delta = b[at] != 0;
        size_t len = uint8_t(b[at + 1]);
        at += 2;
        if (at + len > b.size()) return false;
        c.name = b.substr(at, len);
        at += len;
        if (!getU64(b, at, c.size)) return false;
        for (char ch : c.name) // names go into SQL: plain identifiers only
            if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
        l.columns.push_back(std::move(c));
    }
    return at == b.size() && !l.columns.empty();
}

struct Db {
    DbHandle h;
    Status open(const std::string& path, int flags) {
        sqlite3* raw = nullptr;
        int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
        h.reset(raw);
        if (rc != SQLITE_OK)
            return Status::error(path + ": " + (raw ? sqlite3_errmsg(raw) : "cannot open"));
        return {};
    }
};

/// A temporary file in TMPDIR, removed with this object.
struct TempPath {
    std::string path;
    int fd = tempfile::named("hpcprof-pack", path);
    ~TempPath() {
        if (fd >= 0) {
            ::close(fd);
            ::unlink(path.c_str());
        }
    }
};

/// `name` as an SQL name ("...") or string ('...'), its quotes doubled (names come from the
/// trace's own schema).
std::string quoted(const std::string& name, char quote = '"') {
    std::string q(1, quote);
    for (char c : name) q += c == quote ? std::string(2, c) : std::string(1, c);
    return q + quote;
}

/// The first column of every row `sql` gives, as text.
Status firstColumn(sqlite3* db, const std::string& sql, std::vector<std::string>& out) {
    Statement s(db, sql);
    while (s.step()) out.push_back(s.text(0));
    return s.error();
}

/// Copies the rows of table `t` from `src` into `main`, rowids included (a rowid table
/// without an INTEGER PRIMARY KEY would otherwise be numbered again).
Status copyRows(sqlite3* db, const std::string& t) {
    auto names = columnNames(db, "src", t);
    if (!names) return names.status();
    std::string columns;
    for (const std::string& n : names.value()) columns += (columns.empty() ? "" : ", ") + quoted(n);
    const bool hasRowid = Statement(db, "SELECT rowid FROM src." + quoted(t) + " LIMIT 0").valid();
    const std::string list = hasRowid ? "rowid, " + columns : columns;
    return exec(db, "INSERT INTO main." + quoted(t) + " (" + list + ") SELECT " + list + " FROM src." + quoted(t));
}

/// Replays `src`'s schema entries of the given kinds into `main`, in their order.
Status replaySchema(sqlite3* db, const std::string& kinds) {
    std::vector<std::string> sql;
    HPCPROF_RETURN_IF_ERROR(firstColumn(db, "SELECT sql FROM src.sqlite_schema WHERE sql IS NOT NULL"
                                            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND type IN (" + kinds + ") ORDER BY rowid", sql));
    for (const std::string& q : sql) HPCPROF_RETURN_IF_ERROR(exec(db, q));
    return {};
}

/// Copies the rows of SQLite's own tables (statistics, AUTOINCREMENT counters) that `src` has.
Status copyInternalRows(sqlite3* db) {
    std::vector<std::string> tables;
    HPCPROF_RETURN_IF_ERROR(firstColumn(
        db, "SELECT name FROM src.sqlite_schema WHERE type = 'table' AND name LIKE 'sqlite\\_%' ESCAPE '\\'", tables));
    for (const std::string& t : tables) {
        // ANALYZE creates the statistics tables; AUTOINCREMENT tables created sqlite_sequence.
        if (t.rfind("sqlite_stat", 0) == 0 && !Statement(db, "SELECT 1 FROM main." + t).valid())
            HPCPROF_RETURN_IF_ERROR(exec(db, "ANALYZE main.sqlite_schema"));
        if (!Statement(db, "SELECT 1 FROM main." + t).valid()) continue; // not made by this SQLite
        HPCPROF_RETURN_IF_ERROR(exec(db, "DELETE FROM main." + t + "; INSERT INTO main." + t + " SELECT * FROM src." + t));
    }
    return {};
}

/// The trace `in` without its event rows in `tmp`: its schema replayed and every other table's
/// rows copied, so the event pages are neither copied nor read (a packed 45 GB trace needs
/// only its small rest in TMPDIR, not a second copy of the whole).
Status writeRest(const std::string& in, TempPath& tmp) {
    if (tmp.fd < 0) return Status::error(tempfile::failure(errno));
    Db db;
    HPCPROF_RETURN_IF_ERROR(db.open(tmp.path, SQLITE_OPEN_READWRITE));
    sqlite3* h = db.h.get();
    HPCPROF_RETURN_IF_ERROR(exec(h, "ATTACH " + quoted(in, '\'') + " AS src"));
    std::string pragmas = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;";
    for (const char* p : {"page_size", "application_id", "user_version"}) {
        Statement v(h, std::string("PRAGMA src.") + p);
        if (!v.step()) return v.error().ok() ? Status::error(in + ": no " + p) : v.error();
        pragmas += std::string(" PRAGMA main.") + p + " = " + std::to_string(v.int64(0)) + ";";
    }
    HPCPROF_RETURN_IF_ERROR(exec(h, pragmas + " BEGIN"));
    HPCPROF_RETURN_IF_ERROR(replaySchema(h, "'table'"));
    std::vector<std::string> names;
    HPCPROF_RETURN_IF_ERROR(firstColumn(h, "SELECT name FROM src.sqlite_schema WHERE type = 'table' AND name <> 'event'"
                                           " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid", names));
    for (const std::string& t : names) HPCPROF_RETURN_IF_ERROR(copyRows(h, t));
    HPCPROF_RETURN_IF_ERROR(replaySchema(h, "'index', 'view', 'trigger'"));
    HPCPROF_RETURN_IF_ERROR(copyInternalRows(h));
    Status s = exec(h, "COMMIT");
    return s.ok() ? exec(h, "DETACH src") : s;
}

/// The event table's columns, in table order.
std::vector<Column> eventColumns(sqlite3* db) {
    std::vector<Column> out;
    auto names = columnNames(db, "main", "event");
    if (!names) return out;
    for (std::string& name : names.value()) {
        Column c;
        c.name = std::move(name);
        for (std::string_view d : kDeltaColumns) c.delta |= c.name == d;
        out.push_back(std::move(c));
    }
    return out;
}

std::string columnList(const std::vector<Column>& columns) {
    std::string list;
    for (const Column& c : columns) list += (list.empty() ? "\"" : ", \"") + c.name + "\"";
    return list;
}

/// Encodes every event row into one writer per column; `applicable` false on a non-integer.
Status encodeEvents(sqlite3* db, Layout& l, std::vector<std::unique_ptr<columns::ColumnWriter>>& w,
                    int level, int threads, bool& applicable) {
    for (const Column& c : l.columns) w.push_back(std::make_unique<columns::ColumnWriter>(c.delta, level, threads));
    Statement s(db, "SELECT " + columnList(l.columns) + " FROM main.event ORDER BY id");
    if (!s.valid()) return s.error();
    const int n = int(l.columns.size());
    while (s.step()) {
        for (int i = 0; i < n; ++i) {
            int type = sqlite3_column_type(s.get(), i);
            if (type == SQLITE_NULL) {
                w[size_t(i)]->add(std::nullopt);
            } else if (type == SQLITE_INTEGER) {
                w[size_t(i)]->add(s.int64(i));
            } else {
                applicable = false;
                return {};
            }
        }
        ++l.rows;
    }
    HPCPROF_RETURN_IF_ERROR(s.error());
    for (size_t i = 0; i < w.size(); ++i) {
        HPCPROF_RETURN_IF_ERROR(w[i]->finish());
        l.columns[i].size = w[i]->compressedSize();
    }
    return {};
}

} // namespace

bool isColumnar(const unsigned char* head) { return std::memcmp(head, kSkippableMagic, 4) == 0; }

namespace {

/// A FILE* closed on every path.
struct FileHandle {
    std::FILE* f;
    explicit FileHandle(std::FILE* file) : f(file) {}
    ~FileHandle() {
        if (f) std::fclose(f);
    }
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;
};

/// The rest of the trace (all but the event rows) compressed as one frame into `frame`.
Status compressRest(const std::string& in, int level, int threads, std::FILE* frame, uint64_t& size) {
    TempPath rest;
    HPCPROF_RETURN_IF_ERROR(writeRest(in, rest));
    FileHandle restFile(std::fopen(rest.path.c_str(), "rb"));
    if (!restFile.f) return Status::error(tempfile::failure(errno));
    struct stat st {};
    ::fstat(rest.fd, &st);
    return zstdfile::compress(restFile.f, frame, level, threads, uint64_t(st.st_size), size);
}

/// The packed file: the layout's skippable frame, the rest's frame, the column frames.
Status writePacked(std::FILE* o, const Layout& l, std::FILE* restFrame,
                   std::vector<std::unique_ptr<columns::ColumnWriter>>& writers) {
    const std::string layout = encodeLayout(l);
    std::string head(reinterpret_cast<const char*>(kSkippableMagic), 4);
    for (int i = 0; i < 4; ++i) head.push_back(char(uint32_t(layout.size()) >> (8 * i)));
    std::fwrite(head.data(), 1, head.size(), o);
    std::fwrite(layout.data(), 1, layout.size(), o);
    std::rewind(restFrame);
    std::vector<char> buf(1 << 16);
    while (size_t got = std::fread(buf.data(), 1, buf.size(), restFrame)) std::fwrite(buf.data(), 1, got, o);
    for (auto& w : writers) HPCPROF_RETURN_IF_ERROR(w->copyTo(o));
    if (std::ferror(o) || std::fflush(o) != 0) return Status::error(std::strerror(errno));
    return {};
}

} // namespace

Status pack(const std::string& in, const std::string& out, int level, int threads, bool& applicable) {
    applicable = true;
    Db db;
    HPCPROF_RETURN_IF_ERROR(db.open(in, SQLITE_OPEN_READONLY));
    Layout l;
    l.columns = eventColumns(db.h.get());
    if (l.columns.empty()) return Status::error(in + ": no event table");
    std::vector<std::unique_ptr<columns::ColumnWriter>> writers;
    HPCPROF_RETURN_IF_ERROR(encodeEvents(db.h.get(), l, writers, level, threads, applicable));
    if (!applicable) return {};
    FileHandle restFrame(tempfile::anonymous());
    if (!restFrame.f) return Status::error(tempfile::failure(errno));
    HPCPROF_RETURN_IF_ERROR(compressRest(in, level, threads, restFrame.f, l.restSize));
    FileHandle o(std::fopen(out.c_str(), "wb"));
    if (!o.f) return Status::error(out + ": " + std::strerror(errno));
    Status s = writePacked(o.f, l, restFrame.f, writers);
    return s.ok() ? s : Status::error(out + ": " + s.message());
}

namespace {

/// Reads the skippable frame at the start of `in` into `l`.
Status readLayout(std::FILE* in, const std::string& path, Layout& l) {
    unsigned char head[8] = {};
    if (std::fread(head, 1, 8, in) != 8) return Status::error(path + ": damaged packed trace (file is truncated)");
    uint32_t size = uint32_t(head[4]) | uint32_t(head[5]) << 8 | uint32_t(head[6]) << 16 | uint32_t(head[7]) << 24;
    std::string payload(size, '\0');
    if (size > (1u << 20) || std::fread(payload.data(), 1, size, in) != size || !decodeLayout(payload, l))
        return Status::error(path + ": damaged packed trace (bad column layout)");
    return {};
}

/// Inserts the rows the column frames hold, which start at `offset` in `path`.
Status insertEvents(sqlite3* db, const std::string& path, const Layout& l, uint64_t offset) {
    std::vector<std::unique_ptr<columns::ColumnReader>> r;
    for (const Column& c : l.columns) {
        r.push_back(std::make_unique<columns::ColumnReader>(path, offset, c.size, c.delta));
        offset += c.size;
    }
    std::string values;
    for (size_t i = 0; i < l.columns.size(); ++i) values += i ? ",?" : "?";
    HPCPROF_RETURN_IF_ERROR(exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                                     " PRAGMA cache_size=-16384; BEGIN"));
    Statement ins(db, "INSERT INTO main.event(" + columnList(l.columns) + ") VALUES (" + values + ")");
    if (!ins.valid()) return ins.error();
    std::optional<int64_t> v;
    const std::string damaged = path + ": damaged packed trace (column data does not match its layout)";
    for (uint64_t row = 0; row < l.rows; ++row) {
        for (size_t i = 0; i < r.size(); ++i) {
            if (!r[i]->next(v)) return Status::error(r[i]->error().ok() ? damaged : path + ": " + r[i]->error().message());
            if (v) ins.bind(int(i) + 1, *v);
            else ins.bindNull(int(i) + 1);
        }
        HPCPROF_RETURN_IF_ERROR(ins.run());
    }
    for (auto& c : r)
        if (!c->atCleanEnd()) return Status::error(c->error().ok() ? damaged : path + ": " + c->error().message());
    return exec(db, "COMMIT");
}

} // namespace

Status unpack(std::FILE* in, const std::string& path, int fd, const std::string& copy) {
    Layout l;
    HPCPROF_RETURN_IF_ERROR(readLayout(in, path, l));
    const long restAt = std::ftell(in);
    HPCPROF_RETURN_IF_ERROR(zstdfile::decompress(in, l.restSize, fd, path));
    Db db;
    HPCPROF_RETURN_IF_ERROR(db.open(copy, SQLITE_OPEN_READWRITE));
    Status s = insertEvents(db.h.get(), path, l, uint64_t(restAt) + l.restSize);
    if (!s.ok() && s.message().rfind(path, 0) != 0)
        return Status::error(path + ": damaged packed trace (" + s.message() + ")");
    return s;
}

} // namespace hpcprof::schema::columnar
