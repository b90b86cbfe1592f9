// SPDX-License-Identifier: MIT
#include "raw_sink.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::bench::jobgen {

namespace {

namespace fs = std::filesystem;
namespace raw = schema::raw;

constexpr uint32_t kWorldString = 1, kFileString = 2; ///< each process's interned strings
constexpr int64_t kRealtimeBase = 1'700'000'000'000'000'000;
constexpr size_t kFlushRecords = 1 << 14;

std::string hostOf(int64_t rank) { return "node" + std::to_string(rank / 64); }

void writeHeader(const fs::path& dir, int64_t rank, int64_t ranks, int64_t beginTs, int64_t endTs) {
    raw::ProcessHeader h{};
    h.magic = raw::kProcessMagic;
    h.version = raw::kFormatVersion;
    h.recordSize = raw::kRecordSize;
    h.pid = int32_t(10'000 + rank);
    h.ppid = 1;
    h.rank = int32_t(rank);
    h.worldSize = int32_t(ranks);
    h.localRank = int32_t(rank % 64);
    h.clockKind = raw::ClockKind::Monotonic;
    h.start = {uint64_t(beginTs), beginTs, kRealtimeBase + beginTs};
    h.last = {uint64_t(endTs), endTs, kRealtimeBase + endTs};
    h.nextStringId = 3;
    h.endState = raw::EndState::Exited;
    h.endMonotonicNs = endTs;
    std::snprintf(h.rankSource, sizeof h.rankSource, "MPI");
    std::snprintf(h.host, sizeof h.host, "%s", hostOf(rank).c_str());
    std::snprintf(h.exe, sizeof h.exe, "/usr/bin/jobgen_app");
    h.cmdlineLength = uint32_t(std::strlen("jobgen_app") + 1);
    std::memcpy(h.cmdline, "jobgen_app", h.cmdlineLength);
    std::FILE* f = std::fopen((dir / "process.bin").c_str(), "wb");
    if (!f) return;
    std::fwrite(&h, sizeof h, 1, f);
    std::fclose(f);
}

/// The string record that interns `text` (at most one piece) as `id`.
raw::EventWords stringRecord(uint32_t id, const std::string& text) {
    raw::EventWords w{};
    auto* b = reinterpret_cast<unsigned char*>(w.w);
    b[0] = uint8_t(raw::RecordKind::String);
    b[1] = 1; // the last piece
    const uint16_t len = uint16_t(std::min(text.size(), raw::kStringPieceSize));
    std::memcpy(b + 2, &len, 2);
    std::memcpy(b + 4, &id, 4);
    std::memcpy(b + 8, text.data(), len);
    return w;
}

class RawSink final : public EventSink {
public:
    RawSink(fs::path dir, int64_t ranks) : m_dir(std::move(dir)), m_ranks(ranks) {}

    void beginRank(int64_t rank, int64_t beginTs, int64_t endTs) override {
        const int32_t pid = int32_t(10'000 + rank);
        const fs::path proc = m_dir / ("proc-" + std::to_string(pid) + "-" + std::to_string(beginTs));
        std::error_code ec;
        fs::create_directories(proc, ec);
        writeHeader(proc, rank, m_ranks, beginTs, endTs);
        m_file = std::fopen((proc / ("thread-" + std::to_string(pid))).c_str(), "wb");
        if (!m_file) {
            m_failed = true;
            return;
        }
        m_header = raw::ThreadFileHeader{};
        m_header.magic = raw::kThreadMagic;
        m_header.version = raw::kFormatVersion;
        m_header.recordSize = raw::kRecordSize;
        m_header.pid = pid;
        m_header.tid = pid;
        std::snprintf(m_header.threadName, sizeof m_header.threadName, "main");
        std::fwrite(&m_header, sizeof m_header, 1, m_file); // rewritten with the counts at the end
        m_records = 0;
        put(stringRecord(kWorldString, "world"));
        put(stringRecord(kFileString, dataFile(rank)));
    }

    void event(const JobEvent& e) override {
        uint8_t flags = 0;
        uint32_t comm = 0, object = 0, seq = 0;
        int32_t fd = -1, tag = int32_t(e.tag);
        if (e.seq >= 0) {
            flags = raw::kFlagSeqValid | raw::kFlagTagIsCommSize;
            comm = kWorldString;
            seq = uint32_t(e.seq);
            tag = int32_t(m_ranks);
        } else if (e.peer >= 0) {
            comm = kWorldString;
        }
        if (e.file) {
            object = kFileString;
            fd = 5;
        }
        put(raw::packEvent(flags, uint16_t(e.op), 0, uint64_t(e.ts), uint64_t(e.end), e.bytes, object, fd,
                           int32_t(e.peer), tag, comm, seq, -1));
        ++m_events;
    }

    void endRank() override {
        flush();
        m_header.reserved = m_header.capacity = uint64_t(m_records);
        if (m_file && (std::fseek(m_file, 0, SEEK_SET) != 0 || std::fwrite(&m_header, sizeof m_header, 1, m_file) != 1))
            m_failed = true;
        if (m_file && std::fclose(m_file) != 0) m_failed = true;
        m_file = nullptr;
    }

    bool failed() const { return m_failed; }
    int64_t events() const { return m_events; }

private:
    void put(const raw::EventWords& w) {
        m_buffer.push_back(w);
        ++m_records;
        if (m_buffer.size() >= kFlushRecords) flush();
    }
    void flush() {
        if (m_file && !m_buffer.empty() &&
            std::fwrite(m_buffer.data(), sizeof(raw::EventWords), m_buffer.size(), m_file) != m_buffer.size())
            m_failed = true;
        m_buffer.clear();
    }

    fs::path m_dir;
    int64_t m_ranks;
    std::FILE* m_file = nullptr;
    raw::ThreadFileHeader m_header{};
    std::vector<raw::EventWords> m_buffer;
    int64_t m_records = 0, m_events = 0;
    bool m_failed = false;
};

} // namespace

Result<int64_t> writeRaw(const JobSpec& spec, const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::error("jobgen: cannot create " + dir.string() + ": " + ec.message());
    RawSink sink(dir, spec.ranks);
    generate(spec, sink);
    if (sink.failed()) return Status::error("jobgen: cannot write the raw capture in " + dir.string());
    return sink.events();
}

} // namespace hpcprof::bench::jobgen
