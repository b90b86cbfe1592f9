// SPDX-License-Identifier: MIT
// The wait states in words, for the text, markdown and HTML reports: which kind of wait the
// time is (Scalasca's late sender / late receiver / wait at N x N, and polling loops), so a
// reader tells a slow network from a late partner without opening the JSON.
#include <fmt/format.h>

#include "hpcprof/report/writers.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

std::string waitStatesLine(const analyzer::WaitStates& w) {
    const int64_t total = w.collectiveWaitNs + w.lateSenderNs + w.lateReceiverNs + w.pollingNs;
    if (total == 0) return {};
    std::string parts;
    auto part = [&](int64_t ns, const char* what) {
        if (ns > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", what, formatDuration(double(ns)));
    };
    part(w.lateSenderNs, "late senders (a receive waited for its send)");
    part(w.lateReceiverNs, "late receivers (a send waited for its receive to be posted)");
    part(w.collectiveWaitNs, "in collectives (for the last member to enter)");
    part(w.pollingNs, "in polling loops (probes for messages not yet sent)");
    return fmt::format("{} waiting for other ranks: {}", formatDuration(double(total)), parts);
}

std::string inflictedSplit(const analyzer::Straggler& s) {
    const int64_t inCollectives = s.inflictedInCollectivesNs, inMessages = s.inflictedWaitNs - inCollectives;
    if (inCollectives == 0 || inMessages == 0) return inCollectives ? "in collectives" : "for its messages";
    return fmt::format("{} in collectives, {} for its messages", formatDuration(double(inCollectives)),
                       formatDuration(double(inMessages)));
}

} // namespace hpcprof::report::detail
