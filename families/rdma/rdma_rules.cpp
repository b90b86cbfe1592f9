// SPDX-License-Identifier: MIT
// Rules about RDMA traffic (nic_queue tracks): small work requests dominate, bandwidth far below
// the link rate. They read Analysis::rdma and never fire on traces without RDMA work requests.
#include <algorithm>

#include "hpcprof/analyzer/rdma_types.hpp"
#include "advice/rule_spec.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinSmallShare = 0.5;
constexpr int64_t kMinWorkRequests = 100;
constexpr double kLowLinkShare = 0.25;
constexpr int64_t kMinBytes = 1 << 20;

std::optional<Judgement> smallWorkRequests(const Analysis& a) {
    if (!a.rdma.any()) return std::nullopt;
    int64_t total = 0, small = 0;
    Judgement j;
    for (const auto& r : a.rdma.ranks) {
        total += r.workRequests;
        small += r.smallWorkRequests;
        if (r.workRequests >= kMinWorkRequests &&
            double(r.smallWorkRequests) > kMinSmallShare * double(r.workRequests) && r.rank)
            j.ranks.push_back(*r.rank);
    }
    if (total < kMinWorkRequests || double(small) <= kMinSmallShare * double(total)) return std::nullopt;
    j.evidence = {{"small_work_requests", double(small), "count"},
                  {"work_requests", double(total), "count"},
                  {"small_share_pct", 100.0 * double(small) / double(total), "pct"}};
    return j;
}

std::optional<Judgement> lowBandwidth(const Analysis& a) {
    if (!a.rdma.any()) return std::nullopt;
    double worstShare = 1.0;
    Judgement j;
    for (const auto& r : a.rdma.ranks) {
        if (r.linkRateMbps <= 0 || r.bytes < kMinBytes) continue;
        double linkShare = r.achievedGbps * 1000.0 / double(r.linkRateMbps);
        if (linkShare >= kLowLinkShare) continue;
        if (r.rank) j.ranks.push_back(*r.rank);
        worstShare = std::min(worstShare, linkShare);
    }
    if (worstShare >= kLowLinkShare) return std::nullopt;
    j.evidence = {{"worst_link_share_pct", 100.0 * worstShare, "pct"}};
    return j;
}

RuleSpec smallWorkRequestsRule() {
    RuleSpec small;
    small.info = {
        "rdma-small-messages", "rdma", "RDMA traffic is dominated by small messages",
        "the job posts ≥ {min_work_requests} RDMA work requests and more than "
        "{min_small_share} of them carry < {small_bytes}",
        "not estimated (0); findings are warnings",
        "Reads the RDMA analysis of the nic_queue tracks ([rdma-capture.md](rdma-capture.md)). "
        "Ranks listed: those with ≥ {min_work_requests} work requests of which more than "
        "{min_small_share} are small.",
        "Most work requests carry less than 4 KiB: per-request overhead "
        "(doorbells, completions) dominates. Aggregate messages (larger "
        "buffers, MPI/NCCL bucket sizes), post chains of requests with one "
        "signalled completion, or use inline sends for the tiny ones.",
        {"small_work_requests", "work_requests", "small_share_pct"},
        {{"min_work_requests", double(kMinWorkRequests), "count"},
         {"min_small_share", kMinSmallShare, "share"},
         {"small_bytes", double(kRdmaSmallBytes), "bytes"}},
        false};
    small.judge = smallWorkRequests;
    return small;
}

RuleSpec lowBandwidthRule() {
    RuleSpec low;
    low.info = {
        "rdma-low-bandwidth", "rdma", "RDMA bandwidth far below the link rate",
        "a rank moving ≥ {min_bytes} over RDMA achieves < {low_link_share} of its link rate over "
        "the span of its RDMA activity",
        "not estimated (0); findings are warnings",
        "The link rate is the fastest active port of the devices the process opened, so ranks "
        "whose link rate is unknown are not judged. Ranks listed: those under {low_link_share} "
        "of their link rate.",
        "While RDMA was active the achieved bandwidth stayed under a quarter "
        "of the link rate: check message sizes, the number of outstanding "
        "requests per QP (queue depth), and whether the traffic waits on the "
        "CPU (polling gaps) rather than the network.",
        {"worst_link_share_pct"},
        {{"min_bytes", double(kMinBytes), "bytes"}, {"low_link_share", kLowLinkShare, "share"}},
        false};
    low.judge = lowBandwidth;
    return low;
}

} // namespace

std::vector<RuleSpec> rdmaRules() { return {smallWorkRequestsRule(), lowBandwidthRule()}; }

} // namespace hpcprof::analyzer::advice
