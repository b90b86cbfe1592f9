// SPDX-License-Identifier: MIT
// The hang family's rule: the job ended with ranks inside calls that had not returned, waiting
// for each other (a collective some members never entered, different collectives on one
// communicator, a receive whose send never came).
#include <algorithm>

#include "advice/rule_spec.hpp"
#include "hang_section.hpp"

namespace hpcprof::analyzer::advice {

namespace {

std::optional<Judgement> jobHang(const Analysis& a) {
    const HangSection* s = hangSection(a);
    if (!s) return std::nullopt;
    int64_t waiting = 0, longest = 0;
    std::vector<int64_t> events;
    for (const HangRank& r : s->ranks)
        if (const HangCall* c = r.current(); c && c->cls == "communication") {
            ++waiting;
            longest = std::max(longest, c->waitedNs);
            if (events.size() < 8) events.push_back(c->eventId);
        }
    if (waiting == 0 && s->culprits.empty()) return std::nullopt;
    Judgement j;
    j.gainNs = longest;
    j.ranks = s->culprits;
    if (j.ranks.size() > 8) j.ranks.resize(8);
    j.eventIds = std::move(events);
    j.evidence = {{"ranks_waiting", double(waiting), "count"},
                  {"unfinished_calls", double(s->unfinishedCalls), "count"},
                  {"longest_wait_ns", double(longest), "ns"},
                  {"collective_mismatches", double(s->mismatches.size()), "count"},
                  {"wait_chains", double(s->chains.size()), "count"}};
    return j;
}

} // namespace

std::vector<RuleSpec> hangRules() {
    RuleSpec hang;
    hang.info = {
        "job-hang", "communication", "The job ended with ranks waiting for each other",
        "the trace holds unfinished communication calls (calls a rank had not returned from when "
        "its process was last seen: killed at a time limit, by hpcprof run --timeout, Ctrl-C or "
        "a crash)",
        "the longest unfinished communication call's wait (until its process was last seen)",
        "The ranks named are the ones the others wait for: the end of each point-to-point wait "
        "chain, the members of a communicator missing from a collective the others are in, and "
        "the ranks of a collective mismatch. The report's hang section lists every rank's call, "
        "communicator, instance and peer, and the first thing to check.",
        "Look first at what the named ranks do instead (the hang section says: a different "
        "collective, a receive from another rank, a read that never returns, or computing "
        "outside any call): a collective skipped on one code path, collectives called in a "
        "different order on one communicator, a message sent with another tag or to another "
        "rank than the receive expects, or an input that never arrives.",
        {"ranks_waiting", "unfinished_calls", "longest_wait_ns", "collective_mismatches",
         "wait_chains"},
        {}};
    hang.judge = jobHang;
    hang.claims = {TimeClass::Communication, TimeClass::Sync};
    return {hang};
}

} // namespace hpcprof::analyzer::advice
