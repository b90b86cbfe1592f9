// SPDX-License-Identifier: MIT
#include "models/class_mipmap.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <mutex>

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
    s.share.assign(b.ns.size(), 0);
    for (int k = 0; k < b.buckets; ++k) {
        // Cumulative rounding: the quantised shares of a bucket add up to the rounded total.
        int64_t cum = 0;
        int prev = 0;
        for (int c = 0; c < kTimeClassCount; ++c) {
            cum += b.at(k, TimeClass(c));
            const int q = int((cum * 255 + b.bucketNs / 2) / b.bucketNs);
            s.share[size_t(k) * kTimeClassCount + size_t(c)] = uint8_t(std::clamp(q - prev, 0, 255));
            prev = std::max(prev, q);
        }
    }
    blendBuckets(s);
    return s;
}

namespace {
std::shared_ptr<ClassMipmap> emptyMipmap(int64_t begin, int64_t end) {
    auto m = std::make_shared<ClassMipmap>();
    m->begin = begin;
    m->buckets = ClassMipmap::kMipmapBuckets;
    m->bucketNs = std::max<int64_t>(1, (end - begin + m->buckets - 1) / m->buckets);
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

Result<std::shared_ptr<ClassMipmap>> buildClassMipmap(analyzer::ClassShareQuery& query,
                                                      const analyzer::TraceIndex& index, int64_t begin,
                                                      int64_t end, int threads) {
    const auto start = std::chrono::steady_clock::now();
    auto m = emptyMipmap(begin, end);
    std::unordered_map<int64_t, ShareStripPtr> byRank;
    std::mutex mutex;
    // Quantised on the worker that measured the rank; only the maps are shared.
    auto sink = [&](analyzer::RankClassBuckets&& rb) {
        auto summary = std::make_shared<ShareStrip>(toShareStrip(rb.summary));
        std::vector<std::pair<int64_t, ShareStripPtr>> tracks;
        for (const auto& [track, cb] : rb.tracks) tracks.emplace_back(track, std::make_shared<ShareStrip>(toShareStrip(cb)));
        std::lock_guard lock(mutex);
        byRank[rb.rank] = std::move(summary);
        for (auto& [track, s] : tracks) m->tracks[track] = std::move(s);
    };
    HPCPROF_RETURN_IF_ERROR(query.allRanks(m->begin, m->bucketNs, m->buckets, true, threads, sink));
    assignGroups(*m, query, index, byRank);
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

// ---- cache file ----------------------------------------------------------------------------
// Layout (native byte order; the cache never leaves the machine that wrote it): the magic, the
// trace's size and mtime (ns) it was built from, the grid (begin, bucketNs, buckets), then
// records (kind: 0 group / 1 track, id, buckets * kTimeClassCount shares), then the end mark.

namespace {
constexpr char kMagic[16] = "HPCPROF-LANES-1";

struct FileStamp {
    int64_t size = -1, mtimeNs = 0;
};

FileStamp stampOf(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    return {int64_t(st.st_size), int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

struct File {
    std::FILE* f;
    ~File() {
        if (f) std::fclose(f);
    }
    template <class T> bool put(const T& v) { return std::fwrite(&v, sizeof v, 1, f) == 1; }
    template <class T> bool get(T& v) { return std::fread(&v, sizeof v, 1, f) == 1; }
};

bool readRecord(File& in, const ClassMipmap& m, std::shared_ptr<ClassMipmap>& out, bool& done) {
    uint8_t kind = 0;
    int64_t id = 0;
    if (!in.get(kind)) return false;
    if (kind == 2) return done = true;
    if (kind > 1 || !in.get(id)) return false;
    auto s = std::make_shared<ShareStrip>();
    s->begin = m.begin;
    s->bucketNs = m.bucketNs;
    s->buckets = m.buckets;
    s->share.resize(size_t(m.buckets) * kTimeClassCount);
    if (std::fread(s->share.data(), 1, s->share.size(), in.f) != s->share.size()) return false;
    blendBuckets(*s);
    (kind == 0 ? out->groups : out->tracks)[id] = std::move(s);
    return true;
}
} // namespace

std::string mipmapCachePath(const std::string& tracePath) { return tracePath + ".lanes"; }

namespace {
/// The header: the magic, the trace's stamp (must match `want`) and the grid.
bool readHeader(File& in, const FileStamp& want, ClassMipmap& m) {
    char magic[sizeof kMagic];
    FileStamp have;
    if (std::fread(magic, 1, sizeof magic, in.f) != sizeof magic || std::memcmp(magic, kMagic, sizeof magic) != 0)
        return false;
    if (!in.get(have.size) || !in.get(have.mtimeNs) || have.size != want.size || have.mtimeNs != want.mtimeNs)
        return false;
    return in.get(m.begin) && in.get(m.bucketNs) && in.get(m.buckets) && m.buckets > 0 && m.buckets <= (1 << 20) &&
           m.bucketNs > 0;
}

bool writeBody(File& out, const FileStamp& stamp, const ClassMipmap& m) {
    bool ok = std::fwrite(kMagic, 1, sizeof kMagic, out.f) == sizeof kMagic && out.put(stamp.size) &&
              out.put(stamp.mtimeNs) && out.put(m.begin) && out.put(m.bucketNs) && out.put(m.buckets);
    for (int kind = 0; kind < 2 && ok; ++kind)
        for (const auto& [id, s] : kind == 0 ? m.groups : m.tracks)
            ok = ok && out.put(uint8_t(kind)) && out.put(id) &&
                 std::fwrite(s->share.data(), 1, s->share.size(), out.f) == s->share.size();
    return ok && out.put(uint8_t(2)) && std::fflush(out.f) == 0;
}
} // namespace

std::shared_ptr<ClassMipmap> readMipmapCache(const std::string& tracePath) {
    const FileStamp want = stampOf(tracePath);
    if (want.size < 0) return nullptr;
    File in{std::fopen(mipmapCachePath(tracePath).c_str(), "rb")};
    auto m = std::make_shared<ClassMipmap>();
    if (!in.f || !readHeader(in, want, *m)) return nullptr;
    for (bool done = false; !done;)
        if (!readRecord(in, *m, m, done)) return nullptr;
    m->fromCache = true;
    return m;
}

bool writeMipmapCache(const std::string& tracePath, const ClassMipmap& m) {
    const FileStamp stamp = stampOf(tracePath);
    if (stamp.size < 0) return false;
    // One temporary file per process: two GUIs opening the trace at once never mix their writes.
    const std::string path = mipmapCachePath(tracePath), tmp = path + ".tmp" + std::to_string(::getpid());
    bool ok = false;
    {
        File out{std::fopen(tmp.c_str(), "wb")};
        if (!out.f) return false;
        ok = writeBody(out, stamp, m);
    }
    // Rename: a reader never sees a half-written cache.
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace hpcprof::gui
