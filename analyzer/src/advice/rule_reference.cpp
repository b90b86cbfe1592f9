// SPDX-License-Identifier: MIT
// The rule reference (docs/advice-rules.md and `hpcprof rules`), generated from the rule table:
// every threshold in the text is the value the rule's code uses.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rule_spec.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer {

namespace {

std::string trimmed(double v) { return fmt::format("{:g}", v); }

/// A threshold as people read it: shares in percent, sizes in KiB/MiB, times in us/ms.
std::string formatParameter(const RuleParameter& p) {
    const double v = p.value;
    if (p.unit == "share") return trimmed(v * 100.0) + " %";
    if (p.unit == "pct") return trimmed(v) + " %";
    if (p.unit == "bytes") {
        if (v >= 1024.0 * 1024.0 && std::fmod(v, 1024.0 * 1024.0) == 0) return trimmed(v / (1024.0 * 1024.0)) + " MiB";
        if (v >= 1024.0 && std::fmod(v, 1024.0) == 0) return trimmed(v / 1024.0) + " KiB";
        return trimmed(v) + " bytes";
    }
    if (p.unit == "ns") {
        if (v >= 1e6) return trimmed(v / 1e6) + " ms";
        if (v >= 1e3) return trimmed(v / 1e3) + " µs";
        return trimmed(v) + " ns";
    }
    if (p.unit == "bytes_per_s") return trimmed(v / 1e9) + " GB/s";
    return trimmed(v);
}

/// `text` with every {name} replaced by the formatted value of that parameter.
std::string substitute(const std::string& text, const RuleInfo& info) {
    std::string out = text;
    for (const auto& p : info.parameters) {
        const std::string key = "{" + p.name + "}";
        for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at))
            out.replace(at, key.size(), formatParameter(p));
    }
    return out;
}

std::string codeList(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "`" : ", `") + n + "`";
    return out;
}

std::string claimsText(const RuleInfo& r) {
    return r.claims.empty() ? std::string("the rank's whole window") : codeList(r.claims);
}

constexpr const char* kIntro = R"(# Advice rules

<!-- Generated from the rule table (analyzer/src/advice/rules_*.cpp) by `hpcprof rules --format md`;
     edit the rules, then run scripts/update_docs.sh. A test fails when this file is out of date. -->

`hpcprof report` runs a small rule engine over the finished analysis. Each rule looks at the
measured breakdown, wait states and per-rank facts and may produce one **finding** with:

- `id` (below), a title and a **severity** from the estimated gain relative to the runtime `T`:
  `critical` ≥ {critical} of `T`, `warning` ≥ {warning}, else `info` (rules whose gain is not
  estimated give warnings);
- `ranks`: the ranks behind it (largest contribution first, at most 8);
- `evidence`: named numbers with units, and `event_ids`: a few example events (look them up in
  `event_view`);
- `estimated_gain_ns`: an **upper bound** of the runtime the suggested change could save on its
  own, never more than `T`. The runtime cannot shrink by more than the largest per-rank time a
  change removes, so most rules use the maximum over ranks of the time they blame;
- `exclusive_gain_ns`: the part of that gain no finding above it claims already. Several rules
  can blame the same time (a rank's MPI wait is exposed communication, load-imbalance wait and
  straggler wait at once), so the estimated gains do not add up. Findings are taken in order;
  on each rank a finding claims its blamed time (at most its estimated gain) from what is left
  of the time classes the rule names below ("claims"), its exclusive gain is the most it claims
  on one rank, and never more than the findings above it left of `T` less the compute no
  finding removes (averaged over the ranks; a straggler's excess compute is moved to the other
  ranks by rebalancing, not removed, so it stays in that floor). The exclusive gains thus sum
  to at most `T` (`summary.findings_gain_ns`), and reports show them;
- `suggestion`: what to change, in plain words, worded for the kind of program
  (`summary.program_kind`): `mpi` when it calls MPI, `data_parallel` when its ranks come from
  torchrun (`RANK`) or a PyTorch trace or it calls NCCL without MPI, else `processes`. Rules
  with no wording for that kind give their general one.

Findings are sorted by estimated gain; severity comes from the estimated gain. Every rule has a test trace that fires it and one that
must not (`tests/unit/analyzer/advice_rules_test.cpp`). "Window" below is the rank's analysis
window, "facts" are counted over events overlapping it. Definitions of exposed, overlapped,
wait etc.: [analysis.md](analysis.md). `hpcprof rules --format json` lists the same rules and
thresholds for scripts.

)";

} // namespace

const std::vector<RuleInfo>& ruleReference() {
    static const std::vector<RuleInfo> kInfo = [] {
        std::vector<RuleInfo> out;
        for (const auto& spec : advice::ruleSpecs()) {
            out.push_back(spec.info);
            if (spec.claimsCompute) out.back().claims.push_back(timeClassName(TimeClass::Compute));
            for (TimeClass c : spec.claims) out.back().claims.push_back(timeClassName(c));
        }
        return out;
    }();
    return kInfo;
}

std::string ruleReferenceMarkdown() {
    std::string intro = kIntro;
    auto replace = [&](const char* key, double share) {
        intro.replace(intro.find(key), std::string(key).size(), trimmed(share * 100.0) + " %");
    };
    replace("{critical}", threshold::kCriticalGainShare);
    replace("{warning}", threshold::kWarningGainShare);
    std::string o = intro;
    o += "| id | area | fires when | estimated gain |\n|---|---|---|---|\n";
    for (const auto& r : ruleReference())
        o += fmt::format("| `{}` | {} | {} | {} |\n", r.id, r.area, substitute(r.firesWhen, r),
                         substitute(r.gain, r));
    o += "\n## Details\n";
    for (const auto& r : ruleReference()) {
        o += fmt::format("\n### {}\n\n", r.id);
        o += fmt::format("*{}*. {}\n\n", r.title, substitute(r.details, r));
        o += fmt::format("- Evidence: {}.\n", codeList(r.evidence));
        if (!r.parameters.empty()) {
            std::string params;
            for (const auto& p : r.parameters)
                params += fmt::format("{}`{}` = {}", params.empty() ? "" : ", ", p.name, formatParameter(p));
            o += fmt::format("- Thresholds: {}.\n", params);
        }
        o += fmt::format("- Claims: {}.\n", claimsText(r));
        o += fmt::format("- Suggestion: {}\n", r.suggestion);
        for (const auto& [kind, text] : r.suggestionFor) o += fmt::format("  - for `{}`: {}\n", kind, text);
    }
    return o;
}

std::string ruleReferenceJson() {
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& r : ruleReference()) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& p : r.parameters)
            params.push_back({{"name", p.name}, {"value", p.value}, {"unit", p.unit}});
        rules.push_back({{"id", r.id},
                         {"area", r.area},
                         {"title", r.title},
                         {"fires_when", substitute(r.firesWhen, r)},
                         {"estimated_gain", substitute(r.gain, r)},
                         {"severity", r.severityFromGain ? "from_gain" : "warning"},
                         {"evidence", r.evidence},
                         {"parameters", std::move(params)},
                         {"claims", r.claims.empty() ? std::vector<std::string>{"window"} : r.claims},
                         {"suggestion", r.suggestion},
                         {"suggestion_for", r.suggestionFor}});
    }
    nlohmann::json doc = {{"schema", "hpcprof-rules"}, {"rules", std::move(rules)}};
    return doc.dump(2) + "\n";
}

} // namespace hpcprof::analyzer
