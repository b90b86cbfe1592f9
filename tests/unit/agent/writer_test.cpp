// SPDX-License-Identifier: MIT
// The in-process writer (agent/runtime: reserveSlot, appendRecord, internString) against the
// store's reader: chosen records written by a real recorder, read back exactly. Each scenario
// runs in a forked child that configures and starts its own recorder (the recorder is a
// process-wide singleton, configured once from the environment), writes, and exits; the test
// reads the child's raw folder.
#include <catch2/catch.hpp>

#include <filesystem>

#include <string>
#include <vector>

#include "process_runner.hpp"
#include "recording_child.hpp"
#include "runtime/recorder.hpp"
#include "store/raw_reader.hpp"

using namespace hpcprof;
namespace raw = schema::raw;

namespace {

agent::EventFields call(schema::Op op, uint64_t start, uint64_t end, int64_t bytes, uint32_t seq = 0) {
    agent::EventFields f;
    f.op = op;
    f.start = start;
    f.end = end;
    f.bytes = bytes;
    f.fd = 7;
    f.seq = seq;
    f.flags = seq ? raw::kFlagSeqValid : 0;
    return f;
}

struct Span {
    uint16_t op;
    uint64_t start, end;
    int64_t bytes;
    uint32_t seq;
    bool operator==(const Span&) const = default;
};

std::vector<Span> spans(const store::ThreadRecords& t) {
    std::vector<Span> out;
    for (const auto& e : t.events) out.push_back({e.op, e.start, e.end, e.bytes, e.seq});
    return out;
}

} // namespace

TEST_CASE("the writer's full records read back exactly, across many chunk boundaries", "[agent][writer]") {
    test::TempDir dir;
    // 4 KiB chunks: a file that starts small and grows by a chunk every 64 records.
    std::vector<Span> expected;
    for (uint32_t i = 0; i < 5000; ++i) // distinct bytes: no call repeats the one before
        expected.push_back({uint16_t(schema::Op::PosixWrite), 1000 + 10ull * i, 1005 + 10ull * i, int64_t(i), 0});
    auto t = test::recordInChild(dir.path().string(), {{"HPCPROF_CHUNK_KB", "4"}}, [&] {
        for (const Span& s : expected)
            agent::recordEvent(call(schema::Op(s.op), s.start, s.end, s.bytes));
    });
    CHECK(spans(t) == expected);
    CHECK(t.drops.total() == 0);
}

TEST_CASE("a run of identical calls is written as Repeat entries and read back call by call", "[agent][writer]") {
    test::TempDir dir;
    // 1000 MPI_Allreduce calls of 8 bytes, instance numbers 1..1000 (step 1), each 3 ticks long
    // with a gap of 2; then a different call ends the run; then 300 alternating lseek/read pairs
    // (a period-2 run).
    std::vector<Span> expected;
    uint64_t t0 = 1'000'000;
    for (uint32_t i = 0; i < 1000; ++i)
        expected.push_back({uint16_t(schema::Op::MpiAllreduce), t0 + 5ull * i, t0 + 5ull * i + 3, 8, i + 1});
    expected.push_back({uint16_t(schema::Op::PosixOpen), 2'000'000, 2'000'100, -1, 0});
    for (uint32_t i = 0; i < 300; ++i) {
        uint64_t at = 3'000'000 + 40ull * i;
        expected.push_back({uint16_t(schema::Op::PosixLseek), at, at + 4, 0, 0});
        expected.push_back({uint16_t(schema::Op::PosixRead), at + 10, at + 30, 64, 0});
    }
    auto t = test::recordInChild(dir.path().string(), {}, [&] {
        for (const Span& s : expected)
            agent::recordEvent(call(schema::Op(s.op), s.start, s.end, s.bytes, s.seq));
    });
    REQUIRE(t.events.size() == expected.size());
    CHECK(spans(t) == expected);
    // Written mostly as 8-byte entries: far fewer slots than calls (read back from the file).
    store::RawProblems problems;
    auto procs = store::listProcesses(dir.path(), problems);
    REQUIRE(procs.ok());
    std::string file = procs->front().threadFiles.front().string();
    raw::ThreadFileHeader h;
    FILE* f = std::fopen(file.c_str(), "rb");
    REQUIRE(f);
    REQUIRE(std::fread(&h, sizeof(h), 1, f) == 1);
    std::fclose(f);
    CHECK(h.reserved < expected.size() / 4);
}

TEST_CASE("strings longer than a record are written in pieces and reassembled", "[agent][writer]") {
    test::TempDir dir;
    std::string longName(raw::kStringPieceSize * 3 + 5, 'x');
    for (size_t i = 0; i < longName.size(); ++i) longName[i] = char('a' + i % 26);
    uint32_t ids[2] = {};
    auto t = test::recordInChild(dir.path().string(), {}, [&] {
        ids[0] = agent::internString("/data/in.dat", 12);
        ids[1] = agent::internString(longName.data(), longName.size());
        auto f = call(schema::Op::PosixRead, 10, 20, 64);
        f.objectId = ids[1];
        agent::recordEvent(f);
    });
    // The process's working directory comes first: the agent interns it with the first thread
    // file (ProcessHeader::cwdStringId).
    REQUIRE(t.strings.size() == 3);
    CHECK(t.strings[0].text == std::filesystem::current_path().string());
    CHECK(t.strings[1].text == "/data/in.dat");
    CHECK(t.strings[2].text == longName);
    // One id per string, whatever its pieces (the working directory took the id between them:
    // the first string's call created the thread file).
    CHECK(t.strings[2].id == t.strings[0].id + 1);
    CHECK(t.strings[0].id == t.strings[1].id + 1);
    REQUIRE(t.events.size() == 1);
    CHECK(t.events[0].objectId == t.strings[2].id);
    CHECK(t.incompleteStrings == 0);
}

TEST_CASE("a thread whose buffer is full stops recording and counts every call it drops", "[agent][writer]") {
    test::TempDir dir;
    // 1 MiB per thread: (1 MiB - the 4 KiB header) / 64 = 16320 records; 20000 distinct calls.
    const uint32_t calls = 20000;
    auto t = test::recordInChild(dir.path().string(), {{"HPCPROF_THREAD_BUFFER_MB", "1"}}, [&] {
        for (uint32_t i = 0; i < calls; ++i)
            agent::recordEvent(call(schema::Op::PosixWrite, 100 + 10ull * i, 105 + 10ull * i, int64_t(i)));
    });
    const store::ThreadDrops& drops = t.drops;
    const uint64_t kept = t.events.size();
    CHECK(kept > 15000);
    CHECK(kept < calls);
    // Every call is either kept, in order and exact, or counted as dropped at the limit.
    CHECK(kept + drops.dropped[size_t(raw::DropReason::BufferLimit)] == calls);
    CHECK(drops.stopReason == raw::DropReason::BufferLimit);
    CHECK(drops.stoppedTicks != 0);
    for (uint64_t i = 0; i < kept; ++i) {
        INFO(i);
        REQUIRE(t.events[i].bytes == int64_t(i));
        REQUIRE(t.events[i].start == 100 + 10 * i);
    }
}
