// SPDX-License-Identifier: MIT
// Rules about file I/O: exposed I/O and many small requests.
#include "advice/rule_spec.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinExposedIoPct = 10.0;
constexpr int64_t kMinSmallRequests = 100;
constexpr double kMinSmallRequestShare = 0.05;
using threshold::kSmallRequestBytes;

/// Exposed I/O on the program's own data files (not start-up reads of /sys or configuration).
int64_t exposedDataIo(const RankBreakdown& r, const Analysis&) { return r.facts.dataIoExposedNs; }

/// The job's exposed data I/O, in % of the ranks' windows.
double dataExposedPct(const Analysis& a) {
    int64_t exposed = 0, window = 0;
    for (const auto& r : a.ranks) {
        exposed += r.facts.dataIoExposedNs;
        window += r.windowNs;
    }
    return window > 0 ? 100.0 * share(exposed, window) : 0;
}

std::vector<Evidence> exposedIoEvidence(const Analysis& a) {
    const JobSummary& s = a.summary;
    std::vector<Evidence> e = {
        {"io.data_exposed_pct", dataExposedPct(a), "pct"},
        {"io.exposed_pct", s.pct(TimeClass::Io), "pct"},
        {"io.overlapped_pct", s.ioTotalNs > 0 ? 100.0 * share(s.ioOverlappedNs, s.ioTotalNs) : 0, "pct"},
        {"max_rank_exposed_ns", double(maxOver(a, [&](const RankBreakdown& r) { return exposedDataIo(r, a); })), "ns"}};
    if (!a.topFiles.empty() && a.topFiles.front().fileClass == FileClass::Data)
        e.push_back({"top_file_ns", double(a.topFiles.front().totalNs), "ns"});
    return e;
}

int64_t smallRequestTime(const RankBreakdown& r, const Analysis&) {
    const RankFacts& f = r.facts;
    return f.smallIoCalls >= kMinSmallRequests && share(f.smallIoNs, r.windowNs) >= kMinSmallRequestShare
               ? f.smallIoNs
               : 0;
}

std::vector<Evidence> smallRequestEvidence(const Analysis& a) {
    int64_t calls = 0, ns = 0, bytes = 0, dataCalls = 0;
    for (const auto& r : a.ranks) {
        calls += r.facts.smallIoCalls;
        ns += r.facts.smallIoNs;
        bytes += r.facts.ioBytes;
        dataCalls += r.facts.ioCalls;
    }
    return {{"small_requests", double(calls), "count"},
            {"small_requests_ns", double(ns), "ns"},
            {"mean_request_bytes", dataCalls > 0 ? double(bytes) / double(dataCalls) : 0, "bytes"},
            {"threshold_bytes", double(kSmallRequestBytes), "bytes"}};
}

RuleSpec ioBoundRule() {
    RuleSpec bound;
    bound.info = {
        "io-bound", "io", "Exposed I/O: ranks wait for file reads and writes",
        "exposed I/O on application data files (not runtime, /proc, /sys, devices, pipes or "
        "sockets) is ≥ {min_exposed_io_pct} of the ranks' windows",
        "max over ranks of exposed data-file I/O",
        "Exposed I/O: the reference timeline waited in a call on one of the program's data files "
        "(file classes in [analysis.md](analysis.md)). The evidence includes all exposed I/O and "
        "the time of the top data file.",
        "Hide or shorten the I/O: stage input to faster (node-local) storage, read with more "
        "threads or asynchronously and prefetch the next batch, write checkpoints in the "
        "background, and use fewer, bigger requests.",
        {"io.data_exposed_pct", "io.exposed_pct", "io.overlapped_pct", "max_rank_exposed_ns", "top_file_ns"},
        {{"min_exposed_io_pct", kMinExposedIoPct, "pct"}}};
    bound.gate = [](const Analysis& a) { return dataExposedPct(a) >= kMinExposedIoPct; };
    bound.loss = exposedDataIo;
    bound.claims = {TimeClass::Io};
    bound.evidence = exposedIoEvidence;
    return bound;
}

RuleSpec smallIoRule() {
    RuleSpec small;
    small.info = {
        "small-io", "io", "Many small I/O requests",
        "a rank makes ≥ {min_small_requests} POSIX/MPI-IO data calls (read/write family) on "
        "application data files moving < {small_bytes} taking ≥ {min_small_request_share} of its "
        "window",
        "max over ranks of the time in those calls",
        "Only POSIX and MPI-IO data calls on the program's data files count: stdio is already "
        "buffered by the C library, and the runtime's start-up reads of /sys, /proc and "
        "configuration files are not the program's to change. The evidence includes the mean "
        "request size over all those calls.",
        "Make requests bigger: buffer writes (or use stdio / a larger buffer), read whole "
        "blocks or files at once, use collective MPI-IO or an I/O library that aggregates.",
        {"small_requests", "small_requests_ns", "mean_request_bytes", "threshold_bytes"},
        {{"min_small_requests", double(kMinSmallRequests), "count"},
         {"small_bytes", double(kSmallRequestBytes), "bytes"},
         {"min_small_request_share", kMinSmallRequestShare, "share"}}};
    small.loss = smallRequestTime;
    small.claims = {TimeClass::Io};
    small.evidence = smallRequestEvidence;
    small.exampleKeys = {"small_io"};
    return small;
}

} // namespace

std::vector<RuleSpec> ioRules() { return {ioBoundRule(), smallIoRule()}; }

} // namespace hpcprof::analyzer::advice
