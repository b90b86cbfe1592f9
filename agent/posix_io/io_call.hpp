// SPDX-License-Identifier: MIT
// The shape every I/O hook shares: time the real call, keep errno exactly as the real call left
// it, and record one event with the bytes actually transferred and the descriptor's object.
#pragma once

#include <cerrno>
#include <cstdint>

#include "counters/boundary.hpp"
#include "fd_table.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent {

/// How an I/O hook's result is read.
enum class IoResult {
    Bytes,  ///< the result is a byte count (read, write, ...)
    Status, ///< the result only says success (>= 0) or failure (-1): close, fsync, lseek
};

/// Records a finished descriptor call. Thread-safe, async-signal-safe.
inline void recordFdCall(schema::Op op, int fd, uint32_t objectId, uint64_t t0, uint64_t t1,
                         int64_t result, IoResult kind, int err, int64_t offset) {
    agent::EventFields f{op, t0, t1};
    f.fd = fd;
    f.objectId = objectId;
    if (result < 0) {
        f.flags |= schema::raw::kFlagFailed;
        f.status = err;
    } else if (kind == IoResult::Bytes) {
        f.bytes = result;
    }
    if (offset >= 0) {
        f.flags |= schema::raw::kFlagHasOffset;
        f.aux = offset;
    }
    agent::recordEvent(f);
}

/// Runs `call` (the real function) and records it against descriptor `fd`; while it runs, it is
/// the thread's published in-flight call (with `requested` bytes, -1 = not applicable).
template <typename Call>
inline auto timedFdCall(schema::Op op, int fd, IoResult kind, int64_t offset, Call&& call,
                        int64_t requested = -1) {
    if (!agent::recording(agent::SourceBit::Io)) return call();
    // CPU counters at the call's boundaries, only when asked for (HPCPROF_COUNTER_BOUNDARIES=io).
    bool armed = agent::counters::samplesRegion(agent::counters::kCounterBoundaryIo);
    uint64_t t0 = agent::counters::startAfterEntrySample(armed, agent::now(), agent::now);
    const uint32_t object = fdObject(fd);
    schema::raw::InFlightCall entry = agent::inFlightCall(op, t0);
    entry.fd = fd;
    entry.objectId = object;
    entry.bytes = requested;
    if (offset >= 0) {
        entry.flags = schema::raw::kFlagHasOffset;
        entry.aux = offset;
    }
    schema::raw::InFlightCall* line = agent::beginCall(entry);
    auto result = call();
    uint64_t t1 = agent::now();
    agent::endCall(line);
    // Only a failed call's errno matters, and nothing on the recording path below changes
    // errno (slow paths that make system calls restore it themselves).
    int err = int64_t(result) < 0 ? errno : 0;
    agent::counters::sampleExitAt(armed, t1);
    recordFdCall(op, fd, object, t0, t1, int64_t(result), kind, err, offset);
    return result;
}

} // namespace hpcprof::agent
