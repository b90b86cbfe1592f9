// SPDX-License-Identifier: MIT
#include "raw_builder.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>

namespace hpcprof::test {

namespace raw = schema::raw;

RawThreadBuilder& RawThreadBuilder::string(uint32_t id, const std::string& text) {
    size_t done = 0;
    do {
        std::array<char, 64> rec{};
        size_t piece = std::min(text.size() - done, raw::kStringPieceSize);
        rec[0] = char(raw::RecordKind::String);
        rec[1] = done + piece == text.size();
        uint16_t len = uint16_t(piece);
        std::memcpy(&rec[2], &len, 2);
        std::memcpy(&rec[4], &id, 4);
        std::memcpy(&rec[8], text.data() + done, piece);
        done += piece;
        m_records.push_back(rec);
    } while (done < text.size());
    return *this;
}

RawThreadBuilder& RawThreadBuilder::event(const RawEventSpec& e) {
    std::array<char, 64> rec{};
    auto put = [&](size_t off, const auto& v) { std::memcpy(&rec[off], &v, sizeof(v)); };
    rec[0] = char(raw::RecordKind::Event);
    put(1, e.flags);
    put(2, e.op);
    put(4, e.status);
    put(8, e.start);
    put(16, e.end);
    put(24, e.bytes);
    put(32, e.objectId);
    put(36, e.fd);
    put(40, e.peer);
    put(44, e.tag);
    put(48, uint32_t(0)); // comm
    put(52, e.seq);
    put(56, e.aux);
    m_records.push_back(rec);
    return *this;
}

RawThreadBuilder& RawThreadBuilder::mpiCompletion(bool isRecv, uint32_t request, int32_t peer,
                                                  int32_t tag, int64_t bytes) {
    raw::MpiCompletionRecord c{};
    c.kind = raw::RecordKind::MpiCompletion;
    c.isRecv = isRecv ? 1 : 0;
    c.request = request;
    c.peer = peer;
    c.tag = tag;
    c.bytes = bytes;
    std::array<char, 64> rec{};
    std::memcpy(rec.data(), &c, sizeof(c));
    m_records.push_back(rec);
    return *this;
}

RawThreadBuilder& RawThreadBuilder::tornSlot() {
    m_records.push_back({});
    return *this;
}

raw::ProcessHeader makeProcessHeader(int32_t pid, int64_t startNs, int32_t rank, const char* host) {
    raw::ProcessHeader h{};
    h.magic = raw::kProcessMagic;
    h.version = raw::kFormatVersion;
    h.recordSize = raw::kRecordSize;
    h.pid = pid;
    h.ppid = 1;
    h.rank = rank;
    h.worldSize = -1;
    h.localRank = -1;
    h.clockKind = raw::ClockKind::Monotonic;
    h.start = {uint64_t(startNs), startNs, 1'700'000'000'000'000'000 + startNs};
    h.last = h.start;
    h.nextStringId = 1;
    h.endState = raw::EndState::Exited;
    h.exitCode = 0;
    h.endMonotonicNs = startNs;
    std::strncpy(h.host, host, sizeof(h.host) - 1);
    std::strcpy(h.exe, "/usr/bin/test-program");
    std::strcpy(h.cmdline, "test-program");
    h.cmdlineLength = 13;
    if (rank >= 0) std::strcpy(h.rankSource, "OMPI_COMM_WORLD_RANK");
    return h;
}

std::filesystem::path writeRawProcess(const std::filesystem::path& rawDir,
                                      const raw::ProcessHeader& header,
                                      const std::vector<RawThreadBuilder>& threads) {
    auto dir = rawDir / ("proc-" + std::to_string(header.pid) + "-" +
                         std::to_string(header.start.monotonicNs));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "process.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(&header), sizeof(header));
    for (const auto& t : threads) {
        raw::ThreadFileHeader th = t.headerFields();
        th.magic = raw::kThreadMagic;
        th.version = t.version();
        th.recordSize = raw::kRecordSize;
        th.pid = header.pid;
        th.tid = t.tid();
        th.capacity = t.records().size();
        std::ofstream f(dir / ("thread-" + std::to_string(t.tid())), std::ios::binary);
        f.write(reinterpret_cast<const char*>(&th), sizeof(th));
        for (const auto& r : t.records()) f.write(r.data(), 64);
    }
    return dir;
}

} // namespace hpcprof::test
