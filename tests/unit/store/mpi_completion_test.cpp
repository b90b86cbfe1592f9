// SPDX-License-Identifier: MIT
// The store turns MPI request completion records into mpi_completion rows that name the
// posting event, across threads of a process, and counts completions left without a wait.
#include <catch2/catch.hpp>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/store/merge.hpp"
#include "merge_raw.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using schema::Op;
namespace raw = hpcprof::schema::raw;
using test::RawEventSpec;
using test::RawThreadBuilder;

TEST_CASE("request completions name their posting call, across threads, with the actual source",
          "[store][mpi]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(200, 1'000'000, 0);
    h.endMonotonicNs = 2'000'000;
    // Thread 200 posts a wildcard receive (request 7) and a send (request 8); thread 201
    // completes both in one Waitall (a signal handler's read in between does not take them),
    // plus request 99 that was never recorded, then leaves one completion without a wait.
    RawThreadBuilder poster(200);
    RawEventSpec irecv{uint16_t(Op::MpiIrecv), 1'000'100, 1'000'200};
    irecv.flags = raw::kFlagRequest;
    irecv.seq = 7;
    irecv.tag = 3;
    RawEventSpec isend{uint16_t(Op::MpiIsend), 1'000'300, 1'000'400, 64};
    isend.flags = raw::kFlagRequest;
    isend.seq = 8;
    isend.peer = 1;
    isend.tag = 4;
    poster.event(irecv).event(isend);
    RawThreadBuilder waiter(201);
    waiter.mpiCompletion(true, 7, 2, 3, 32)
        .mpiCompletion(false, 8, 1, 4, 64)
        .event({uint16_t(Op::PosixRead), 1'000'550, 1'000'560, 10, 0, 5})
        .mpiCompletion(true, 99, 3, 5, 16)
        .event({uint16_t(Op::MpiWaitall), 1'000'500, 1'000'900, 112, 0, -1, 0, 0, -1, 0, -1, 3})
        .mpiCompletion(true, 100, 3, 5, 16);
    test::writeRawProcess(dir.path() / "raw", h, {poster, waiter});
    auto r = test::mergeRaw(dir);
    CHECK(r.stats[size_t(schema::Stat::MpiCompletionsUnattached)] == 1);

    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT w.name, c.request, COALESCE(p.name, ''), c.kind, c.peer, c.tag, c.bytes"
                 " FROM mpi_completion c JOIN event_view w ON w.event_id = c.event_id"
                 " LEFT JOIN event_view p ON p.event_id = c.post_event_id ORDER BY c.request") ==
          std::vector<std::string>{"MPI_Waitall|7|MPI_Irecv|recv|2|3|32",
                                   "MPI_Waitall|8|MPI_Isend|send|1|4|64",
                                   "MPI_Waitall|99||recv|3|5|16"});
    // The posting events keep what was known when they were posted (a wildcard has no peer).
    CHECK(q.rows("SELECT name, COALESCE(peer, 'null') FROM event_view WHERE name LIKE 'MPI_I%'"
                 " ORDER BY ts_ns") == std::vector<std::string>{"MPI_Irecv|null", "MPI_Isend|1"});
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'mpi_completions_unattached'") == 1);
}

TEST_CASE("MPI_Startall's completions all name the Startall that posted them", "[store][mpi]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(300, 1'000'000, 1);
    h.endMonotonicNs = 2'000'000;
    // Startall of 3 persistent requests took request numbers 10, 11, 12 (tag = how many).
    RawEventSpec startall{uint16_t(Op::MpiStartall), 1'000'100, 1'000'200, 24};
    startall.flags = raw::kFlagRequest;
    startall.seq = 10;
    startall.tag = 3;
    RawThreadBuilder t(300);
    t.event(startall)
        .mpiCompletion(true, 10, 0, 1, 8)
        .mpiCompletion(false, 11, 2, 1, 8)
        .mpiCompletion(false, 12, 0, 2, 8)
        .event({uint16_t(Op::MpiWaitall), 1'000'300, 1'000'400, 24, 0, -1, 0, 0, -1, 0, -1, 3})
        .mpiCompletion(true, 13, 0, 1, 8); // a later request, never waited for
    test::writeRawProcess(dir.path() / "raw", h, {t});
    auto r = test::mergeRaw(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT c.request, p.name, c.kind, c.peer FROM mpi_completion c"
                 " JOIN event_view p ON p.event_id = c.post_event_id ORDER BY c.request") ==
          std::vector<std::string>{"10|MPI_Startall|recv|0", "11|MPI_Startall|send|2",
                                   "12|MPI_Startall|send|0"});
    CHECK(q.scalar("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.name = 'MPI_Startall' AND a.key = 'requests'") == 3);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_detail") == 0); // Startall has no message tag
    CHECK(r.stats[size_t(schema::Stat::MpiCompletionsUnattached)] == 1);
}
