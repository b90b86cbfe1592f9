// SPDX-License-Identifier: MIT
#include "hpcprof/report/gates.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace hpcprof::report {

const char* gateOpText(GateOp op) {
    switch (op) {
    case GateOp::Greater: return ">";
    case GateOp::GreaterEqual: return ">=";
    case GateOp::Less: return "<";
    case GateOp::LessEqual: return "<=";
    case GateOp::Equal: return "==";
    case GateOp::NotEqual: return "!=";
    }
    return ">";
}

Result<Gate> parseGate(const std::string& text) {
    auto bad = [&](const std::string& why) {
        return Status::error("--fail-on '" + text + "': " + why +
                             " (expected METRIC OP NUMBER, e.g. 'comm.exposed_pct > 25'; OP is one of"
                             " > >= < <= == !=)");
    };
    size_t i = 0;
    auto skipSpace = [&] {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    skipSpace();
    size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.'))
        ++i;
    Gate g;
    g.text = text;
    g.metric = text.substr(start, i - start);
    if (g.metric.empty() || g.metric.front() == '.' || g.metric.back() == '.') return bad("no metric name");
    skipSpace();
    static const std::pair<const char*, GateOp> kOps[] = {
        {">=", GateOp::GreaterEqual}, {"<=", GateOp::LessEqual}, {"==", GateOp::Equal},
        {"!=", GateOp::NotEqual},     {">", GateOp::Greater},     {"<", GateOp::Less}};
    bool found = false;
    for (const auto& [s, op] : kOps) {
        if (text.compare(i, std::char_traits<char>::length(s), s) == 0) {
            g.op = op;
            i += std::char_traits<char>::length(s);
            found = true;
            break;
        }
    }
    if (!found) return bad("no comparison operator");
    skipSpace();
    std::string number = text.substr(i);
    while (!number.empty() && std::isspace(static_cast<unsigned char>(number.back()))) number.pop_back();
    if (number.empty()) return bad("no number");
    size_t used = 0;
    try {
        g.threshold = std::stod(number, &used);
    } catch (const std::invalid_argument&) { // no number
        return bad("'" + number + "' is not a number");
    } catch (const std::out_of_range&) { // beyond double
        return bad("'" + number + "' is not a number");
    }
    if (used != number.size() || !std::isfinite(g.threshold)) return bad("'" + number + "' is not a number");
    return g;
}

namespace {
const nlohmann::json* walk(const nlohmann::json& doc, const std::string& path) {
    const nlohmann::json* cur = &doc;
    size_t pos = 0;
    while (pos <= path.size()) {
        size_t dot = path.find('.', pos);
        std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        if (cur->is_object()) {
            auto it = cur->find(part);
            if (it == cur->end()) return nullptr;
            cur = &*it;
        } else if (cur->is_array()) {
            // Array elements by index, e.g. ranks.3.comm_ns.
            size_t k = 0;
            auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), k);
            // Not an index, or beyond 64 bits (std::stoul would throw): no such metric.
            if (part.empty() || ec != std::errc() || end != part.data() + part.size() ||
                k >= cur->size())
                return nullptr;
            cur = &(*cur)[k];
        } else {
            return nullptr;
        }
        if (dot == std::string::npos) break;
        pos = dot + 1;
    }
    return cur;
}
} // namespace

std::optional<double> lookupMetric(const nlohmann::json& doc, const std::string& metric) {
    for (const std::string& path : {metric, "summary." + metric}) {
        const nlohmann::json* v = walk(doc, path);
        if (v && v->is_number()) return v->get<double>();
        if (v && v->is_boolean()) return v->get<bool>() ? 1.0 : 0.0;
    }
    return std::nullopt;
}

Result<std::vector<GateResult>> evaluateGates(const nlohmann::json& doc, const std::vector<Gate>& gates) {
    std::vector<GateResult> out;
    for (const Gate& g : gates) {
        auto v = lookupMetric(doc, g.metric);
        if (!v)
            return Status::error("--fail-on '" + g.text + "': no numeric metric '" + g.metric +
                                 "' in the report (see docs/report-schema.json; e.g. comm.exposed_pct,"
                                 " io.exposed_pct, pop.load_balance)");
        GateResult r;
        r.gate = g;
        r.value = *v;
        switch (g.op) {
        case GateOp::Greater: r.failed = *v > g.threshold; break;
        case GateOp::GreaterEqual: r.failed = *v >= g.threshold; break;
        case GateOp::Less: r.failed = *v < g.threshold; break;
        case GateOp::LessEqual: r.failed = *v <= g.threshold; break;
        case GateOp::Equal: r.failed = *v == g.threshold; break;
        case GateOp::NotEqual: r.failed = *v != g.threshold; break;
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace hpcprof::report
