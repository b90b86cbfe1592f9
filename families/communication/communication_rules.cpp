// SPDX-License-Identifier: MIT
// The communication family's rules: exposed communication, small messages, collectives far
// below the link bandwidth, stragglers (from the wait states).
#include <algorithm>

#include "advice/rule_spec.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinExposedCommPct = 10.0;
constexpr int64_t kMinSmallCalls = 100;
constexpr double kMinSmallCallShare = 0.05;
constexpr int64_t kMinLargeCollectives = 10;
constexpr double kLowBandwidthShare = 0.30;
constexpr double kMinWaitPerOtherRank = 0.02;
constexpr double kStandOut = 2.0; // a straggler inflicts this many times the others' median wait
using threshold::kLargeCollectiveBytes;
using threshold::kSmallRequestBytes;

int64_t exposedComm(const RankBreakdown& r, const Analysis&) { return r.ns(TimeClass::Communication); }

std::vector<Evidence> exposedCommEvidence(const Analysis& a) {
    auto exposed = [](const RankBreakdown& r) { return r.ns(TimeClass::Communication); };
    const JobSummary& s = a.summary;
    return {{"comm.exposed_pct", s.pct(TimeClass::Communication), "pct"},
            {"comm.overlapped_pct", s.commTotalNs > 0 ? 100.0 * share(s.commOverlappedNs, s.commTotalNs) : 0, "pct"},
            {"max_rank_exposed_ns", double(maxOver(a, exposed)), "ns"},
            {"wait_ns", double(a.waits.collectiveWaitNs + a.waits.lateSenderNs + a.waits.lateReceiverNs + a.waits.pollingNs), "ns"}};
}

/// Time in small calls less their wait for late partners (waiting for a rank that computes
/// longer is imbalance: load-imbalance, straggler), and at most each call at the fast end of
/// its kind: what a call spends beyond that (waiting for a CPU, for a rendezvous with a busy
/// partner) does not go away when messages are packed together.
int64_t smallMessageTime(const RankBreakdown& r, const Analysis&) {
    const RankFacts& f = r.facts;
    const int64_t latency = std::min(std::max<int64_t>(0, f.smallCommNs - f.smallCommWaitNs), f.smallCommFloorNs);
    return f.smallCommCalls >= kMinSmallCalls && share(latency, r.windowNs) >= kMinSmallCallShare
               ? latency
               : 0;
}

std::vector<Evidence> smallMessageEvidence(const Analysis& a) {
    int64_t calls = 0, ns = 0, waitNs = 0, floorNs = 0;
    for (const auto& r : a.ranks) {
        calls += r.facts.smallCommCalls;
        ns += r.facts.smallCommNs;
        waitNs += r.facts.smallCommWaitNs;
        floorNs += r.facts.smallCommFloorNs;
    }
    return {{"small_calls", double(calls), "count"}, {"small_calls_ns", double(ns), "ns"},
            {"small_calls_wait_ns", double(waitNs), "ns"}, {"small_calls_floor_ns", double(floorNs), "ns"},
            {"threshold_bytes", double(kSmallRequestBytes), "bytes"}};
}

/// Transfer time above what the link (or, all ranks on one host, a memory copy) would need, for
/// a rank whose large collectives reach less than kLowBandwidthShare of it.
int64_t bandwidthLoss(const RankBreakdown& r, const Analysis& a) {
    const double link = a.collectiveBandwidthBytesPerS;
    const RankFacts& f = r.facts;
    if (f.largeCollectives < kMinLargeCollectives || f.largeCollectiveTransferNs <= 0) return 0;
    double achieved = double(f.largeCollectiveBytes) / (double(f.largeCollectiveTransferNs) * 1e-9);
    if (achieved >= kLowBandwidthShare * link) return 0;
    return f.largeCollectiveTransferNs - int64_t(double(f.largeCollectiveBytes) / link * 1e9);
}

std::vector<Evidence> bandwidthEvidence(const Analysis& a) {
    const double link = a.collectiveBandwidthBytesPerS;
    int64_t bytes = 0, ns = 0, calls = 0;
    for (const auto& r : a.ranks) {
        bytes += r.facts.largeCollectiveBytes;
        ns += r.facts.largeCollectiveTransferNs;
        calls += r.facts.largeCollectives;
    }
    double achieved = ns > 0 ? double(bytes) / (double(ns) * 1e-9) : 0;
    return {{"large_collectives", double(calls), "count"},
            {"achieved_bytes_per_s", achieved, "bytes_per_s"},
            {"reference_bytes_per_s", link, "bytes_per_s"},
            {"achieved_pct_of_reference", 100.0 * achieved / link, "pct"},
            {"one_host", a.collectiveBandwidthBasis == "memory" ? 1.0 : 0.0, "count"}};
}

/// The upper median; 0 for none.
int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
}

/// The median wait the other ranks inflicted (ranks nobody waited for count 0). When lateness
/// rotates (4 oversubscribed LAMMPS ranks: each last in 17-37 % of 121 collectives, 447-622 ms
/// inflicted) no rank is the straggler: the others are about as late as the top one.
int64_t typicalInflictedWait(const Analysis& a, int64_t straggler) {
    std::vector<int64_t> others;
    for (const auto& r : a.ranks) {
        if (r.rank == straggler) continue;
        int64_t inflicted = 0;
        for (const Straggler& s : a.waits.stragglers)
            if (s.rank == r.rank) inflicted = s.inflictedWaitNs;
        others.push_back(inflicted);
    }
    return median(std::move(others));
}

int64_t usefulOf(const Analysis& a, int64_t rank) {
    const RankBreakdown* r = rankBreakdownOf(a, rank);
    return r ? usefulNs(*r, a) : 0;
}

int64_t medianUsefulOfOthers(const Analysis& a, int64_t rank) {
    std::vector<int64_t> others;
    for (const auto& r : a.ranks)
        if (r.rank != rank) others.push_back(usefulNs(r, a));
    return median(std::move(others));
}

std::optional<Judgement> straggler(const Analysis& a) {
    if (a.waits.stragglers.empty() || a.ranks.size() < 2) return std::nullopt;
    const Straggler& s = a.waits.stragglers.front();
    double perOther = double(s.inflictedWaitNs) / double(a.ranks.size() - 1);
    if (perOther < kMinWaitPerOtherRank * double(a.pop.runtimeNs)) return std::nullopt;
    if (double(s.inflictedWaitNs) < kStandOut * double(typicalInflictedWait(a, s.rank))) return std::nullopt;
    int64_t maxWait = 0;
    for (const auto& r : a.ranks)
        if (r.rank != s.rank) maxWait = std::max(maxWait, r.waitNs);
    Judgement j;
    j.gainNs = std::min(maxWait, s.inflictedWaitNs);
    // The others stop waiting; the straggler stops doing what made it late, at most its compute
    // beyond the others' median. That work moves to the others (rebalancing), so it stays in
    // the floor of compute the findings together leave (RuleSpec::computeMoves).
    const int64_t excess = std::max<int64_t>(0, usefulOf(a, s.rank) - medianUsefulOfOthers(a, s.rank));
    for (const auto& r : a.ranks) {
        j.rankClaimNs.push_back(r.rank == s.rank ? 0 : std::min(r.waitNs, s.inflictedWaitNs));
        j.rankComputeClaimNs.push_back(r.rank == s.rank ? std::min(excess, j.gainNs) : 0);
    }
    j.ranks = {s.rank};
    j.eventIds = {s.exampleEventId};
    j.evidence = {{"rank", double(s.rank), "count"},
                  {"times_last", double(s.timesLast), "count"},
                  {"instances", double(s.instances), "count"},
                  {"inflicted_wait_ns", double(s.inflictedWaitNs), "ns"},
                  {"max_instance_wait_ns", double(s.maxInflictedNs), "ns"}};
    return j;
}

RuleSpec exposedCommunicationRule() {
    RuleSpec exposed;
    exposed.info = {
        "exposed-communication", "communication",
        "Communication is exposed (not hidden behind computation)",
        "job `comm.exposed_pct` ≥ {min_exposed_comm_pct}",
        "max over ranks of exposed communication",
        "Communication nobody computed under. MPI start-up and shutdown and communicator or "
        "window creation are set-up, not communication: neither here nor in the gain. A large "
        "`wait_ns` means the real cause is imbalance (see load-imbalance and straggler): "
        "overlap moves that wait to MPI_Wait rather than removing it, so the exclusive gain "
        "claims only the rest (exposed communication less wait) and leaves the wait to them.",
        "Overlap communication with computation: start collectives asynchronously "
        "(non-blocking MPI, async NCCL / DDP gradient bucketing) and wait for them as late as "
        "possible; make buckets large enough to be bandwidth-bound but early enough to overlap "
        "the backward pass.",
        {"comm.exposed_pct", "comm.overlapped_pct", "max_rank_exposed_ns", "wait_ns"},
        {{"min_exposed_comm_pct", kMinExposedCommPct, "pct"}}};
    exposed.gate = [](const Analysis& a) {
        return a.summary.pct(TimeClass::Communication) >= kMinExposedCommPct;
    };
    exposed.info.suggestionFor = {
        {"mpi", "Overlap communication with computation: post non-blocking calls "
                "(MPI_Isend/MPI_Irecv, MPI_Iallreduce) early, compute on data that does not "
                "depend on them (the interior of a halo exchange), and MPI_Wait as late as "
                "possible. A large `wait_ns` is imbalance, not communication: see "
                "load-imbalance and straggler."},
        {"data_parallel", "Overlap gradient communication with the backward pass: let DDP/FSDP "
                          "all-reduce gradient buckets while later gradients are still computed "
                          "(bucket_cap_mb), and avoid calls that synchronize every step "
                          "(.item(), explicit barriers, per-step metric all-reduces)."},
        {"processes", "The processes block on each other's data (pipes, sockets, shared files): "
                      "exchange it asynchronously or in larger batches so that each process "
                      "keeps working while the other produces."}};
    exposed.loss = exposedComm;
    // Overlap does not remove waiting for a late partner (it moves to MPI_Wait): that part is
    // left for straggler and load-imbalance, which name its cause.
    exposed.claim = [](const RankBreakdown& r, const Analysis&) { return r.transferNs; };
    exposed.claims = {TimeClass::Communication};
    exposed.commPart = RuleSpec::CommPart::Transfer;
    exposed.evidence = exposedCommEvidence;
    return exposed;
}

RuleSpec smallMessagesRule() {
    RuleSpec small;
    small.info = {
        "small-messages", "communication", "Many small messages or collectives (latency-bound)",
        "a rank makes ≥ {min_small_calls} MPI/NCCL calls moving < {small_bytes} and they take "
        "≥ {min_small_call_share} of its window, counting per call at most the 10th-percentile "
        "duration of calls of its name and not their wait for late partners",
        "max over ranks of min(the time in those calls less their wait for late partners, "
        "the calls' count x their name's 10th-percentile duration)",
        "Latency-bound communication, counted on API calls (`mpi_*`, `nccl_*`, not the GPU "
        "kernels, so nothing is counted twice); folded polls count as their `count`. The wait "
        "the wait-state analysis measures inside those calls (collective wait, late sender, "
        "late receiver: `small_calls_wait_ns`) is imbalance, not latency, and is left out: "
        "see load-imbalance and straggler. Packing k messages into one saves k - 1 fixed "
        "per-call costs, which the fast end of each name's calls bounds "
        "(`small_calls_floor_ns`: every call at its name's 10th-percentile duration): time a "
        "call spends beyond that, waiting for a CPU or for a busy partner to take a "
        "rendezvous-size message, stays (LAMMPS's 25 KB halo sends on 4 ranks sharing 2 cores "
        "average 460 us, their fast end is tens of us).",
        "Aggregate: fuse small collectives into one (gradient bucketing, tensor fusion), pack "
        "small messages into bigger ones, or replace many point-to-point exchanges by one "
        "neighbourhood collective.",
        {"small_calls", "small_calls_ns", "small_calls_wait_ns", "small_calls_floor_ns", "threshold_bytes"},
        {{"min_small_calls", double(kMinSmallCalls), "count"},
         {"small_bytes", double(kSmallRequestBytes), "bytes"},
         {"min_small_call_share", kMinSmallCallShare, "share"}}};
    small.info.suggestionFor = {
        {"mpi", "Aggregate: pack small messages into bigger ones (one message per neighbour and "
                "step, derived datatypes), fuse small collectives into one call, or replace many "
                "point-to-point exchanges by one neighbourhood collective "
                "(MPI_Neighbor_alltoallv)."},
        {"data_parallel", "Fuse small collectives: raise the DDP bucket size (bucket_cap_mb), "
                          "coalesce tensors before reducing them, and all-reduce metrics once "
                          "per logging interval rather than every step."}};
    small.loss = smallMessageTime;
    small.claims = {TimeClass::Communication};
    small.commPart = RuleSpec::CommPart::Transfer;
    small.evidence = smallMessageEvidence;
    small.exampleKeys = {"small_comm"};
    return small;
}

RuleSpec lowCollectiveBandwidthRule() {
    RuleSpec bandwidth;
    bandwidth.info = {
        "low-collective-bandwidth", "communication",
        "Large collectives reach a small fraction of the available bandwidth",
        "a rank makes ≥ {min_large_collectives} collective calls moving ≥ {large_bytes} and "
        "achieves < {low_bandwidth_share} of the reference bandwidth",
        "max over ranks of (transfer time − bytes / reference bandwidth)",
        "Achieved bandwidth of a rank = Σ bytes / Σ (call duration − its wait at N x N), over its "
        "large collective calls (`bytes` is what the rank sent). The reference is the link "
        "between hosts: `--link-gbps`, else the trace metadata key `link_bandwidth_bytes_per_s`, "
        "else {default_link_bytes_per_s}. When every rank runs on one host (the processes' host "
        "names) no link is involved: the ranks copy through shared memory, and the reference is "
        "the bandwidth of one memory copy, `--memory-gbps`, else {default_memory_bytes_per_s} "
        "(`one_host` = 1 in the evidence).",
        "Check the transport: is NCCL/MPI using the fast interconnect (NCCL_DEBUG=INFO, "
        "UCX/OFI settings), is GPUDirect RDMA enabled, are ranks placed so that rings stay "
        "inside nodes? Larger buckets also raise the achieved bandwidth.",
        {"large_collectives", "achieved_bytes_per_s", "reference_bytes_per_s", "achieved_pct_of_reference",
         "one_host"},
        {{"min_large_collectives", double(kMinLargeCollectives), "count"},
         {"large_bytes", double(kLargeCollectiveBytes), "bytes"},
         {"low_bandwidth_share", kLowBandwidthShare, "share"},
         {"default_link_bytes_per_s", threshold::kDefaultLinkBytesPerS, "bytes_per_s"},
         {"default_memory_bytes_per_s", threshold::kDefaultMemoryCopyBytesPerS, "bytes_per_s"}}};
    bandwidth.info.suggestionFor = {
        {"mpi", "Check the transport: between hosts, is Open MPI / UCX / OFI using the fast "
                "interconnect (ompi_info, UCX_TLS) and are the ranks placed so that large "
                "collectives stay inside nodes? On one host, is the shared-memory transport "
                "(btl vader/sm with CMA or XPMEM single-copy) in use? Larger messages also raise "
                "the achieved bandwidth."},
        {"data_parallel", "Check the transport: NCCL_DEBUG=INFO shows whether NCCL uses NVLink, "
                          "InfiniBand or falls back to sockets or shared memory; enable GPUDirect "
                          "RDMA, keep rings inside nodes, and use larger gradient buckets."}};
    bandwidth.loss = bandwidthLoss;
    bandwidth.claims = {TimeClass::Communication};
    bandwidth.commPart = RuleSpec::CommPart::Transfer;
    bandwidth.evidence = bandwidthEvidence;
    bandwidth.exampleKeys = {"large_collective"};
    return bandwidth;
}

RuleSpec stragglerRule() {
    RuleSpec late;
    late.info = {
        "straggler", "balance", "A rank arrives late and the others wait for it",
        "the top straggler's inflicted wait divided by the other ranks' count ≥ "
        "{min_wait_per_other_rank} of the runtime `T`, and ≥ {stand_out} × the median wait "
        "the other ranks inflicted (when lateness rotates among ranks, none is the straggler)",
        "min(its inflicted wait, the largest wait of any other rank)",
        "From the wait states: the rank most others waited for (entered collectives last, sent "
        "late). The example event is its call in the worst instance.",
        "Find out why this rank is late: more work (rebalance), a slower node or GPU "
        "(check its host and clocks), extra I/O or logging on it, or OS noise; consider "
        "pinning and excluding the slow node.",
        {"rank", "times_last", "instances", "inflicted_wait_ns", "max_instance_wait_ns"},
        {{"min_wait_per_other_rank", kMinWaitPerOtherRank, "share"}, {"stand_out", kStandOut, "ratio"}}};
    late.judge = straggler;
    late.claims = {TimeClass::Communication, TimeClass::Sync, TimeClass::Idle};
    late.commPart = RuleSpec::CommPart::Wait;
    late.claimsCompute = true; // the straggler's own excess compute,
    late.computeMoves = true;  // which rebalancing moves to the others rather than removes
    return late;
}

} // namespace

std::vector<RuleSpec> communicationRules() { return {exposedCommunicationRule(), smallMessagesRule(), lowCollectiveBandwidthRule(), stragglerRule()}; }

} // namespace hpcprof::analyzer::advice
