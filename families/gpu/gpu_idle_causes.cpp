// SPDX-License-Identifier: MIT
#include "gpu_idle_causes.hpp"

#include <algorithm>

namespace hpcprof::analyzer {

namespace {

using schema::Category;
constexpr size_t kLongestGaps = 5;

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

} // namespace

/// Adds the time of `pieces` (sorted, disjoint) inside [begin, end) to `byCause`.
void addCausesIn(const std::vector<GpuIdlePiece>& pieces, int64_t begin, int64_t end,
                 std::array<int64_t, kGpuIdleCauseCount>& byCause) {
    auto p = std::lower_bound(pieces.begin(), pieces.end(), begin,
                              [](const GpuIdlePiece& x, int64_t t) { return x.end <= t; });
    for (; p != pieces.end() && p->begin < end; ++p)
        byCause[size_t(p->cause)] += std::min(p->end, end) - std::max(p->begin, begin);
}

std::vector<GpuIdleCause> causesByTime(const std::array<int64_t, kGpuIdleCauseCount>& byCause) {
    std::vector<GpuIdleCause> order;
    for (int c = 0; c < kGpuIdleCauseCount; ++c)
        if (byCause[size_t(c)] > 0) order.push_back(GpuIdleCause(c));
    std::stable_sort(order.begin(), order.end(),
                     [&](GpuIdleCause x, GpuIdleCause y) { return byCause[size_t(x)] > byCause[size_t(y)]; });
    return order;
}

const char* gpuIdleCauseName(GpuIdleCause c) {
    switch (c) {
    case GpuIdleCause::KernelWait: return "kernel_wait";
    case GpuIdleCause::Input: return "input";
    case GpuIdleCause::Communication: return "communication";
    case GpuIdleCause::Sync: return "sync";
    case GpuIdleCause::Memcpy: return "memcpy";
    case GpuIdleCause::Launch: return "launch";
    case GpuIdleCause::Host: return "host";
    }
    return "host";
}

/// What a name says about waiting, computed once per name. PyTorch names the wait for a batch
/// after the loader: "enumerate(DataLoader)#..." (profiler ranges) and
/// "..._MultiProcessingDataLoaderIter.__next__" (its Python functions).
int8_t GpuIdleCauses::nameKind(int64_t nameId) {
    if (nameId < 0 || nameId >= (int64_t(1) << 31)) return kPlain;
    if (size_t(nameId) >= m_nameKinds.size()) m_nameKinds.resize(size_t(nameId) + 1, kUnknown);
    int8_t& kind = m_nameKinds[size_t(nameId)];
    if (kind == kUnknown) {
        const std::string& n = m_index.string(nameId);
        kind = kPlain;
        if (contains(n, "DataLoader")) kind |= kInputRange;
        if (contains(n, "Synchronize") || contains(n, "StreamWaitEvent")) kind |= kSyncApi;
        const bool copy = n.rfind("cudaMemcpy", 0) == 0 || n.rfind("cuMemcpy", 0) == 0;
        if (copy && !contains(n, "Async")) kind |= kCopyApi; // blocking copies
    }
    return kind;
}

/// The cause an event of a CPU track stands for (Host: it says nothing about waiting).
GpuIdleCause GpuIdleCauses::hostCause(const EventRecord& e) {
    switch (Category(e.categoryId)) {
    case Category::FdWait:
    case Category::ProcessWait: return GpuIdleCause::Input;
    case Category::GpuSync: return GpuIdleCause::Sync;
    case Category::CudaApi: {
        const int8_t k = nameKind(e.nameId);
        return (k & kCopyApi) ? GpuIdleCause::Memcpy : (k & kSyncApi) ? GpuIdleCause::Sync : GpuIdleCause::Launch;
    }
    default: break;
    }
    switch (e.cls) {
    case EventClass::Io: return GpuIdleCause::Input;
    case EventClass::Communication:
    case EventClass::Setup: return GpuIdleCause::Communication;
    case EventClass::Sync: return GpuIdleCause::Sync;
    case EventClass::Annotation: return (nameKind(e.nameId) & kInputRange) ? GpuIdleCause::Input : GpuIdleCause::Host;
    default: return GpuIdleCause::Host;
    }
}

void GpuIdleCauses::beginTrack(const TrackInfo& t) {
    // One look at the track list per process of the rank, not per track.
    if (m_processHasGpu || t.processId == m_checkedProcess) return;
    m_checkedProcess = t.processId;
    for (const TrackInfo& other : m_index.tracks())
        if (other.processId == t.processId && other.kind == TrackKind::GpuStream) m_processHasGpu = true;
}

void GpuIdleCauses::onEvent(const EventRecord& e, bool gpuTrack) {
    if (!m_processHasGpu) return;
    if (gpuTrack) {
        if (e.correlationId >= 0) m_deviceStart.emplace_back(e.correlationId, e.ts);
        return;
    }
    if (Category(e.categoryId) == Category::CudaApi && e.correlationId >= 0) {
        int64_t& end = m_launchEnd[e.correlationId];
        end = std::max(end, e.end());
    }
    const GpuIdleCause c = hostCause(e);
    if (c != GpuIdleCause::Host) m_host[size_t(c)].add(e.ts, e.end());
}

/// Adds a cause's pieces, keeping all pieces by time: each cause's are sorted and disjoint
/// from the others', so a merge gives the order a sort would, in linear time.
void GpuIdleCauses::addPieces(const IntervalSet& part, GpuIdleCause cause) {
    const auto mid = std::ptrdiff_t(result.pieces.size());
    for (const auto& iv : part.items()) result.pieces.push_back({iv.begin, iv.end, cause});
    std::inplace_merge(result.pieces.begin(), result.pieces.begin() + mid, result.pieces.end(),
                       [](const GpuIdlePiece& a, const GpuIdlePiece& b) { return a.begin < b.begin; });
}

/// Every idle instant to the first cause that holds then; the longest gaps with their main cause.
void GpuIdleCauses::classify(const IntervalSet& idle) {
    IntervalSet left = idle;
    for (int c = 0; c < kGpuIdleCauseCount - 1; ++c) {
        m_host[size_t(c)].normalize();
        const IntervalSet part = left.intersect(m_host[size_t(c)]);
        result.byCause[size_t(c)] = part.length();
        addPieces(part, GpuIdleCause(c));
        left = left.subtract(part);
    }
    result.byCause[size_t(GpuIdleCause::Host)] = left.length();
    addPieces(left, GpuIdleCause::Host);
    // Every rank's pieces are kept until the steps are known (conclude()): not the growth's
    // spare capacity, up to as much again.
    result.pieces.shrink_to_fit();
}

void GpuIdleCauses::finish(const RankEnd& end) {
    result.rank = end.breakdown.rank;
    if (!end.breakdown.gpu) return;
    // Launched but not started: from the launch call's end to the activity's start.
    IntervalSet& queued = m_host[size_t(GpuIdleCause::KernelWait)];
    for (const auto& [corr, start] : m_deviceStart)
        if (auto it = m_launchEnd.find(corr); it != m_launchEnd.end()) queued.add(it->second, start);
    result.idleNs = end.gpuIdle.length();
    classify(end.gpuIdle);
    // The longest gaps, each with the cause of most of it.
    std::vector<Interval> gaps = end.gpuIdle.items();
    const size_t n = std::min(kLongestGaps, gaps.size());
    std::partial_sort(gaps.begin(), gaps.begin() + std::ptrdiff_t(n), gaps.end(),
                      [](const Interval& a, const Interval& b) { return a.length() > b.length(); });
    for (size_t i = 0; i < n; ++i) {
        std::array<int64_t, kGpuIdleCauseCount> share{};
        addCausesIn(result.pieces, gaps[i].begin, gaps[i].end, share);
        const auto main = std::max_element(share.begin(), share.end()) - share.begin();
        result.longestGaps.push_back({gaps[i].begin, gaps[i].end, GpuIdleCause(main)});
    }
    m_host.clear();
    release(m_launchEnd);
    release(m_deviceStart);
}

std::vector<GpuIdleStep> idleBySteps(const std::vector<GpuIdleRank>& ranks, const StepStats& steps) {
    std::vector<GpuIdleStep> out;
    for (const Step& st : steps.steps) {
        GpuIdleStep s;
        s.index = st.index;
        s.spanNs = (st.end - st.begin) * int64_t(ranks.size());
        for (const GpuIdleRank& r : ranks) addCausesIn(r.pieces, st.begin, st.end, s.byCause);
        for (int64_t ns : s.byCause) s.idleNs += ns;
        out.push_back(s);
    }
    return out;
}

} // namespace hpcprof::analyzer
