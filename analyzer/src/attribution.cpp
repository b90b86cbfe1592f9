// SPDX-License-Identifier: MIT
#include "attribution.hpp"

#include <iterator>

namespace hpcprof::analyzer {

namespace {
constexpr int idx(EventClass c) { return int(c); }
} // namespace

const char* timeClassName(TimeClass c) {
    switch (c) {
    case TimeClass::Compute: return "compute";
    case TimeClass::Communication: return "comm";
    case TimeClass::Io: return "io";
    case TimeClass::Memory: return "memory";
    case TimeClass::Sync: return "sync";
    case TimeClass::Idle: return "idle";
    case TimeClass::Setup: return "setup";
    }
    return "idle";
}

void TimelineSets::normalize() {
    for (auto& s : all) s.normalize();
    for (auto& s : reference) s.normalize();
}

namespace {
/// Each class's total time in the window and how much of communication and I/O overlapped the
/// reference's compute.
void addTotals(Attribution& a, const TimelineSets& sets, const IntervalSet& window, const IntervalSet& computeRef) {
    // Messages and reads made while a thread of the rank is in set-up (the runtime's own
    // traffic during MPI_Init, on its progress thread too) belong to the set-up.
    const IntervalSet setupAll = sets.all[idx(EventClass::Setup)].intersect(window);
    const IntervalSet commAll = sets.all[idx(EventClass::Communication)].intersect(window).subtract(setupAll);
    const IntervalSet ioAll = sets.all[idx(EventClass::Io)].intersect(window).subtract(setupAll);
    a.commTotalNs = commAll.length();
    a.commOverlappedNs = commAll.intersect(computeRef).length();
    a.ioTotalNs = ioAll.length();
    a.ioOverlappedNs = ioAll.intersect(computeRef).length();
    a.memoryTotalNs = sets.all[idx(EventClass::Memory)].intersect(window).length();
    a.syncTotalNs = sets.all[idx(EventClass::Sync)].intersect(window).length();
    a.setupTotalNs = setupAll.length();
}
} // namespace

Attribution attribute(const TimelineSets& sets, const IntervalSet& window, const IntervalSet& active, bool totals) {
    Attribution a;
    const IntervalSet act = active.intersect(window);
    a.windowNs = window.length();
    a.activeNs = act.length();

    // Blocking sets: what the reference timeline waits on, per class. Setup comes first, so
    // that whatever MPI start-up does inside MPI_Init (its own messages, its reads of /proc and
    // /sys) is start-up, not communication or I/O of the program.
    static constexpr EventClass kBlocking[] = {EventClass::Setup, EventClass::Communication,
                                               EventClass::Io, EventClass::Memory, EventClass::Sync};
    static constexpr TimeClass kOrder[] = {TimeClass::Setup, TimeClass::Communication, TimeClass::Io,
                                           TimeClass::Memory, TimeClass::Sync};
    constexpr int kBlockingCount = int(std::size(kBlocking));
    IntervalSet blocking[kBlockingCount];
    for (int i = 0; i < kBlockingCount; ++i) {
        const IntervalSet& src = sets.gpu ? sets.all[idx(kBlocking[i])] : sets.reference[idx(kBlocking[i])];
        blocking[i] = src.intersect(act);
    }

    IntervalSet computeRef;
    if (sets.gpu) {
        computeRef = sets.reference[idx(EventClass::Compute)].intersect(act);
        if (totals) {
            IntervalSet gpuBusy = sets.reference[idx(EventClass::Compute)];
            for (EventClass c : kBlocking) gpuBusy = gpuBusy.unite(sets.reference[idx(c)]);
            a.gpuIdle = act.subtract(gpuBusy);
            a.gpuIdleNs = a.gpuIdle.length();
        }
    } else {
        IntervalSet inCalls;
        for (const auto& b : blocking) inCalls = inCalls.unite(b);
        computeRef = act.subtract(inCalls);
    }

    // Partition by priority: compute, then setup, communication, I/O, memory, sync; the rest
    // is idle.
    a.partition[int(TimeClass::Compute)] = computeRef;
    IntervalSet taken = computeRef;
    for (int i = 0; i < kBlockingCount; ++i) {
        IntervalSet part = blocking[i].subtract(taken);
        taken = taken.unite(part);
        a.partition[int(kOrder[i])] = std::move(part);
    }
    a.partition[int(TimeClass::Idle)] = window.subtract(taken);
    for (int c = 0; c < kTimeClassCount; ++c) a.exclusive[c] = a.partition[c].length();
    if (totals) addTotals(a, sets, window, computeRef);
    return a;
}

std::vector<uint8_t> overviewStrip(const Attribution& a, int64_t begin, int64_t end, int buckets) {
    std::vector<uint8_t> out;
    if (buckets <= 0 || end <= begin) return out;
    out.resize(size_t(buckets), 255);
    const double width = double(end - begin) / buckets;
    for (int b = 0; b < buckets; ++b) {
        int64_t lo = begin + int64_t(b * width), hi = b + 1 == buckets ? end : begin + int64_t((b + 1) * width);
        int64_t best = 0;
        for (int c = 0; c < kTimeClassCount; ++c) {
            int64_t len = a.partition[c].lengthIn(lo, hi);
            if (len > best) {
                best = len;
                out[size_t(b)] = uint8_t(c);
            }
        }
    }
    return out;
}

} // namespace hpcprof::analyzer
