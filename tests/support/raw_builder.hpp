// SPDX-License-Identifier: MIT
// Test support: writes raw capture folders by hand (process header, thread files with chosen
// records), so store tests control every byte the agent would have written.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::test {

struct RawEventSpec {
    uint16_t op;
    uint64_t start;
    uint64_t end;
    int64_t bytes = -1;
    uint32_t objectId = 0;
    int32_t fd = -1;
    uint8_t flags = 0;
    int32_t status = 0;
    int64_t aux = -1;
    uint32_t seq = 0;
    int32_t peer = -1;
    int32_t tag = 0;
};

class RawThreadBuilder {
public:
    explicit RawThreadBuilder(int32_t tid) : m_tid(tid) {}
    RawThreadBuilder& string(uint32_t id, const std::string& text);
    RawThreadBuilder& event(const RawEventSpec& e);
    /// An MPI request completion (MpiCompletionRecord), attached to the next wait/test event.
    RawThreadBuilder& mpiCompletion(bool isRecv, uint32_t request, int32_t peer, int32_t tag,
                                    int64_t bytes);
    /// A reserved slot that was never committed (process killed mid-record).
    RawThreadBuilder& tornSlot();
    /// Any 64-byte record, as given (RepeatRecord, RdmaRecord, ...).
    template <typename Record> RawThreadBuilder& record(const Record& r) {
        static_assert(sizeof(Record) == 64);
        std::memcpy(m_records.emplace_back().data(), static_cast<const void*>(&r), 64);
        return *this;
    }
    /// Format 4 drop accounting in the thread header: the thread stopped recording at `ticks`.
    RawThreadBuilder& stopped(uint64_t ticks, schema::raw::DropReason reason, int32_t err) {
        m_drops.stoppedTicks = ticks;
        m_drops.stopReason = uint32_t(reason);
        m_drops.stopErrno = err;
        return *this;
    }
    /// `n` records of this thread lost for `reason` (thread header).
    RawThreadBuilder& dropped(schema::raw::DropReason reason, uint64_t n) {
        m_drops.dropped[uint32_t(reason)] = n;
        return *this;
    }
    /// The thread header's format version (default: the current one).
    RawThreadBuilder& formatVersion(uint32_t v) {
        m_version = v;
        return *this;
    }
    int32_t tid() const { return m_tid; }
    const std::vector<std::array<char, 64>>& records() const { return m_records; }
    /// The header fields set above (stop and drop fields; version 0 = current).
    const schema::raw::ThreadFileHeader& headerFields() const { return m_drops; }
    uint32_t version() const { return m_version; }

private:
    int32_t m_tid;
    std::vector<std::array<char, 64>> m_records;
    schema::raw::ThreadFileHeader m_drops{};
    uint32_t m_version = schema::raw::kFormatVersion;
};

/// A process header with sensible defaults: monotonic clock (ticks are ns), exited cleanly.
schema::raw::ProcessHeader makeProcessHeader(int32_t pid, int64_t startNs, int32_t rank = -1,
                                             const char* host = "node1");

/// Writes RAWDIR/proc-<pid>-<start>/process.bin and thread files; returns the folder.
std::filesystem::path writeRawProcess(const std::filesystem::path& rawDir,
                                      const schema::raw::ProcessHeader& header,
                                      const std::vector<RawThreadBuilder>& threads);

} // namespace hpcprof::test
