// SPDX-License-Identifier: MIT
#include "models/class_mipmap.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <QStringList>

#include "models/class_colors.hpp"

namespace hpcprof::gui {

using analyzer::kTimeClassCount;
using analyzer::TimeClass;

uint64_t nextStripSerial() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

void ShareStrip::sharesIn(int64_t t0, int64_t t1, double out[kTimeClassCount]) const {
    std::fill(out, out + kTimeClassCount, 0.0);
    if (t1 <= t0 || buckets <= 0) return;
    const int64_t end = begin + bucketNs * buckets;
    const int64_t a = std::max(t0, begin), e = std::min(t1, end);
    if (e <= a) return;
    const double span = double(t1 - t0);
    const int64_t first = (a - begin) / bucketNs;
    if ((e - 1 - begin) / bucketNs == first) { // within one bucket (zoomed in): its shares
        const uint8_t* s = &share[size_t(first) * kTimeClassCount];
        const double w = double(e - a) / span / 255.0;
        for (int c = 0; c < kTimeClassCount; ++c) out[c] = w * s[c];
        return;
    }
    const double perNs = 1.0 / (span * 255.0);
    for (int64_t b = first, bb = begin + first * bucketNs; b < buckets && bb < e; ++b, bb += bucketNs) {
        const double w = double(std::min(bb + bucketNs, e) - std::max(bb, a)) * perNs;
        const uint8_t* s = &share[size_t(b) * kTimeClassCount];
        for (int c = 0; c < kTimeClassCount; ++c) out[c] += w * s[c];
    }
}

double ShareStrip::shareIn(int64_t t0, int64_t t1, TimeClass c) const {
    double all[kTimeClassCount];
    sharesIn(t0, t1, all);
    return all[int(c)];
}

QString sharesText(const ShareStrip& s, int64_t t0, int64_t t1) {
    double sh[kTimeClassCount];
    s.sharesIn(t0, t1, sh);
    std::vector<int> order;
    for (int c = 0; c < kTimeClassCount; ++c)
        if (sh[c] >= 0.005) order.push_back(c);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sh[a] > sh[b]; });
    QStringList parts;
    for (int c : order)
        parts << QStringLiteral("%1 %2 %").arg(QLatin1String(analyzer::timeClassName(TimeClass(c)))).arg(std::lround(100 * sh[c]));
    return parts.join(QStringLiteral(", "));
}

void blendBuckets(ShareStrip& s) {
    QRgb colors[kTimeClassCount];
    for (int k = 0; k < kTimeClassCount; ++k) colors[k] = timeClassColor(TimeClass(k)).rgb();
    const QRgb idle = colors[int(TimeClass::Idle)];
    s.blend.resize(size_t(s.buckets));
    s.onlyIdle = true;
    for (int b = 0; b < s.buckets; ++b) {
        const uint8_t* sh = &s.share[size_t(b) * kTimeClassCount];
        int r = 0, g = 0, bl = 0, sum = 0;
        for (int k = 0; k < kTimeClassCount; ++k) {
            r += sh[k] * qRed(colors[k]);
            g += sh[k] * qGreen(colors[k]);
            bl += sh[k] * qBlue(colors[k]);
            sum += sh[k];
        }
        s.onlyIdle = s.onlyIdle && sh[int(TimeClass::Idle)] == sum;
        const int rest = std::max(0, 255 - sum); // uncovered: idle
        s.blend[size_t(b)] = qRgb((r + rest * qRed(idle) + 127) / 255, (g + rest * qGreen(idle) + 127) / 255,
                                  (bl + rest * qBlue(idle) + 127) / 255);
    }
}

ShareStrip toShareStrip(const analyzer::ClassBuckets& b) {
    ShareStrip s;
    s.begin = b.begin;
    s.bucketNs = b.bucketNs;
    s.buckets = b.buckets;
    s.share = analyzer::quantizeShares(b);
    blendBuckets(s);
    return s;
}

namespace {
std::shared_ptr<ClassMipmap> emptyMipmap(int64_t begin, int64_t end) {
    auto m = std::make_shared<ClassMipmap>();
    const analyzer::ClassSummary grid = analyzer::summaryGrid(begin, end);
    m->begin = grid.begin;
    m->buckets = grid.buckets;
    m->bucketNs = grid.bucketNs;
    return m;
}

/// Each process of a rank shares its rank's summary strip.
void assignGroups(ClassMipmap& m, const analyzer::ClassShareQuery& query, const analyzer::TraceIndex& index,
                  const std::unordered_map<int64_t, ShareStripPtr>& byRank) {
    for (const auto& p : index.processes())
        if (auto r = query.rankOfProcess(p.id); r && byRank.count(*r)) m.groups[p.id] = byRank.at(*r);
}

double msSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

std::shared_ptr<ClassMipmap> mipmapOf(analyzer::ClassSummary&& summary) {
    auto m = std::make_shared<ClassMipmap>();
    m->begin = summary.begin;
    m->bucketNs = summary.bucketNs;
    m->buckets = summary.buckets;
    for (auto* from : {&summary.groups, &summary.tracks}) {
        auto& to = from == &summary.groups ? m->groups : m->tracks;
        for (auto& [id, shares] : *from) {
            auto s = std::make_shared<ShareStrip>();
            s->begin = m->begin;
            s->bucketNs = m->bucketNs;
            s->buckets = m->buckets;
            s->share = std::move(shares);
            blendBuckets(*s);
            to[id] = std::move(s);
        }
    }
    return m;
}

Result<std::shared_ptr<ClassMipmap>> buildClassMipmap(analyzer::ClassShareQuery& query,
                                                      const analyzer::TraceIndex& index, int64_t begin,
                                                      int64_t end, int threads) {
    const auto start = std::chrono::steady_clock::now();
    auto summary = analyzer::buildClassSummary(query, index, begin, end, threads);
    if (!summary) return summary.status();
    auto m = mipmapOf(std::move(*summary));
    m->buildMs = msSince(start);
    return m;
}

Result<std::shared_ptr<ClassMipmap>> buildClassMipmapByRank(analyzer::ClassShareQuery& query,
                                                            const analyzer::TraceIndex& index, int64_t begin,
                                                            int64_t end) {
    const auto start = std::chrono::steady_clock::now();
    auto m = emptyMipmap(begin, end);
    std::unordered_map<int64_t, ShareStripPtr> byRank;
    for (int64_t r : query.ranks()) {
        auto rb = query.rank(r, m->begin, m->bucketNs, m->buckets, true);
        if (!rb) return rb.status();
        byRank[r] = std::make_shared<ShareStrip>(toShareStrip(rb->summary));
        for (const auto& [track, cb] : rb->tracks) m->tracks[track] = std::make_shared<ShareStrip>(toShareStrip(cb));
    }
    assignGroups(*m, query, index, byRank);
    m->buildMs = msSince(start);
    return m;
}

std::string mipmapCachePath(const std::string& tracePath) { return analyzer::classSummaryPath(tracePath); }

std::shared_ptr<ClassMipmap> readMipmapCache(const std::string& tracePath) {
    auto kept = analyzer::readClassSummary(tracePath);
    if (!kept) return nullptr;
    auto m = mipmapOf(std::move(*kept));
    m->fromCache = true;
    return m;
}

} // namespace hpcprof::gui
