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
    explicit IoScan(const TraceIndex& index) : m_index(index) {}

    void onEvent(const EventRecord& e, const EventContext& ctx) override {
        topFiles.add(e.objectId, e.dur, e.bytes);
        // The rules look at the program's own files only: start-up reads of /sys, /proc and
        // configuration files by the MPI library are not its I/O (file_class.hpp).
        if (m_index.objectClass(e.objectId) != FileClass::Data) return;
        if (ctx.reference) m_dataIo.add(e.ts, e.end());
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
        m_dataIo.normalize();
        f.dataIoExposedNs += m_dataIo.intersect(end.exposedIo).length();
        // Freed, not cleared: the scan lives until the ranks are combined, one per rank, and a
        // cleared set keeps its storage (about 16 bytes an I/O call of the rank).
        m_dataIo = IntervalSet();
        if (!m_examples.empty()) f.examples["small_io"] = std::move(m_examples);
    }

    TopAccumulator topFiles;

private:
    const TraceIndex& m_index;
    IntervalSet m_dataIo; ///< the reference timeline's I/O on data files
    int64_t m_calls = 0, m_bytes = 0, m_smallCalls = 0, m_smallNs = 0;
    std::vector<int64_t> m_examples;
};

/// Files of one class, with their totals.
TopAccumulator filesOfClass(const TopAccumulator& all, const TraceIndex& index, bool data) {
    TopAccumulator out;
    for (const auto& [id, item] : all.items) {
        FileClass c = index.objectClass(id);
        if ((c == FileClass::Data) != data) continue;
        TopItem& t = out.items.emplace(id, item).first->second;
        t.fileClass = c;
    }
    return out;
}

std::vector<FileClassIo> totalsByClass(const TopAccumulator& all, const TraceIndex& index) {
    std::vector<FileClassIo> byClass(kFileClassCount);
    for (int c = 0; c < kFileClassCount; ++c) byClass[size_t(c)].fileClass = FileClass(c);
    for (const auto& [id, item] : all.items) {
        FileClassIo& t = byClass[size_t(index.objectClass(id))];
        ++t.files;
        t.calls += item.count;
        t.ns += item.totalNs;
        t.bytes += item.bytes;
    }
    std::erase_if(byClass, [](const FileClassIo& t) { return t.calls == 0; });
    return byClass;
}

class IoAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return "io"; }
    std::vector<Category> categories() const override { return categoriesOfClass("io"); }
    std::unique_ptr<RankScan> rankScan(const Trace&, const TraceIndex& index) const override {
        return std::make_unique<IoScan>(index);
    }
    Status combine(AnalysisContext& ctx, std::vector<std::unique_ptr<RankScan>>& scans,
                   Analysis& an) const override {
        TopAccumulator all;
        for (auto& s : scans) all.merge(static_cast<IoScan&>(*s).topFiles);
        auto name = [&](int64_t id) { return id < 0 ? std::string("(no file)") : ctx.index.objectName(id); };
        // The program's data files lead; the top files of the other classes follow.
        an.topFiles = filesOfClass(all, ctx.index, true).top(ctx.options.topItems, name);
        for (TopItem& t : filesOfClass(all, ctx.index, false).top(ctx.options.topItems, name))
            an.topFiles.push_back(std::move(t));
        an.ioByClass = totalsByClass(all, ctx.index);
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::ioRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeIoAnalysis() { return std::make_unique<IoAnalysis>(); }

} // namespace hpcprof::analyzer
