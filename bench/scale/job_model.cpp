// SPDX-License-Identifier: MIT
#include "job_model.hpp"

#include <algorithm>
#include <cstdio>

namespace hpcprof::bench::jobgen {

namespace {

using schema::Op;

constexpr int64_t kStartTs = 1'000'000; ///< the first iteration's start
constexpr int64_t kSendNs = 3'000, kRecvLatencyNs = 5'000, kReduceNs = 20'000;
constexpr int64_t kReadBytes = 65'536, kWriteBytes = 1 << 20, kMessageBytes = 4'096;
constexpr int64_t kCollectiveBytes = 8'192;
constexpr int64_t kTag = 7;

uint64_t mix(uint64_t x) { // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// A draw in [0, range) for (seed, rank, iteration, which draw).
int64_t draw(uint64_t seed, int64_t rank, int64_t iter, int k, int64_t range) {
    uint64_t h = mix(seed ^ mix((uint64_t(rank) * 4 + uint64_t(k)) ^ mix(uint64_t(iter))));
    return int64_t(h % uint64_t(range));
}

bool writes(int64_t iter) { return iter % 4 == 3; }

/// One rank's iteration up to its receive (what depends on no other rank).
struct Phases {
    int64_t readTs, readEnd, writeTs, writeEnd, sendTs, recvTs, gapNs;
};

Phases phases(const JobSpec& s, int64_t begin, int64_t r, int64_t i) {
    Phases p{};
    p.readTs = begin + 1'000;
    p.readEnd = p.readTs + 20'000 + draw(s.seed, r, i, 0, 20'000);
    p.writeTs = p.writeEnd = p.readEnd;
    if (writes(i)) {
        p.writeTs = p.readEnd + 1'000;
        p.writeEnd = p.writeTs + 40'000 + draw(s.seed, r, i, 1, 40'000);
    }
    int64_t compute = 300'000 + draw(s.seed, r, i, 2, 60'000);
    if (r == s.stragglerRank()) compute += s.stragglerExtraNs;
    p.sendTs = p.writeEnd + compute;
    p.recvTs = p.sendTs + kSendNs + 1'000;
    p.gapNs = 2'000 + draw(s.seed, r, i, 3, 8'000);
    return p;
}

int64_t left(const JobSpec& s, int64_t r) { return (r + s.ranks - 1) % s.ranks; }

/// The receive's end: the message arrives after the left neighbour sent it.
int64_t recvEnd(const Phases& own, const Phases& leftP) {
    return std::max(own.recvTs, leftP.sendTs) + kRecvLatencyNs;
}

/// Every iteration's start and its collective's end (the same on every rank).
struct Schedule {
    std::vector<int64_t> begin, collectiveEnd;
};

/// Calls `each(i, phases of every rank, entries of every rank)` per iteration and returns the
/// schedule; O(ranks) memory.
template <class Each>
Schedule schedule(const JobSpec& s, Each&& each) {
    Schedule sc;
    const int64_t n = s.iterations();
    std::vector<Phases> ph(size_t(s.ranks));
    std::vector<int64_t> entry(size_t(s.ranks));
    int64_t begin = kStartTs;
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < s.ranks; ++r) ph[size_t(r)] = phases(s, begin, r, i);
        int64_t last = 0;
        for (int64_t r = 0; r < s.ranks; ++r) {
            entry[size_t(r)] = recvEnd(ph[size_t(r)], ph[size_t(left(s, r))]) + ph[size_t(r)].gapNs;
            last = std::max(last, entry[size_t(r)]);
        }
        sc.begin.push_back(begin);
        sc.collectiveEnd.push_back(last + kReduceNs);
        each(i, ph, entry, last);
        begin = last + kReduceNs + 1'000;
    }
    sc.begin.push_back(begin); // where MPI_Finalize starts
    return sc;
}

void emitIteration(const JobSpec& s, EventSink& sink, int64_t r, int64_t i, const Phases& p,
                   const Phases& leftP, int64_t collectiveEnd) {
    JobEvent rd{Op::PosixRead, p.readTs, p.readEnd, kReadBytes};
    rd.file = true;
    sink.event(rd);
    if (writes(i)) {
        JobEvent wr{Op::PosixWrite, p.writeTs, p.writeEnd, kWriteBytes};
        wr.file = true;
        sink.event(wr);
    }
    JobEvent snd{Op::MpiSend, p.sendTs, p.sendTs + kSendNs, kMessageBytes, (r + 1) % s.ranks, kTag};
    sink.event(snd);
    const int64_t rEnd = recvEnd(p, leftP);
    sink.event(JobEvent{Op::MpiRecv, p.recvTs, rEnd, kMessageBytes, left(s, r), kTag});
    JobEvent ar{Op::MpiAllreduce, rEnd + p.gapNs, collectiveEnd, kCollectiveBytes};
    ar.seq = i;
    sink.event(ar);
}

int64_t initTs() { return kStartTs - 300'000; }

} // namespace

int64_t JobSpec::iterations() const { return std::max<int64_t>(1, (eventsPerRank - 2) * 4 / 17); }

int64_t JobSpec::stragglerRank() const { return int64_t(mix(seed) % uint64_t(std::max<int64_t>(1, ranks))); }

std::string dataFile(int64_t rank) { return "/scratch/job/rank" + std::to_string(rank) + ".dat"; }

void generate(const JobSpec& s, EventSink& sink) {
    // The schedule first (every rank's entries decide when each iteration ends), then each rank.
    const Schedule sc = schedule(s, [](int64_t, const auto&, const auto&, int64_t) {});
    const int64_t n = s.iterations();
    const int64_t finalizeEnd = sc.begin.back() + 50'000;
    const int64_t end = s.endRank < 0 ? s.ranks : std::min(s.endRank, s.ranks);
    for (int64_t r = std::max<int64_t>(0, s.firstRank); r < end; ++r) {
        sink.beginRank(r, initTs() - 100'000, finalizeEnd + 10'000);
        sink.event(JobEvent{Op::MpiInit, initTs(), initTs() + 200'000});
        for (int64_t i = 0; i < n; ++i)
            emitIteration(s, sink, r, i, phases(s, sc.begin[size_t(i)], r, i),
                          phases(s, sc.begin[size_t(i)], left(s, r), i), sc.collectiveEnd[size_t(i)]);
        sink.event(JobEvent{Op::MpiFinalize, sc.begin.back(), finalizeEnd});
        sink.endRank();
    }
}

namespace {

/// The waits of one iteration as docs/analysis.md defines them ("Wait states").
void addWaits(const JobSpec& s, const std::vector<Phases>& ph, const std::vector<int64_t>& entry,
              int64_t lastEntry, Answers& a) {
    // Wait at N x N: every member from its entry until the last one entered; the sum is blamed
    // on the first rank (lowest) that entered last.
    int64_t last = 0, sum = 0;
    for (int64_t r = 0; r < s.ranks; ++r)
        if (entry[size_t(r)] > entry[size_t(last)]) last = r;
    for (int64_t r = 0; r < s.ranks; ++r) {
        const int64_t w = lastEntry - entry[size_t(r)];
        a.perRank[size_t(r)].collectiveWaitNs += w;
        sum += w;
    }
    a.collectiveWaitNs += sum;
    if (sum > 0) {
        a.perRank[size_t(last)].inflictedNs += sum;
        ++a.perRank[size_t(last)].timesLast;
    }
    for (int64_t r = 0; r < s.ranks; ++r) {
        const Phases& p = ph[size_t(r)];
        a.perRank[size_t(r)].ioNs += (p.readEnd - p.readTs) + (p.writeEnd - p.writeTs);
    }
    // Messages: rank r-1's send, rank r's receive (both blocking).
    for (int64_t r = 0; r < s.ranks; ++r) {
        const Phases &snd = ph[size_t(left(s, r))], &rcv = ph[size_t(r)];
        const int64_t sendEnd = snd.sendTs + kSendNs;
        if (snd.sendTs > rcv.recvTs) { // late sender: the receiver waited
            const int64_t w = snd.sendTs - rcv.recvTs;
            a.perRank[size_t(r)].lateSenderNs += w;
            a.perRank[size_t(left(s, r))].inflictedNs += w;
            a.lateSenderNs += w;
        } else if (rcv.recvTs > snd.sendTs && sendEnd > rcv.recvTs) { // late receiver
            const int64_t w = rcv.recvTs - snd.sendTs;
            a.perRank[size_t(left(s, r))].lateReceiverNs += w;
            a.perRank[size_t(r)].inflictedNs += w;
            a.lateReceiverNs += w;
        }
    }
}

void countRank(const JobSpec& s, RankAnswer& ra) {
    const int64_t n = s.iterations();
    const int64_t writesN = (n + 0) / 4; // iterations 3, 7, 11, ...
    ra.events = 2 + 4 * n + writesN;
    ra.bytesRead = n * kReadBytes;
    ra.bytesWritten = writesN * kWriteBytes;
}

} // namespace

Answers expected(const JobSpec& s) {
    Answers a;
    a.ranks = s.ranks;
    a.iterations = s.iterations();
    a.perRank.resize(size_t(s.ranks));
    for (int64_t r = 0; r < s.ranks; ++r) {
        a.perRank[size_t(r)].rank = r;
        countRank(s, a.perRank[size_t(r)]);
        a.events += a.perRank[size_t(r)].events;
    }
    const Schedule sc = schedule(s, [&](int64_t, const std::vector<Phases>& ph, const std::vector<int64_t>& entry,
                                        int64_t last) { addWaits(s, ph, entry, last, a); });
    a.collectiveInstances = a.iterations;
    a.matchedMessages = a.iterations * s.ranks;
    a.beginTs = initTs() - 100'000;
    a.endTs = sc.begin.back() + 60'000;
    for (const RankAnswer& ra : a.perRank)
        if (a.straggler < 0 || ra.inflictedNs > a.perRank[size_t(a.straggler)].inflictedNs) a.straggler = ra.rank;
    return a;
}

std::string Answers::json() const {
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "{\n  \"ranks\": %lld,\n  \"iterations\": %lld,\n  \"events\": %lld,\n  \"straggler\": %lld,\n"
                  "  \"collective_instances\": %lld,\n  \"matched_messages\": %lld,\n"
                  "  \"collective_wait_ns\": %lld,\n  \"late_sender_ns\": %lld,\n  \"late_receiver_ns\": %lld,\n"
                  "  \"per_rank\": [",
                  (long long)ranks, (long long)iterations, (long long)events, (long long)straggler,
                  (long long)collectiveInstances, (long long)matchedMessages, (long long)collectiveWaitNs,
                  (long long)lateSenderNs, (long long)lateReceiverNs);
    out += buf;
    for (size_t i = 0; i < perRank.size(); ++i) {
        const RankAnswer& r = perRank[i];
        std::snprintf(buf, sizeof buf,
                      "%s\n    {\"rank\": %lld, \"events\": %lld, \"bytes_read\": %lld, \"bytes_written\": %lld, "
                      "\"collective_wait_ns\": %lld, \"late_sender_ns\": %lld, \"late_receiver_ns\": %lld, "
                      "\"io_ns\": %lld, \"inflicted_ns\": %lld, \"times_last\": %lld}",
                      i ? "," : "", (long long)r.rank, (long long)r.events, (long long)r.bytesRead,
                      (long long)r.bytesWritten, (long long)r.collectiveWaitNs, (long long)r.lateSenderNs,
                      (long long)r.lateReceiverNs, (long long)r.ioNs, (long long)r.inflictedNs, (long long)r.timesLast);
        out += buf;
    }
    out += "\n  ]\n}\n";
    return out;
}

} // namespace hpcprof::bench::jobgen
