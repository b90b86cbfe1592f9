// SPDX-License-Identifier: MIT
// The analyzer's queries behind the GUI (event details, search, locate, bounds, stats) on a
// hand-built trace whose every answer is known.
#include <catch2/catch.hpp>

#include <algorithm>

#include "hpcprof/analyzer/event_query.hpp"
#include "hpcprof/analyzer/timeline_query.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

struct Fixture {
    test::TempDir dir;
    std::optional<Trace> trace;
    std::optional<TraceIndex> index;
    int64_t launchId = 0, kernelId = 0, reduce0 = 0, reduce1 = 0, writeId = 0;

    Fixture() {
        test::TraceBuilder b;
        int r0 = b.rank(0, 1'000, 90'000, 2);
        int r1 = b.rank(1, 2'000, 95'000, 2);
        int gpu = b.gpuStream(r0, 0, 7);
        b.event(r0, Category::CudaApi, "cudaLaunchKernel", 10'000, 500).correlationId = 42;
        b.event(gpu, Category::GpuKernel, "gemm", 11'000, 4'000).correlationId = 42;
        b.event(r0, Category::MpiCollective, "MPI_Allreduce", 20'000, 3'000).collective("world", 2, 5).withBytes(64);
        b.event(r1, Category::MpiCollective, "MPI_Allreduce", 21'000, 2'000).collective("world", 2, 5).withBytes(64);
        b.event(r1, Category::PosixIo, "write", 30'000, 1'500).withBytes(4096).withObject("/data/out.dat")
            .withArg("mode", "append");
        b.event(r1, Category::PosixIo, "read", 40'000, 100).withBytes(10);
        b.write(dir / "q.hpcprof");
        auto t = Trace::open(dir / "q.hpcprof");
        REQUIRE(t.ok());
        trace.emplace(std::move(*t));
        auto ix = TraceIndex::load(*trace);
        REQUIRE(ix.ok());
        index.emplace(std::move(*ix));
    }

    int64_t idOf(const std::string& name, int64_t rank) {
        EventFilter f;
        f.nameMatches = [&](const std::string& n) { return n == name; };
        f.trackMatches = [&](const TrackInfo& t) {
            for (const auto& p : index->processes())
                if (p.id == t.processId) return p.rank == rank;
            return false;
        };
        auto hits = findEvents(*trace, *index, f);
        REQUIRE(hits.ok());
        REQUIRE(hits->hits.size() == 1);
        return hits->hits[0].eventId;
    }
};

} // namespace

TEST_CASE("eventDetails reads every column and the correlated events", "[analyzer][query]") {
    Fixture fx;
    const int64_t launch = fx.idOf("cudaLaunchKernel", 0);
    auto d = eventDetails(*fx.trace, *fx.index, launch);
    REQUIRE(d.ok());
    CHECK(d->ts == 10'000);
    CHECK(d->dur == 500);
    CHECK(fx.index->string(d->nameId) == "cudaLaunchKernel");
    CHECK(d->correlationId == 42);
    REQUIRE(d->related.size() == 1);
    CHECK(fx.index->string(d->related[0].nameId) == "gemm");
    CHECK(d->related[0].relation == "launched");
    CHECK(d->related[0].ts == 11'000);

    auto kernel = eventDetails(*fx.trace, *fx.index, d->related[0].eventId);
    REQUIRE(kernel.ok());
    REQUIRE(kernel->related.size() == 1);
    CHECK(kernel->related[0].eventId == launch);
    CHECK(kernel->related[0].relation == "launched by");

    auto reduce = eventDetails(*fx.trace, *fx.index, fx.idOf("MPI_Allreduce", 0));
    REQUIRE(reduce.ok());
    CHECK(reduce->seq == 5);
    CHECK(reduce->bytes == 64);
    REQUIRE(reduce->related.size() == 1);
    CHECK(reduce->related[0].relation == "same collective");
    CHECK(reduce->related[0].ts == 21'000);
    CHECK(eventDetails(*fx.trace, *fx.index, reduce->eventId, 0)->related.empty());

    auto write = eventDetails(*fx.trace, *fx.index, fx.idOf("write", 1));
    REQUIRE(write.ok());
    CHECK(write->bytes == 4096);
    REQUIRE(write->objectId >= 0);
    CHECK(fx.index->objectName(write->objectId) == "/data/out.dat");
    CHECK(std::count(write->fields.begin(), write->fields.end(),
                     std::pair<std::string, std::string>("mode", "append")) == 1);
    CHECK(write->related.empty());

    auto missing = eventDetails(*fx.trace, *fx.index, 999'999);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.status().message() == "no event 999999");
}

TEST_CASE("findEvents filters by name, class and track, counts beyond the limit", "[analyzer][query]") {
    Fixture fx;
    EventFilter io;
    io.classMask = 1u << unsigned(EventClass::Io);
    auto r = findEvents(*fx.trace, *fx.index, io);
    REQUIRE(r.ok());
    REQUIRE(r->hits.size() == 2);
    CHECK(r->hits[0].ts == 30'000); // by time
    CHECK(r->hits[1].ts == 40'000);

    EventFilter limited;
    limited.limit = 2;
    auto all = findEvents(*fx.trace, *fx.index, limited);
    REQUIRE(all.ok());
    CHECK(all->total == 6);
    CHECK(all->hits.size() == 2);
    CHECK(all->truncated());
    CHECK(all->hits[0].ts == 10'000);

    EventFilter none;
    none.nameMatches = [](const std::string& n) { return n == "no such call"; };
    auto empty = findEvents(*fx.trace, *fx.index, none);
    REQUIRE(empty.ok());
    CHECK(empty->total == 0);
}

TEST_CASE("locateEvents, time bounds, stats and aggregate colours come from the analyzer", "[analyzer][query]") {
    Fixture fx;
    const int64_t w = fx.idOf("write", 1), r = fx.idOf("read", 1);
    auto places = locateEvents(*fx.trace, {r, 424242, w});
    REQUIRE(places.ok());
    REQUIRE(places->size() == 2); // the unknown id is left out, the order kept
    CHECK((*places)[0].eventId == r);
    CHECK((*places)[0].ts == 40'000);
    CHECK((*places)[1].dur == 1'500);

    auto bounds = traceTimeBounds(*fx.trace, *fx.index);
    REQUIRE(bounds.ok());
    CHECK(bounds->begin == 1'000);
    CHECK(bounds->end == 95'000);

    auto stats = traceStats(*fx.trace);
    REQUIRE(stats.ok());
    CHECK(stats->empty()); // a clean hand-built trace

    // A bucket folded from narrow events carries its longest event's category.
    const TrackInfo* rank1 = nullptr;
    for (const auto& t : fx.index->tracks())
        if (fx.index->processes()[size_t(t.processId - 1)].rank == 1) rank1 = &t;
    REQUIRE(rank1);
    auto lod = timelineSlices(*fx.trace, rank1->id, 0, 100'000, 50'000);
    REQUIRE(lod.ok());
    REQUIRE(lod->aggregates.size() == 1);
    CHECK(fx.index->categoryClass(lod->aggregates[0].representativeCategoryId) == EventClass::Communication);
}
