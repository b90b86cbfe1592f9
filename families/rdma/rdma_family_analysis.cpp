// SPDX-License-Identifier: MIT
// The rdma family's part of the analysis: the traffic of the nic_queue tracks (per queue pair
// and rank: bandwidth against the link rate, small work requests, completion latency;
// rdma_analysis.hpp). Rules: small messages, low bandwidth.
#include "family_analysis.hpp"
#include "rdma_analysis.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> rdmaRules(); // rdma_rules.cpp
}

namespace {

class RdmaAnalysisFamily final : public AnalysisFamily {
public:
    std::string_view name() const override { return "rdma"; }
    Status conclude(AnalysisContext& ctx, Analysis& an) const override {
        auto rdma = analyzeRdma(ctx.trace);
        if (!rdma) return rdma.status();
        an.rdma = std::move(rdma.value());
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::rdmaRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeRdmaAnalysis() { return std::make_unique<RdmaAnalysisFamily>(); }

} // namespace hpcprof::analyzer
