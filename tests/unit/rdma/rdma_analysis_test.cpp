// SPDX-License-Identifier: MIT
// RDMA analysis on hand-built traces: per-QP bandwidth against the link rate, small-message
// counts, latency percentiles, and the two advice rules firing / not firing.
#include <catch2/catch.hpp>

#include "analyzer/src/advice/rule_spec.hpp"
#include "families/rdma/rdma_analysis.hpp"
#include "hpcprof/schema/tables.hpp"
#include "process_runner.hpp"
#include "hpcprof/store/trace_writer.hpp"

using namespace hpcprof;
using hpcprof::schema::Category;

namespace {

/// One rank whose QP 42 carries `n` work requests of `bytes` each, posted every `gapNs`, each
/// completing after 5000 + i ns; its device reports `linkMbps`.
void writeTrace(const std::string& path, int n, int64_t bytes, int64_t gapNs, int64_t linkMbps) {
    auto created = store::TraceWriter::create(path);
    REQUIRE(created.ok());
    store::TraceWriter& w = created.value();
    store::ProcessRow p;
    p.id = 1;
    p.rank = 0;
    p.host = "h";
    p.pid = 100;
    p.startTs = 0;
    p.endTs = int64_t(n) * gapNs + 1'000'000;
    p.endState = "exited";
    p.clockMethod = "monotonic";
    REQUIRE(w.insertProcess(p).ok());
    int64_t th = w.insertThread(1, 100, "main");
    int64_t cpu = w.insertTrack(1, th, "cpu_thread", "main", {}, {});
    store::EventRow open;
    open.trackId = cpu;
    open.categoryId = int64_t(Category::Rdma);
    open.nameId = w.internString("ibv_open_device");
    open.dur = 100;
    int64_t openId = w.insertEvent(open);
    w.insertEventArg(openId, "link_rate_mbps", linkMbps);
    REQUIRE(w.finishTrack(cpu, openId, openId, 1).ok());
    int64_t nic = w.insertTrack(1, std::nullopt, "nic_queue", "standin0 QP 42", 0, 42);
    int64_t first = 0, last = 0;
    for (int i = 0; i < n; ++i) {
        store::EventRow e;
        e.trackId = nic;
        e.ts = 1000 + int64_t(i) * gapNs;
        e.dur = 5000 + i;
        e.categoryId = int64_t(Category::RdmaWorkRequest);
        e.nameId = w.internString("RDMA_WRITE");
        e.bytes = bytes;
        last = w.insertEvent(e);
        if (i == 0) first = last;
        w.insertEventArg(last, "latency_ns", int64_t(5000 + i));
    }
    REQUIRE(w.finishTrack(nic, first, last, n).ok());
    w.setMetadata(schema::meta::kSchemaVersion, std::to_string(schema::kSchemaVersion));
    store::StatCounts none{};
    REQUIRE(w.writeStats(none, {}).ok());
    REQUIRE(w.finish().ok());
}

/// The findings of every rule on an analysis that holds only this RDMA traffic.
std::vector<analyzer::Finding> rdmaFindings(const analyzer::RdmaAnalysis& rdma) {
    analyzer::Analysis a;
    a.rdma = rdma;
    return analyzer::advice::runRules(a);
}

} // namespace

TEST_CASE("RDMA analysis measures per-QP bandwidth, small messages and latency percentiles", "[rdma]") {
    test::TempDir dir;
    writeTrace(dir / "t.hpcprof", 300, 4000, 10'000, 100'000);
    auto trace = analyzer::Trace::open(dir / "t.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeRdma(trace.value(), 10);
    REQUIRE(a.ok());
    REQUIRE(a.value().queues.size() == 1);
    const auto& q = a.value().queues[0];
    CHECK(q.name == "standin0 QP 42");
    CHECK(q.workRequests == 300);
    CHECK(q.bytes == 1'200'000);
    CHECK(q.smallWorkRequests == 300);
    CHECK(q.linkRateMbps == 100'000);
    // 1.2 MB over [1000, 1000 + 299 * 10000 + 5299] ns.
    CHECK(q.achievedGbps == Approx(1'200'000.0 * 8 / (299.0 * 10'000 + 5299)));
    CHECK(q.latencyP50Ns == 5149); // 150th of 5000..5299
    CHECK(q.latencyP99Ns == 5296); // 297th
    CHECK(q.latencyMaxNs == 5299);
    double binned = 0;
    for (double g : q.gbpsOverTime) binned += g * double(a.value().binNs);
    CHECK(binned / 8 == Approx(1'200'000.0));
    REQUIRE(a.value().ranks.size() == 1);
    CHECK(a.value().ranks[0].rank == 0);
    CHECK(a.value().ranks[0].smallMessageRatePerS == Approx(300.0 * 1e9 / (299.0 * 10'000 + 5299)));

    auto findings = rdmaFindings(a.value());
    REQUIRE(findings.size() == 2); // sorted by gain (0 for both), then id
    CHECK(findings[0].id == "rdma-low-bandwidth");
    CHECK(findings[1].id == "rdma-small-messages");
    CHECK(findings[1].ranks == std::vector<int64_t>{0});
    CHECK(findings[1].severity == analyzer::Severity::Warning);
}

TEST_CASE("RDMA advice stays quiet for large messages near the link rate", "[rdma]") {
    test::TempDir dir;
    // 200 x 1 MiB, one every 100 us: 83.9 Gbit/s on a 100 Gbit/s link.
    writeTrace(dir / "t.hpcprof", 200, 1 << 20, 100'000, 100'000);
    auto trace = analyzer::Trace::open(dir / "t.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeRdma(trace.value());
    REQUIRE(a.ok());
    CHECK(a.value().queues.at(0).smallWorkRequests == 0);
    CHECK(a.value().ranks.at(0).achievedGbps > 80);
    CHECK(rdmaFindings(a.value()).empty());
}
