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
std::string itemsText(const analyzer::RankSteps& r, size_t indent) {
    if (r.steps.empty()) return "[]";
    const std::string inner(indent + 2, ' ');
    std::string out = "[\n";
    for (size_t i = 0; i < r.steps.size(); ++i) {
        if (i) out += ",\n";
        const std::string one = rankStepJson(r.steps[i]).dump(2);
        out += inner;
        for (char c : one) {
            out += c;
            if (c == '\n') out += inner;
        }
    }
    out += '\n';
    out.append(indent, ' ');
    out += ']';
    return out;
}

} // namespace

bool writeJsonReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                     const std::string& hpcprofVersion, const TextSink& sink) {
    std::string skeleton;
    {
        nlohmann::json doc = reportJson(a, false);
        addGates(doc, gates);
        if (!hpcprofVersion.empty()) doc["hpcprof_version"] = hpcprofVersion;
        makePrintable(doc); // nlohmann's dump() throws on bytes that are not UTF-8
        skeleton = doc.dump(2);
    }
    // The skeleton goes out piece by piece, each rank's items in its place: the whole text is
    // never held (hundreds of MB for a 1,024-rank job with thousands of steps).
    size_t pos = 0;
    for (size_t k = 0; k < a.steps.ranks.size(); ++k) {
        // With its key: a string of the trace that spells the placeholder is escaped differently.
        const std::string token = "\"items\": \"" + stepItemsPlaceholder(k) + "\"";
        const size_t at = skeleton.find(token, pos);
        if (at == std::string::npos) break;
        if (!sink(std::string_view(skeleton).substr(pos, at - pos)) || !sink("\"items\": ") ||
            !sink(itemsText(a.steps.ranks[k], indentOfLine(skeleton, at))))
            return false;
        pos = at + token.size();
    }
    return sink(std::string_view(skeleton).substr(pos)) && sink("\n");
}

std::string jsonReportText(const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                           const std::string& hpcprofVersion) {
    std::string out;
    writeJsonReport(a, gates, hpcprofVersion, [&](std::string_view piece) {
        out += piece;
        return true;
    });
    return out;
}

} // namespace hpcprof::report::detail
