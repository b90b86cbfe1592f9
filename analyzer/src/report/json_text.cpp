// SPDX-License-Identifier: MIT
// The JSON report as text without the per-rank step items as a document (issue 22): a job of
// 1,024 ranks and thousands of steps has millions of them, and nlohmann's document costs about
// four times their text. The document is built with a placeholder per rank, dumped, and each
// placeholder replaced by that rank's items dumped one by one, indented as dump(2) would.
#include <algorithm>

#include "hpcprof/report/printable.hpp"
#include "hpcprof/report/report_json.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

namespace {

/// The spaces that start the line holding `at`.
size_t indentOfLine(const std::string& text, size_t at) {
    const size_t begin = text.rfind('\n', at);
    size_t i = begin == std::string::npos ? 0 : begin + 1;
    size_t n = 0;
    while (i + n < text.size() && text[i + n] == ' ') ++n;
    return n;
}

/// A rank's step items as dump(2) writes the array whose key is indented by `indent`.
void appendItems(std::string& out, const analyzer::RankSteps& r, size_t indent) {
    if (r.steps.empty()) {
        out += "[]";
        return;
    }
    const std::string inner(indent + 2, ' ');
    out += "[\n";
    for (size_t i = 0; i < r.steps.size(); ++i) {
        if (i) out += ",\n";
        const std::string one = rankStepJson(r.steps[i], i).dump(2);
        out += inner;
        for (char c : one) {
            out += c;
            if (c == '\n') out += inner;
        }
    }
    out += '\n';
    out.append(indent, ' ');
    out += ']';
}

} // namespace

std::string jsonReportText(const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                           const std::string& hpcprofVersion) {
    std::string skeleton;
    {
        nlohmann::json doc = reportJson(a, false);
        addGates(doc, gates);
        if (!hpcprofVersion.empty()) doc["hpcprof_version"] = hpcprofVersion;
        makePrintable(doc); // nlohmann's dump() throws on bytes that are not UTF-8
        skeleton = doc.dump(2);
    }
    std::string out;
    size_t items = 0, itemText = 0;
    for (const auto& r : a.steps.ranks) {
        if (!itemText && !r.steps.empty()) { // its text, each line indented (at most 16 spaces deep)
            const std::string one = rankStepJson(r.steps.front(), 0).dump(2);
            itemText = one.size() + size_t(std::count(one.begin(), one.end(), '\n') + 1) * 16 + 4;
        }
        items += r.steps.size();
    }
    out.reserve(skeleton.size() + items * itemText); // growing would hold the text twice for a moment
    size_t pos = 0;
    for (size_t k = 0; k < a.steps.ranks.size(); ++k) {
        // With its key: a string of the trace that spells the placeholder is escaped differently.
        const std::string token = "\"items\": \"" + stepItemsPlaceholder(k) + "\"";
        const size_t at = skeleton.find(token, pos);
        if (at == std::string::npos) break;
        out.append(skeleton, pos, at - pos);
        out += "\"items\": ";
        appendItems(out, a.steps.ranks[k], indentOfLine(skeleton, at));
        pos = at + token.size();
    }
    out.append(skeleton, pos);
    out += '\n';
    return out;
}

} // namespace hpcprof::report::detail
