// SPDX-License-Identifier: MIT
// Kernel statistics of the two real PyTorch profiler traces in tests/data/kineto (an NCCL
// training job), compared with aggregates computed by SQL over event_view and event_arg of the
// same trace: per kernel name, launch latency (per rank and per name), launch-queue depth,
// copies by direction, and the kernel classes' busy time and overlaps; on the whole trace and in
// a window that cuts through it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "families/gpu/gpu_section.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "tests/unit/import/real_kineto.hpp"
#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using hpcprof::test::TempDir;
using hpcprof::test::TraceQuery;

namespace {

const std::string kDataDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";
const std::string kKernelCats = "('gpu_kernel', 'gpu_comm_kernel', 'compute_range')";

std::string str(int64_t v) { return std::to_string(v); }

/// The SQL condition "event `e` overlaps [t0, t1)" (an instant counts at its ts).
std::string inWindow(const std::string& e, int64_t t0, int64_t t1) {
    return e + ".ts_ns < " + str(t1) + " AND MAX(" + e + ".ts_ns + " + e + ".dur_ns, " + e + ".ts_ns + 1) > " +
           str(t0);
}

std::vector<std::string> split(const std::string& row) {
    std::vector<std::string> out;
    std::stringstream ss(row);
    std::string cell;
    while (std::getline(ss, cell, '|')) out.push_back(cell);
    if (!row.empty() && row.back() == '|') out.emplace_back();
    return out;
}

/// The nearest-rank percentile, as docs/analysis.md defines it.
int64_t percentile(const std::vector<int64_t>& sorted, int p) {
    size_t rank = (size_t(p) * sorted.size() + 99) / 100;
    return sorted[std::max<size_t>(rank, 1) - 1];
}

/// Length of the union of [b, e) intervals (an independent sweep, not the analyzer's sets).
int64_t unionLength(std::vector<std::pair<int64_t, int64_t>> v) {
    std::sort(v.begin(), v.end());
    int64_t total = 0, curB = 0, curE = INT64_MIN;
    for (auto [b, e] : v) {
        if (b > curE) {
            if (curE > curB) total += curE - curB;
            curB = b;
            curE = e;
        } else {
            curE = std::max(curE, e);
        }
    }
    if (curE > curB) total += curE - curB;
    return total;
}

struct Checker {
    const TraceQuery& q;
    int64_t rank, t0, t1;

    std::string gpuEvents(const std::string& cats) const {
        return "FROM event_view e WHERE e.rank = " + str(rank) + " AND e.track_kind = 'gpu_stream' AND e.category IN " +
               cats + " AND " + inWindow("e", t0, t1);
    }

    /// Class intervals clipped to the window.
    std::vector<std::pair<int64_t, int64_t>> intervals(const std::string& cats) const {
        std::vector<std::pair<int64_t, int64_t>> out;
        for (const auto& row : q.rows("SELECT MAX(e.ts_ns, " + str(t0) + "), MIN(e.ts_ns + e.dur_ns, " + str(t1) + ") " +
                                      gpuEvents(cats))) {
            auto c = split(row);
            out.emplace_back(std::stoll(c[0]), std::stoll(c[1]));
        }
        return out;
    }

    void kernelsByName(const GpuKernelRank& r) const {
        auto rows = q.rows("SELECT e.name, COUNT(*), SUM(e.dur_ns), MIN(e.dur_ns), MAX(e.dur_ns), "
                           "SUM(e.dur_ns * e.dur_ns * 1.0) " + gpuEvents(kKernelCats) + " GROUP BY e.name");
        REQUIRE(rows.size() == r.kernels.size());
        std::map<std::string, const KernelNameStats*> byName;
        for (const auto& k : r.kernels) byName[k.name] = &k;
        for (const auto& row : rows) {
            auto c = split(row);
            INFO(c[0]);
            REQUIRE(byName.count(c[0]));
            const KernelNameStats& k = *byName[c[0]];
            const double n = std::stod(c[1]), sum = std::stod(c[2]), sq = std::stod(c[5]);
            CHECK(k.count == std::stoll(c[1]));
            CHECK(k.totalNs == std::stoll(c[2]));
            CHECK(k.minNs == std::stoll(c[3]));
            CHECK(k.maxNs == std::stoll(c[4]));
            CHECK(k.meanNs == Approx(sum / n));
            const double var = n > 1 ? (sq - sum * sum / n) / (n - 1) : 0.0;
            CHECK(k.stdNs == Approx(std::sqrt(std::max(0.0, var))).epsilon(1e-6).margin(1e-3));
        }
        // Sorted by total time, longest first.
        for (size_t i = 1; i < r.kernels.size(); ++i) CHECK(r.kernels[i - 1].totalNs >= r.kernels[i].totalNs);
    }

    /// (kernel name, launch ts, kernel ts) of every kernel whose launch call is in the window.
    std::string pairsSql() const {
        return "WITH api AS (SELECT e.correlation_id c, MIN(e.ts_ns) ts FROM event_view e WHERE e.rank = " + str(rank) +
               " AND e.category = 'cuda_api' AND e.correlation_id IS NOT NULL AND " + inWindow("e", t0, t1) +
               " GROUP BY e.correlation_id), k AS (SELECT e.correlation_id c, e.ts_ns ts, e.name name " +
               gpuEvents(kKernelCats) + ") SELECT k.name, api.ts AS launch, k.ts AS start FROM k JOIN api ON api.c = k.c";
    }

    void launchLatency(const GpuKernelRank& r, std::vector<int64_t>& all) const {
        std::vector<int64_t> lat;
        std::map<std::string, std::vector<int64_t>> byName;
        for (const auto& row : q.rows(pairsSql())) {
            auto c = split(row);
            const int64_t v = std::stoll(c[2]) - std::stoll(c[1]);
            lat.push_back(v);
            byName[c[0]].push_back(v);
        }
        std::sort(lat.begin(), lat.end());
        REQUIRE(!lat.empty());
        all.insert(all.end(), lat.begin(), lat.end());
        CHECK(r.launch.count == int64_t(lat.size()));
        const int64_t kernels = q.scalar("SELECT COUNT(*) " + gpuEvents(kKernelCats));
        CHECK(r.unmatchedKernels == kernels - int64_t(lat.size()));
        double sum = 0;
        for (int64_t v : lat) sum += double(v);
        CHECK(r.launch.meanNs == Approx(sum / double(lat.size())));
        CHECK(r.launch.medianNs == percentile(lat, 50));
        CHECK(r.launch.p95Ns == percentile(lat, 95));
        CHECK(r.launch.maxNs == lat.back());
        for (const auto& k : r.kernels) {
            INFO(k.name);
            auto it = byName.find(k.name);
            if (it == byName.end()) {
                CHECK(k.launch.count == 0);
                continue;
            }
            std::sort(it->second.begin(), it->second.end());
            CHECK(k.launch.count == int64_t(it->second.size()));
            CHECK(k.launch.medianNs == percentile(it->second, 50));
            CHECK(k.launch.p95Ns == percentile(it->second, 95));
            CHECK(k.launch.maxNs == it->second.back());
        }
    }

    /// Queue depth: the largest running sum of +1 (launch) / -1 (start) over segments that reach
    /// into the window, by SQL window functions; the mean from the queued time inside the window.
    void queue(const GpuKernelRank& r) const {
        const std::string pairs = "pairs AS (SELECT launch, start FROM (" + pairsSql() + ") WHERE start > launch)";
        const int64_t maxDepth = q.scalar(
            "WITH " + pairs.substr(0) + ", steps AS (SELECT launch t, 1 d FROM pairs UNION ALL SELECT start, -1 FROM pairs),"
            " depth AS (SELECT DISTINCT t, SUM(d) OVER (ORDER BY t RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) dep"
            " FROM steps), seg AS (SELECT t, dep, LEAD(t) OVER (ORDER BY t) nt FROM depth)"
            " SELECT MAX(dep) FROM seg WHERE nt IS NOT NULL AND t < " + str(t1) + " AND nt > " + str(t0));
        CHECK(r.queue.max == maxDepth);
        const int64_t area = q.scalar("WITH " + pairs + " SELECT SUM(MAX(0, MIN(start, " + str(t1) + ") - MAX(launch, " +
                                      str(t0) + "))) FROM pairs");
        CHECK(r.queue.mean == Approx(double(area) / double(t1 - t0)));
        CHECK(*std::max_element(r.queue.maxSeries.begin(), r.queue.maxSeries.end()) == maxDepth);
    }

    void copies(const GpuKernelRank& r) const {
        auto rows = q.rows("SELECT COALESCE((SELECT a.value FROM event_arg a WHERE a.event_id = e.event_id AND a.key = "
                           "'copy_kind'), CASE e.category WHEN 'gpu_memset' THEN 'memset' ELSE 'unknown' END) dir, "
                           "COUNT(*), SUM(IFNULL(e.bytes, 0)), SUM(e.dur_ns) " +
                           gpuEvents("('gpu_memcpy', 'gpu_memset')") + " GROUP BY dir ORDER BY dir");
        REQUIRE(rows.size() == r.copies.size());
        for (size_t i = 0; i < rows.size(); ++i) {
            auto c = split(rows[i]);
            INFO(c[0]);
            CHECK(r.copies[i].direction == c[0]);
            CHECK(r.copies[i].count == std::stoll(c[1]));
            CHECK(r.copies[i].bytes == std::stoll(c[2]));
            CHECK(r.copies[i].durNs == std::stoll(c[3]));
        }
    }

    void classes(const GpuKernelRank& r) const {
        auto compute = intervals("('gpu_kernel', 'compute_range')");
        auto comm = intervals("('gpu_comm_kernel')");
        auto memory = intervals("('gpu_memcpy', 'gpu_memset')");
        CHECK(r.classes[int(KernelClass::Compute)].count == int64_t(compute.size()));
        CHECK(r.classes[int(KernelClass::Communication)].count == int64_t(comm.size()));
        CHECK(r.classes[int(KernelClass::Memory)].count == int64_t(memory.size()));
        const int64_t uCompute = unionLength(compute), uComm = unionLength(comm), uMemory = unionLength(memory);
        CHECK(r.classes[int(KernelClass::Compute)].busyNs == uCompute);
        CHECK(r.classes[int(KernelClass::Communication)].busyNs == uComm);
        CHECK(r.classes[int(KernelClass::Memory)].busyNs == uMemory);
        // |A ∩ B| = |A| + |B| - |A ∪ B|.
        auto both = [](auto a, const auto& b) {
            a.insert(a.end(), b.begin(), b.end());
            return unionLength(a);
        };
        CHECK(r.commComputeOverlapNs == uComm + uCompute - both(comm, compute));
        CHECK(r.memoryComputeOverlapNs == uMemory + uCompute - both(memory, compute));
        CHECK(r.commMemoryOverlapNs == uComm + uMemory - both(comm, memory));
    }
};

void checkWindow(const std::string& trace, int64_t t0, int64_t t1, bool whole) {
    auto tr = Trace::open(trace);
    REQUIRE(tr.ok());
    AnalysisOptions o;
    o.window.kind = WindowSpec::Kind::TimeRange;
    o.window.begin = t0;
    o.window.end = t1;
    o.window.text = str(t0) + ":" + str(t1);
    auto a = analyzeTrace(*tr, o);
    REQUIRE(a.ok());
    const GpuSection* g = gpuSection(*a);
    REQUIRE(g);
    REQUIRE(g->ranks.size() == 2);
    TraceQuery q(trace);
    std::vector<int64_t> all;
    for (const GpuKernelRank& r : g->ranks) {
        INFO("rank " << r.rank << (whole ? " (whole trace)" : " (window)"));
        const Checker c{q, r.rank, t0, t1};
        c.kernelsByName(r);
        c.launchLatency(r, all);
        c.queue(r);
        c.copies(r);
        c.classes(r);
        if (whole) {
            CHECK(r.unmatchedKernels == 0); // every kernel of these traces has its launch call
            CHECK(r.queue.max > 1);
            CHECK(r.commComputeOverlapNs > 0);
        }
    }
    std::sort(all.begin(), all.end());
    CHECK(g->launch.count == int64_t(all.size()));
    CHECK(g->launch.medianNs == percentile(all, 50));
    CHECK(g->launch.p95Ns == percentile(all, 95));
    CHECK(g->launch.maxNs == all.back());
}

} // namespace

TEST_CASE("kernel statistics of the real Kineto traces agree with SQL aggregates of the trace",
          "[import][kineto][real][kernels]") {
    TempDir dir;
    const auto imported = test::importRealKineto(dir);
    if (!imported) return;
    TraceQuery q(*imported);
    const int64_t begin = q.scalar("SELECT MIN(ts_ns) FROM event_view");
    const int64_t end = q.scalar("SELECT MAX(ts_ns + dur_ns) FROM event_view");
    REQUIRE(end - begin > 3'000'000'000); // the traces span 3.37 s
    checkWindow(*imported, begin, end + 1, true);
    // A window through the middle: kernels and calls that overlap it, queue time inside it.
    checkWindow(*imported, begin + 1'000'000'000, begin + 2'500'000'000, false);
}
