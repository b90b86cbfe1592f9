// SPDX-License-Identifier: MIT
// The io family's part of the analysis: every call of class io (POSIX, stdio, MPI-IO). Per rank
// the data calls' counts, bytes and small requests; across ranks the top files. Rules: exposed
// I/O, small requests.
#include "family_analysis.hpp"
#include "name_flags.hpp"
#include "thresholds.hpp"
#include "top_list.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> ioRules(); // io_rules.cpp
}

namespace {

using schema::Category;
constexpr int32_t cat(Category c) { return int32_t(c); }

class IoScan final : public RankScan {
public:
    void onEvent(const EventRecord& e, const EventContext& ctx) override {
        topFiles.add(e.objectId, e.dur, e.bytes);
        // Only POSIX and MPI-IO data calls count: stdio is already buffered by the C library.
        const bool dataCall = (e.categoryId == cat(Category::PosixIo) || e.categoryId == cat(Category::MpiIo)) &&
                              (ctx.nameFlags & kIoDataCall);
        if (!dataCall) return;
        m_calls += e.count;
        if (e.bytes > 0) m_bytes += e.bytes;
        if (e.bytes >= 0 && e.bytes < threshold::kSmallRequestBytes) {
            m_smallCalls += e.count;
            m_smallNs += e.dur;
            if (m_examples.size() < 3) m_examples.push_back(e.id);
        }
    }

    void finish(const RankEnd& end) override {
        RankFacts& f = end.breakdown.facts;
        f.ioCalls += m_calls;
        f.ioBytes += m_bytes;
        f.smallIoCalls += m_smallCalls;
        f.smallIoNs += m_smallNs;
        if (!m_examples.empty()) f.examples["small_io"] = std::move(m_examples);
    }

    TopAccumulator topFiles;

private:
    int64_t m_calls = 0, m_bytes = 0, m_smallCalls = 0, m_smallNs = 0;
    std::vector<int64_t> m_examples;
};

class IoAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return "io"; }
    std::vector<Category> categories() const override { return categoriesOfClass("io"); }
    std::unique_ptr<RankScan> rankScan(const Trace&, const TraceIndex&) const override {
        return std::make_unique<IoScan>();
    }
    Status combine(AnalysisContext& ctx, std::vector<std::unique_ptr<RankScan>>& scans,
                   Analysis& an) const override {
        TopAccumulator top;
        for (auto& s : scans) top.merge(static_cast<IoScan&>(*s).topFiles);
        an.topFiles = top.top(ctx.options.topItems, [&](int64_t id) {
            return id < 0 ? std::string("(no file)") : ctx.index.objectName(id);
        });
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::ioRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeIoAnalysis() { return std::make_unique<IoAnalysis>(); }

} // namespace hpcprof::analyzer
