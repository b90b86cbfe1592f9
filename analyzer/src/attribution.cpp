// SPDX-License-Identifier: MIT
#include "attribution.hpp"

#include <algorithm>
#include <array>
#include <bit>
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

/// The blocking classes in the order the partition gives them time: set-up first, so that
/// whatever MPI start-up does inside MPI_Init (its own messages, its reads of /proc and /sys) is
/// start-up, not communication or I/O of the program.
constexpr EventClass kBlocking[] = {EventClass::Setup, EventClass::Communication, EventClass::Io,
                                    EventClass::Memory, EventClass::Sync};
constexpr TimeClass kOrder[] = {TimeClass::Setup, TimeClass::Communication, TimeClass::Io, TimeClass::Memory,
                                TimeClass::Sync};
constexpr int kBlockingCount = int(std::size(kBlocking));

/// The sets the sweep follows, as bits of its mask: the window, the active part, the blocking
/// sets the partition uses (the reference's on a CPU rank, every track's on a GPU rank), the
/// reference's compute (GPU ranks), every track's blocking sets (the totals of a CPU rank) and
/// the reference's blocking sets (a GPU rank's idle GPU).
enum Bit : int { kWindow = 0, kActive = 1, kBlocked = 2, kRefCompute = 7, kAllBlocked = 8, kRefBlocked = 13, kBits = 18 };
constexpr uint32_t kFive = 31;

/// One pass over the boundaries of every set: between two boundaries each instant is in the
/// same sets (the mask), so the piece goes whole to one class. The set algebra this replaces
/// (about 25 intersections, subtractions and unions of whole sets, each a new vector) was 14 %
/// of a report. A set followed twice (a rank with one thread: its `all` is its reference) is
/// one cursor with both bits.
class AttributionSweep {
public:
    AttributionSweep(const TimelineSets& sets, bool totals, Attribution& a) : m_gpu(sets.gpu), m_totals(totals), m_a(a) {
        for (int i = 0; i < kBlockingCount; ++i) {
            const int c = idx(kBlocking[i]);
            follow(m_gpu ? sets.all[c] : sets.reference[c], kBlocked + i);
            if (totals && !m_gpu) follow(sets.all[c], kAllBlocked + i);
            if (totals && m_gpu) follow(sets.reference[c], kRefBlocked + i);
        }
        if (m_gpu) follow(sets.reference[idx(EventClass::Compute)], kRefCompute);
    }

    void follow(const IntervalSet& s, int bit) {
        if (s.empty()) return;
        for (int k = 0; k < m_n; ++k)
            if (m_sets[k] == &s || m_sets[k]->items() == s.items()) {
                m_bits[k] |= uint32_t(1) << bit;
                return;
            }
        m_sets[m_n] = &s;
        m_at[m_n] = s.items().data();
        m_end[m_n] = s.items().data() + s.items().size();
        m_pos[m_n] = m_at[m_n]->begin;
        m_inside[m_n] = false;
        m_bits[m_n++] = uint32_t(1) << bit;
    }

    void run() {
        // Room for each class's pieces once, not growth by copies: a blocking class's pieces
        // lie in its set's intervals, compute's and idle's between any two boundaries.
        std::array<size_t, kTimeClassCount> room{};
        size_t total = 0;
        for (int k = 0; k < m_n; ++k) {
            const size_t n = m_sets[k]->items().size();
            for (uint32_t b = m_bits[k] >> kBlocked & kFive; b; b &= b - 1) room[int(kOrder[std::countr_zero(b)])] += n;
            total += n;
        }
        room[int(TimeClass::Compute)] = room[int(TimeClass::Idle)] = total + 1;
        for (int c = 0; c < kTimeClassCount; ++c) m_a.partition[c].reserve(room[size_t(c)]);
        uint32_t mask = 0;
        for (int64_t t = INT64_MIN; m_n > 0;) {
            int64_t next = m_pos[0];
            for (int k = 1; k < m_n; ++k) next = std::min(next, m_pos[k]);
            if (next > t && (mask & (1u << kWindow))) piece(t, next, mask);
            for (int k = 0; k < m_n; ++k) { // enter or leave at `next` (a set's intervals never touch)
                if (m_pos[k] != next) continue;
                m_inside[k] = !m_inside[k];
                mask ^= m_bits[k];
                if (m_inside[k]) {
                    m_pos[k] = m_at[k]->end;
                } else if (++m_at[k] != m_end[k]) {
                    m_pos[k] = m_at[k]->begin;
                } else { // the set is done: its cursor leaves
                    drop(k--);
                }
            }
            t = next;
        }
    }

private:
    /// [from, to) of the window, in the sets of `mask`.
    void piece(int64_t from, int64_t to, uint32_t mask) {
        const int64_t len = to - from;
        const uint32_t blocked = mask >> kBlocked & kFive;
        TimeClass cls = TimeClass::Idle; // outside the active part: idle
        if (mask & (1u << kActive)) {
            m_a.activeNs += len;
            if (m_gpu && (mask & (1u << kRefCompute))) cls = TimeClass::Compute;
            else if (blocked) cls = kOrder[std::countr_zero(blocked)];
            else if (!m_gpu) cls = TimeClass::Compute; // the main thread in no blocking call
            if (m_gpu && m_totals && !(mask & (1u << kRefCompute)) && !(mask >> kRefBlocked & kFive))
                m_a.gpuIdle.append(from, to);
        }
        m_a.partition[int(cls)].append(from, to);
        m_a.exclusive[int(cls)] += len;
        if (m_totals) addToTotals(len, m_gpu ? blocked : mask >> kAllBlocked & kFive, cls);
    }

    /// Each class's total time in the window (over every track: `all`, bits in kBlocking order)
    /// and how much of communication and I/O overlapped the reference's compute. Messages and
    /// reads made while a thread of the rank is in set-up (the runtime's own traffic during
    /// MPI_Init, on its progress thread too) belong to the set-up.
    void addToTotals(int64_t len, uint32_t all, TimeClass cls) {
        const bool compute = cls == TimeClass::Compute;
        if (all & 1) {
            m_a.setupTotalNs += len;
        } else {
            if (all & 2) m_a.commTotalNs += len, m_a.commOverlappedNs += compute ? len : 0;
            if (all & 4) m_a.ioTotalNs += len, m_a.ioOverlappedNs += compute ? len : 0;
        }
        if (all & 8) m_a.memoryTotalNs += len;
        if (all & 16) m_a.syncTotalNs += len;
    }

    void drop(int k) {
        --m_n;
        m_sets[k] = m_sets[m_n], m_at[k] = m_at[m_n], m_end[k] = m_end[m_n];
        m_pos[k] = m_pos[m_n], m_inside[k] = m_inside[m_n], m_bits[k] = m_bits[m_n];
    }

    bool m_gpu, m_totals;
    Attribution& m_a;
    // The cursors, one per distinct set (at most kBits): where each is, its next boundary,
    // whether it is inside an interval, and the bits of the sets it follows.
    std::array<const IntervalSet*, kBits> m_sets;
    std::array<const Interval*, kBits> m_at, m_end;
    std::array<int64_t, kBits> m_pos;
    std::array<bool, kBits> m_inside;
    std::array<uint32_t, kBits> m_bits;
    int m_n = 0;
};

} // namespace

Attribution attribute(const TimelineSets& sets, const IntervalSet& window, const IntervalSet& active, bool totals) {
    Attribution a;
    a.windowNs = window.length();
    AttributionSweep sweep(sets, totals, a);
    sweep.follow(window, kWindow);
    sweep.follow(active, kActive);
    sweep.run();
    if (totals && sets.gpu) a.gpuIdleNs = a.gpuIdle.length();
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
