// SPDX-License-Identifier: MIT
// appendRecord(): a full record, or an 8-byte Repeat entry when the call repeats the thread's
// previous one, or the one before it in a loop of two alternating calls (raw_format.hpp,
// RepeatRecord).
//
// Why: the recorder's cost in a tight loop is not the record's fill but providing the pages it
// lands in (about 50 ns per 64-byte record on a virtual machine's file system, see
// docs/performance.md). Loops of identical calls are common (a scalar MPI_Allreduce per solver
// iteration, same-size reads, one-WR RDMA posts); writing them as 8-byte entries takes an eighth
// of the pages, which the provisioning helper then keeps ahead of.
//
// Signal safety: a signal handler may record on this thread at any point. The run state belongs
// to the outermost appendRecord(): one that finds `appending` set (a handler that interrupted an
// append) writes its record in full and leaves the run alone. Its slot still ends the run, as any
// record written in between does (a run goes on only while its latest record is the last slot).
#include <array>
#include <cstring>
#include <utility>

#include "recorder.hpp"

namespace hpcprof::agent {

namespace {

namespace raw = schema::raw;
using detail::ThreadState;

inline uint64_t load64(const void* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

/// Bits of each 8-byte word of a record that every repetition must share with its run's first
/// record: all but the start, the end and the counter.
constexpr std::array<uint64_t, 8> fixedBits(const raw::RepeatLayout& l) {
    std::array<uint64_t, 8> masks{};
    for (int at = 0; at < int(raw::kRecordSize); ++at) {
        bool varies = (at >= raw::kRepeatStartOffset && at < raw::kRepeatStartOffset + 8) ||
                      (at >= l.endOffset && at < l.endOffset + 8) ||
                      (at >= l.counterOffset && at < l.counterOffset + l.counterBytes);
        if (!varies) masks[size_t(at / 8)] |= uint64_t(0xff) << (8 * (at % 8));
    }
    return masks;
}

template <const raw::RepeatLayout& L> uint64_t counterOf(const char* record) {
    if constexpr (L.counterBytes == 4) {
        uint32_t c;
        std::memcpy(&c, record + L.counterOffset, 4);
        return c;
    } else {
        return load64(record + L.counterOffset);
    }
}

/// The counter step from `previous` to `next` (4-byte counters wrap), or false if it does not
/// fit the Repeat record's 32 bits.
template <const raw::RepeatLayout& L>
bool counterStep(uint64_t previous, uint64_t next, int32_t& step) {
    if constexpr (L.counterBytes == 4) {
        step = int32_t(uint32_t(next) - uint32_t(previous));
        return true;
    } else {
        int64_t d = int64_t(next - previous);
        step = int32_t(d);
        return d == int64_t(step);
    }
}

/// The run is now one bare full record, `full` at `slot`. If the run it ends was also one bare
/// full record, in the slot just before, the two may yet become a period-2 run (startPairRun).
void setRun(ThreadState& t, const char* full, uint64_t slot, uint64_t end, uint64_t counter) {
    bool pairs = t.runNext && !t.runOther && !t.runRepeat && t.runSlot + 1 == slot;
    t.runBefore = pairs ? t.runNext : nullptr;
    t.runBeforeCounter = t.runNextCounter;
    t.runNext = full;
    t.runNextCounter = counter;
    t.runOther = nullptr;
    t.runRepeat = nullptr;
    t.runUsed = 0;
    t.runSlot = slot;
    t.runEnd = end;
}

/// Copies `image` into the reserved slot `p` and publishes it (kind byte last).
void writeFull(char* p, const char* image) {
    std::memcpy(p + 1, image + 1, raw::kRecordSize - 1);
    __atomic_store_n(reinterpret_cast<uint8_t*>(p), uint8_t(image[0]), __ATOMIC_RELEASE);
}

template <const raw::RepeatLayout& L> void appendFull(ThreadState& t, const char* image) {
    char* p = reserveSlot();
    if (!p) return; // dropped (counted)
    writeFull(p, image);
    uint64_t slot = uint64_t(p - t.base - raw::kHeaderSize) / raw::kRecordSize;
    setRun(t, p, slot, load64(image + L.endOffset), counterOf<L>(image));
}

/// Appends `image` as the next entry of the thread's run if it repeats the call it is due to
/// repeat (runNext); false if not (the caller then writes it in full).
template <const raw::RepeatLayout& L> bool extendRun(ThreadState& t, const char* image) {
    static constexpr std::array<uint64_t, 8> kFixed = fixedBits(L);
    const char* repeated = t.runNext;
    uint64_t diff = 0;
    for (int w = 0; w < 8; ++w) {
        uint64_t word = load64(image + 8 * w);
        // One 8-byte load per word, not vectorised: the image was just stored as 8-byte words,
        // and a 16-byte load spanning two of them waits for both stores to retire instead of
        // being forwarded from them.
        asm("" : "+r"(word));
        diff |= (word ^ load64(repeated + 8 * w)) & kFixed[size_t(w)];
    }
    if (diff) return false;
    uint64_t start = load64(image + raw::kRepeatStartOffset);
    uint64_t end = load64(image + L.endOffset);
    if (start < t.runEnd || start - t.runEnd > raw::kRepeatMaxTicks || end < start ||
        end - start >= raw::kRepeatMaxTicks)
        return false;
    uint64_t counter = counterOf<L>(image);
    int32_t step;
    if (!counterStep<L>(t.runNextCounter, counter, step)) return false;
    if (t.runRepeat && step != t.runRepeat->step) return false; // the run's step, once known
    uint64_t entry = (start - t.runEnd) << 32 | (end - start + 1);

    if (t.runRepeat && t.runUsed < raw::kRepeatEntries) {
        __atomic_store_n(&t.runRepeat->entries[t.runUsed], entry, __ATOMIC_RELAXED);
        t.runUsed++;
    } else {
        // A new Repeat record, in the slot right after the run's latest one.
        uint64_t slot = detail::bumpSlot(&t.next);
        char* p = slot < t.mapped ? t.base + raw::kHeaderSize + slot * raw::kRecordSize
                                  : detail::reserveSlotSlow(slot);
        if (!p) return true; // dropped (counted)
        if (slot != t.runSlot + 1) {
            // A signal handler took the slot in between: this call starts a new run.
            writeFull(p, image);
            setRun(t, p, slot, end, counter);
            return true;
        }
        auto* r = reinterpret_cast<raw::RepeatRecord*>(p);
        r->period = t.runOther ? 2 : 1;
        r->step = step;
        r->entries[0] = entry;
        __atomic_store_n(&r->kind, raw::RecordKind::Repeat, __ATOMIC_RELEASE);
        t.runRepeat = r;
        t.runUsed = 1;
        t.runSlot = slot;
    }
    t.runEnd = end;
    t.runNextCounter = counter;
    if (t.runOther) { // period 2: the other call is due next
        std::swap(t.runNext, t.runOther);
        std::swap(t.runNextCounter, t.runOtherCounter);
    }
    return true;
}

/// A call that repeats the full record before the run's bare one (call A, call B, then A
/// again: an RDMA post and its poll, lseek and read): the two become a period-2 run
/// and the call its first entry. False if it does not repeat it (the run is left as it was).
template <const raw::RepeatLayout& L> bool startPairRun(ThreadState& t, const char* image) {
    if (!t.runBefore || t.runRepeat || t.runOther) return false;
    t.runOther = t.runNext;
    t.runOtherCounter = t.runNextCounter;
    t.runNext = t.runBefore;
    t.runNextCounter = t.runBeforeCounter;
    if (extendRun<L>(t, image)) {
        t.runBefore = nullptr;
        return true;
    }
    t.runNext = t.runOther;
    t.runNextCounter = t.runOtherCounter;
    t.runOther = nullptr;
    return false;
}

template <const raw::RepeatLayout& L> void append(const char* image) {
    ThreadState& t = detail::t_thread;
    if (t.appending || t.generation != detail::g_generation || t.failed) [[unlikely]] {
        // A signal handler inside another append, or the thread's first record: in full, and
        // outside any run.
        if (char* p = reserveSlot()) writeFull(p, image);
        return;
    }
    t.appending = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    bool repeated = t.runNext && t.next == t.runSlot + 1 &&
                    (extendRun<L>(t, image) || startPairRun<L>(t, image));
    if (!repeated) appendFull<L>(t, image);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t.appending = false;
}

} // namespace

void appendRecord(const void* image) {
    const auto* bytes = static_cast<const char*>(image);
    const raw::RepeatLayout* layout = raw::repeatLayout(image);
    if (layout == &raw::kSpanRepeat) return append<raw::kSpanRepeat>(bytes);
    if (layout == &raw::kOneWrRepeat) return append<raw::kOneWrRepeat>(bytes);
    if (char* p = reserveSlot()) writeFull(p, bytes);
}

} // namespace hpcprof::agent
