// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/class_summary.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "hpcprof/analyzer/event_query.hpp"
#include "hpcprof/schema/output_file.hpp"

namespace hpcprof::analyzer {

ClassSummary::Shares quantizeShares(const ClassBuckets& b) {
    ClassSummary::Shares out(b.ns.size(), 0);
    for (int k = 0; k < b.buckets; ++k) {
        int64_t cum = 0;
        int prev = 0;
        for (int c = 0; c < kTimeClassCount; ++c) {
            cum += b.at(k, TimeClass(c));
            const int q = int((cum * 255 + b.bucketNs / 2) / b.bucketNs);
            out[size_t(k) * kTimeClassCount + size_t(c)] = uint8_t(std::clamp(q - prev, 0, 255));
            prev = std::max(prev, q);
        }
    }
    return out;
}

ClassSummary summaryGrid(int64_t begin, int64_t end) {
    ClassSummary s;
    s.begin = begin;
    s.buckets = ClassSummary::kBuckets;
    s.bucketNs = std::max<int64_t>(1, (end - begin + s.buckets - 1) / s.buckets);
    return s;
}

Result<ClassSummary> buildClassSummary(ClassShareQuery& query, const TraceIndex& index, int64_t begin, int64_t end,
                                       int threads) {
    ClassSummary s = summaryGrid(begin, end);
    std::unordered_map<int64_t, ClassSummary::Shares> byRank;
    std::mutex mutex;
    // Quantised on the worker that measured the rank; only the maps are shared.
    auto sink = [&](RankClassBuckets&& rb) {
        ClassSummary::Shares summary = quantizeShares(rb.summary);
        std::vector<std::pair<int64_t, ClassSummary::Shares>> tracks;
        for (const auto& [track, cb] : rb.tracks) tracks.emplace_back(track, quantizeShares(cb));
        std::lock_guard lock(mutex);
        byRank[rb.rank] = std::move(summary);
        for (auto& [track, sh] : tracks) s.tracks[track] = std::move(sh);
    };
    HPCPROF_RETURN_IF_ERROR(query.allRanks(s.begin, s.bucketNs, s.buckets, true, threads, sink));
    // Each process of a rank (an exec'ed image keeps its rank) shows its rank's summary.
    for (const auto& p : index.processes())
        if (auto r = query.rankOfProcess(p.id); r && byRank.count(*r)) s.groups[p.id] = byRank.at(*r);
    return s;
}

// ---- the file next to the trace -----------------------------------------------------------
// Layout (native byte order; the file never leaves the machine that wrote it): the magic, the
// trace's size and mtime (ns) it was built from, the grid (begin, bucketNs, buckets), then
// records (kind: 0 group / 1 track, id, buckets * kTimeClassCount shares), then the end mark 2.

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

/// The header: the magic, the trace's stamp (must match `want`) and the grid.
bool readHeader(File& in, const FileStamp& want, ClassSummary& s) {
    char magic[sizeof kMagic];
    FileStamp have;
    if (std::fread(magic, 1, sizeof magic, in.f) != sizeof magic || std::memcmp(magic, kMagic, sizeof magic) != 0)
        return false;
    if (!in.get(have.size) || !in.get(have.mtimeNs) || have.size != want.size || have.mtimeNs != want.mtimeNs)
        return false;
    return in.get(s.begin) && in.get(s.bucketNs) && in.get(s.buckets) && s.buckets > 0 && s.buckets <= (1 << 20) &&
           s.bucketNs > 0;
}

/// One record into `s`; `done` at the end mark.
bool readRecord(File& in, ClassSummary& s, bool& done) {
    uint8_t kind = 0;
    int64_t id = 0;
    if (!in.get(kind)) return false;
    if (kind == 2) return done = true;
    if (kind > 1 || !in.get(id)) return false;
    ClassSummary::Shares sh(size_t(s.buckets) * kTimeClassCount);
    if (std::fread(sh.data(), 1, sh.size(), in.f) != sh.size()) return false;
    (kind == 0 ? s.groups : s.tracks)[id] = std::move(sh);
    return true;
}

bool writeRecord(File& out, uint8_t kind, int64_t id, const ClassSummary::Shares& sh, size_t want) {
    return sh.size() == want && out.put(kind) && out.put(id) && std::fwrite(sh.data(), 1, sh.size(), out.f) == sh.size();
}

bool writeBody(File& out, const FileStamp& stamp, const ClassSummary& s) {
    bool ok = std::fwrite(kMagic, 1, sizeof kMagic, out.f) == sizeof kMagic && out.put(stamp.size) &&
              out.put(stamp.mtimeNs) && out.put(s.begin) && out.put(s.bucketNs) && out.put(s.buckets);
    const size_t want = size_t(s.buckets) * kTimeClassCount;
    for (const auto& [id, sh] : s.groups) ok = ok && writeRecord(out, 0, id, sh, want);
    for (const auto& [id, sh] : s.tracks) ok = ok && writeRecord(out, 1, id, sh, want);
    return ok && out.put(uint8_t(2)) && std::fflush(out.f) == 0;
}
} // namespace

std::string classSummaryPath(const std::string& tracePath) { return tracePath + ".lanes"; }

std::optional<ClassSummary> readClassSummary(const std::string& tracePath) {
    struct stat trace {};
    if (::stat(tracePath.c_str(), &trace) != 0) return std::nullopt;
    const FileStamp want = stampOf(tracePath);
    // Never through a link, and only a file of the trace's owner: in a shared folder nobody else
    // can put colours under someone's trace.
    const int fd = ::open(classSummaryPath(tracePath).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat own {};
    if (::fstat(fd, &own) != 0 || !S_ISREG(own.st_mode) || own.st_uid != trace.st_uid) {
        ::close(fd);
        return std::nullopt;
    }
    File in{::fdopen(fd, "rb")};
    if (!in.f) {
        ::close(fd);
        return std::nullopt;
    }
    ClassSummary s;
    if (!readHeader(in, want, s)) return std::nullopt;
    for (bool done = false; !done;)
        if (!readRecord(in, s, done)) return std::nullopt;
    return s;
}

bool writeClassSummary(const std::string& tracePath, const ClassSummary& s) {
    const FileStamp stamp = stampOf(tracePath);
    if (stamp.size < 0) return false;
    // Written in a private folder and renamed into place (schema::PendingOutput): a reader never
    // sees a half-written file, and no link planted in a shared folder redirects the write.
    auto pending = schema::PendingOutput::begin(classSummaryPath(tracePath), true);
    if (!pending) return false;
    bool ok = false;
    {
        File out{std::fopen(pending->path().c_str(), "wb")};
        ok = out.f && writeBody(out, stamp, s);
    }
    return ok && pending->commit().ok();
}

Status keepClassSummary(const std::string& tracePath, int threads) {
    // The interval sets of a rank are large and short-lived: without this each worker's arena
    // was trimmed and faulted back in rank after rank (a quarter of the CPU time at 64 ranks x
    // 10 M events). The convert paths exit soon after, so the heap they keep costs nothing.
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    auto trace = Trace::open(tracePath);
    if (!trace) return trace.status();
    auto index = TraceIndex::load(*trace);
    if (!index) return index.status();
    auto bounds = traceTimeBounds(*trace, *index);
    if (!bounds) return bounds.status();
    auto query = ClassShareQuery::open(*trace, *index);
    if (!query) return query.status();
    auto summary = buildClassSummary(**query, *index, bounds->begin, bounds->end, threads);
    if (!summary) return summary.status();
    if (!writeClassSummary(tracePath, *summary))
        return Status::error("cannot write " + classSummaryPath(tracePath));
    return {};
}

} // namespace hpcprof::analyzer
