// SPDX-License-Identifier: MIT
// Reading what the tests assert on: findings and evidence of `hpcprof report --format json`,
// and the per-rank figures the MPI test programs print about themselves.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace hpcprof::test {

/// The finding with this id, or nullptr when the report has none.
inline const nlohmann::json* findingIn(const nlohmann::json& doc, const std::string& id) {
    for (const auto& f : doc["findings"])
        if (f["id"] == id) return &f;
    return nullptr;
}

/// A named evidence value of a finding; NaN when it has none (so any comparison fails).
inline double evidenceOf(const nlohmann::json& finding, const std::string& name) {
    for (const auto& e : finding["evidence"])
        if (e["name"] == name) return e["value"].get<double>();
    return std::nan("");
}

/// What a test program measured on one rank: "rank R <what>_s S compute_s C calls N".
struct RankMeasured {
    double callsS = 0;   ///< time in the calls the program times (its <what>_s)
    double computeS = 0; ///< its compute_s
    long calls = 0;
    double probeS() const { return callsS; } ///< a program that times probe loops prints probe_s
};

/// Every "rank ..." line of a program's output, by rank.
inline std::map<int64_t, RankMeasured> parseRankLines(const std::string& out) {
    std::map<int64_t, RankMeasured> m;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string word, k1, k2, k3;
        int64_t rank = -1;
        RankMeasured x;
        if (l >> word >> rank >> k1 >> x.callsS >> k2 >> x.computeS >> k3 >> x.calls && word == "rank") m[rank] = x;
    }
    return m;
}

} // namespace hpcprof::test
