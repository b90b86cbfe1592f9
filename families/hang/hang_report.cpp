// SPDX-License-Identifier: MIT
// The hang family's report section, in every format: each rank's unfinished call (what it is
// inside, since when), the collectives waited in and who is missing, collective mismatches, the
// point-to-point wait chains and the first thing to check. Nothing without unfinished calls.
#include <fmt/format.h>

#include "hang_section.hpp"
#include "hpcprof/report/printable.hpp"
#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {

template <typename T> nlohmann::json orNull(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// A name from the trace as the reports show it (escaped: report/printable.hpp); null if empty.
nlohmann::json name(const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(printable(s));
}

nlohmann::json callJson(const HangCall& c) {
    return {{"event_id", c.eventId},   {"tid", c.tid},
            {"call", printable(c.name)}, {"class", c.cls},
            {"communicator", name(c.communicator)},
            {"instance", orNull(c.instance)}, {"peer", orNull(c.peer)},
            {"tag", orNull(c.tag)},    {"object", name(c.object)},
            {"requested_bytes", orNull(c.requestedBytes)},
            {"requests", orNull(c.requests)},
            {"since_ns", c.sinceNs},   {"waited_ns", c.waitedNs}};
}

nlohmann::json rankJson(const HangRank& r) {
    nlohmann::json calls = nlohmann::json::array();
    for (const HangCall& c : r.calls) calls.push_back(callJson(c));
    return {{"rank", r.rank},
            {"state", printable(describeRank(r))},
            {"unfinished_calls", std::move(calls)},
            {"last_call", name(r.lastCall)},
            {"last_call_end_ns", r.lastCallEndNs},
            {"end_state", r.endState}};
}

nlohmann::json ncclJson(const NcclCommunicatorState& c) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const NcclRankState& r : c.ranks)
        ranks.push_back({{"rank", r.rank}, {"instance", orNull(r.instance)}, {"call", name(r.call)},
                         {"completion", r.completion}, {"blocked_in", name(r.blockedIn)}});
    return {{"communicator", printable(c.communicator)},
            {"size", c.commSize < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.commSize)},
            {"last_instance", c.lastInstance < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.lastInstance)},
            {"last_call", name(c.lastCall)}, {"enqueued", c.enqueued}, {"behind", c.behind},
            {"ranks", std::move(ranks)}};
}

/// One line per NCCL communicator: the furthest instance, who enqueued it, who never did.
std::string ncclLine(const NcclCommunicatorState& c) {
    std::string ranks;
    for (const NcclRankState& r : c.ranks)
        ranks += fmt::format("; rank {}: {}, completion {}{}", r.rank,
                             r.instance ? fmt::format("{} #{}", r.call, *r.instance) : std::string("none"),
                             r.completion, r.blockedIn.empty() ? "" : ", in " + r.blockedIn);
    if (c.lastInstance < 0) return fmt::format("NCCL {}: no collective enqueued{}", c.communicator, ranks);
    return fmt::format("NCCL {}: {} #{} enqueued by ranks {}{}{}", c.communicator, c.lastCall,
                       c.lastInstance, fmt::join(c.enqueued, ","),
                       c.behind.empty() ? "" : fmt::format(", never by ranks {}", fmt::join(c.behind, ",")),
                       ranks);
}

nlohmann::json sectionJson(const HangSection& s) {
    nlohmann::json ranks = nlohmann::json::array(), colls = nlohmann::json::array(),
                   mism = nlohmann::json::array(), chains = nlohmann::json::array();
    for (const HangRank& r : s.ranks) ranks.push_back(rankJson(r));
    for (const CollectiveWait& w : s.collectives)
        colls.push_back({{"communicator", printable(w.communicator)}, {"call", printable(w.name)}, {"instance", w.instance},
                         {"ranks", w.ranks}, {"missing", w.missing}});
    for (const CollectiveMismatch& m : s.mismatches) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& [rank, call] : m.calls) calls.push_back({{"rank", rank}, {"call", printable(call)}});
        mism.push_back({{"communicator", printable(m.communicator)}, {"calls", std::move(calls)}});
    }
    for (const WaitChain& c : s.chains)
        chains.push_back({{"ranks", c.ranks}, {"cycle", c.cycle}, {"end", printable(c.end)}});
    nlohmann::json nccl = nlohmann::json::array();
    for (const NcclCommunicatorState& c : s.nccl) nccl.push_back(ncclJson(c));
    return {{"unfinished_calls", s.unfinishedCalls}, {"ranks", std::move(ranks)},
            {"collectives", std::move(colls)},       {"mismatches", std::move(mism)},
            {"chains", std::move(chains)},           {"nccl", std::move(nccl)},
            {"culprits", s.culprits},                {"first_check", printable(s.firstCheck)}};
}

/// The section's lines, plain text (the markdown and HTML forms wrap the same lines).
std::vector<std::string> lines(const HangSection& s) {
    std::vector<std::string> out;
    for (const HangRank& r : s.ranks) {
        const HangCall* c = r.current();
        out.push_back(fmt::format("rank {}: {}{}", r.rank, describeRank(r),
                                  c ? fmt::format(", for {}", formatDuration(double(c->waitedNs))) : ""));
    }
    for (const CollectiveWait& w : s.collectives)
        out.push_back(fmt::format("{} #{} on {}: inside: ranks {}{}", w.name, w.instance, w.communicator,
                                  fmt::join(w.ranks, ","),
                                  w.missing.empty() ? "" : fmt::format("; never entered by: ranks {}", fmt::join(w.missing, ","))));
    for (const CollectiveMismatch& m : s.mismatches) {
        std::string calls;
        for (const auto& [rank, call] : m.calls) calls += fmt::format("{}rank {}: {}", calls.empty() ? "" : "; ", rank, call);
        out.push_back(fmt::format("collective mismatch on {}: {}", m.communicator, calls));
    }
    for (const WaitChain& c : s.chains)
        out.push_back(fmt::format("wait chain {}: rank {} {}{}", fmt::join(c.ranks, " -> "), c.ranks.back(),
                                  c.cycle ? "" : "is ", c.end));
    for (const NcclCommunicatorState& c : s.nccl) out.push_back(ncclLine(c));
    return out;
}

class HangReport final : public ReportSection {
public:
    std::string_view name() const override { return HangSection::kName; }

    void json(const Analysis& a, nlohmann::json& doc) const override {
        if (const HangSection* s = hangSection(a)) doc[HangSection::kName] = sectionJson(*s);
    }

    std::string text(const Analysis& a) const override {
        const HangSection* s = hangSection(a);
        if (!s) return {};
        std::string o = fmt::format("\nHang: {} calls had not returned when the job was last seen\n",
                                    s->unfinishedCalls);
        for (const std::string& l : lines(*s)) o += "  " + printable(l) + "\n";
        if (!s->firstCheck.empty()) o += "  first check: " + printable(s->firstCheck) + "\n";
        return o;
    }

    std::string markdown(const Analysis& a) const override {
        const HangSection* s = hangSection(a);
        if (!s) return {};
        std::string o = fmt::format("### Hang\n\n{} calls had not returned when the job was last seen.\n\n",
                                    s->unfinishedCalls);
        for (const std::string& l : lines(*s)) o += "- " + markdownEscape(printable(l)) + "\n";
        if (!s->firstCheck.empty())
            o += "\n**First check:** " + markdownEscape(printable(s->firstCheck)) + "\n";
        return o + "\n";
    }

    std::string html(const Analysis& a) const override {
        const HangSection* s = hangSection(a);
        if (!s) return {};
        std::string o = fmt::format("<h2>Hang</h2>\n<p>{} calls had not returned when the job was last seen.</p>\n<ul>\n",
                                    s->unfinishedCalls);
        for (const std::string& l : lines(*s)) o += "<li>" + htmlEscape(printable(l)) + "</li>\n";
        o += "</ul>\n";
        if (!s->firstCheck.empty())
            o += "<p><b>First check:</b> " + htmlEscape(printable(s->firstCheck)) + "</p>\n";
        return o;
    }
};

} // namespace

} // namespace hpcprof::report::detail

namespace hpcprof::report {
std::unique_ptr<ReportSection> makeHangReport() { return std::make_unique<detail::HangReport>(); }
} // namespace hpcprof::report
