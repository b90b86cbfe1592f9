// SPDX-License-Identifier: MIT
// The store step reads why and when threads stopped recording (raw format 4 thread headers,
// drops of threads without a file in the process header) into the thread table, per-reason
// stats and warnings; older headers are read as before; a spare file no thread took and an
// empty process header are told apart from damaged files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "merge_raw.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using schema::Op;
using schema::raw::DropReason;
using test::RawThreadBuilder;

namespace {

uint16_t op(Op o) { return uint16_t(o); }

int64_t stat(const test::TraceQuery& q, const std::string& name) {
    return q.scalar("SELECT value FROM stats WHERE name = '" + name + "'");
}

bool anyWarningContains(const store::MergeResult& r, const std::string& text) {
    return std::any_of(r.warnings.begin(), r.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

} // namespace

TEST_CASE("threads that stopped recording keep when and why in the thread table and the stats",
          "[store][recording_stopped]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(40, 0); // monotonic clock: ticks are ns, trace origin 0
    h.threadsWithoutFile = 2;
    h.droppedWithoutFile[uint32_t(DropReason::DiskFull)] = 10;
    h.droppedRecords = 10;
    RawThreadBuilder stoppedThread(40), quotaThread(41), fine(42);
    stoppedThread.event({op(Op::PosixWrite), 100, 200, 1})
        .stopped(500, DropReason::DiskFull, 28)
        .dropped(DropReason::DiskFull, 7)
        .dropped(DropReason::SignalWhileGrowing, 1);
    quotaThread.event({op(Op::PosixWrite), 100, 300, 1})
        .stopped(900, DropReason::Quota, 122)
        .dropped(DropReason::Quota, 3);
    fine.event({op(Op::PosixWrite), 100, 400, 1});
    test::writeRawProcess(dir.path() / "raw", h, {stoppedThread, quotaThread, fine});
    auto r = test::mergeRaw(dir);
    CHECK(r.partial);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT tid, recording_stopped_ts, stop_reason, records_dropped FROM thread"
                 " ORDER BY tid") ==
          std::vector<std::string>{"40|500|disk_full|8", "41|900|quota|3", "42|||0"});
    CHECK(stat(q, "records_dropped") == 8 + 3 + 10);
    CHECK(stat(q, "records_dropped_disk_full") == 7 + 10);
    CHECK(stat(q, "records_dropped_quota") == 3);
    CHECK(stat(q, "records_dropped_buffer_limit") == 0);
    CHECK(stat(q, "threads_stopped_recording") == 2);
    CHECK(stat(q, "threads_without_raw_file") == 2);
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "true");
    CHECK(anyWarningContains(r, "2 threads stopped recording"));
    CHECK(anyWarningContains(r, "filesystem was full (No space left on device)"));
    CHECK(anyWarningContains(r, "2 threads could not create a raw file"));
}

TEST_CASE("a format 3 thread header says nothing about stops, whatever its padding holds",
          "[store][recording_stopped]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(50, 0);
    h.version = 3;
    h.droppedRecords = 4; // format 3: every drop of the process
    RawThreadBuilder t(50);
    t.event({op(Op::PosixWrite), 100, 200, 1})
        .formatVersion(3)
        .stopped(150, DropReason::DiskFull, 28) // bytes format 3 left as padding
        .dropped(DropReason::DiskFull, 99);
    test::writeRawProcess(dir.path() / "raw", h, {t});
    test::mergeRaw(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT recording_stopped_ts, stop_reason, records_dropped FROM thread") ==
          std::vector<std::string>{"||0"});
    CHECK(stat(q, "records_dropped") == 4);
    CHECK(stat(q, "records_dropped_disk_full") == 0);
    CHECK(stat(q, "threads_stopped_recording") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event") == 1);
}

TEST_CASE("a spare thread file no thread took is skipped, an empty process header is reported",
          "[store][recording_stopped]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(60, 0);
    RawThreadBuilder t(60);
    t.event({op(Op::PosixWrite), 100, 200, 1});
    auto procDir = test::writeRawProcess(dir.path() / "raw", h, {t});
    // What the agent's helper makes ahead: an empty header and two empty chunks.
    std::ofstream(procDir / "thread-spare-3", std::ios::binary) << std::string(3 * 4096, '\0');
    // A process whose agent found no space for its header.
    std::filesystem::create_directories(dir.path() / "raw" / "proc-61-5");
    std::ofstream(dir.path() / "raw" / "proc-61-5" / "process.bin");
    auto r = test::mergeRaw(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM thread") == 1);
    CHECK(stat(q, "raw_files_unreadable") == 0);
    CHECK(stat(q, "agent_disabled") == 1);
    CHECK(anyWarningContains(r, "proc-61-5/process.bin: empty: the agent could not write it"));
    CHECK(r.partial);
}
