// SPDX-License-Identifier: MIT
// The reader expands Repeat records (raw_format.hpp) into the calls they stand for: times chained
// from the previous call's end, the counter advanced by the step (4-byte counters wrap), for
// EventRecords and for RDMA Call / PostOne / PollOne records; a Repeat whose run start is missing
// is counted as torn.
#include <catch2/catch.hpp>

#include <cstddef>
#include <fstream>

#include "hpcprof/schema/catalog.hpp"
#include "merge_raw.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "store/raw_reader.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using schema::Op;
namespace raw = hpcprof::schema::raw;
using test::RawEventSpec;
using test::RawThreadBuilder;

namespace {

/// The records of `kind` the reader kept aside (its family's section).
const std::vector<store::RawRecordBytes>& recordsOf(const store::ThreadRecords& t, raw::RecordKind kind) {
    return store::sectionRecords(t, store::registeredRecordRouting()[uint8_t(kind)]);
}

uint64_t entry(uint64_t gap, uint64_t duration) { return gap << 32 | (duration + 1); }

raw::RepeatRecord repeat(int32_t step, std::initializer_list<uint64_t> entries, uint8_t period = 1) {
    raw::RepeatRecord r{};
    r.kind = raw::RecordKind::Repeat;
    r.period = period;
    r.step = step;
    size_t k = 0;
    for (uint64_t e : entries) r.entries[k++] = e;
    return r;
}

/// A PostOne (a one-WR post, 64 bytes) or PollOne (a poll with one completion of 64 bytes)
/// record of QP 17; wr_id at the same offset in both.
raw::RdmaRecord oneRecord(raw::RdmaAction action, uint64_t ts, uint64_t end, uint64_t wrId) {
    raw::RdmaRecord r{};
    r.kind = raw::RecordKind::Rdma;
    r.action = action;
    r.qpNum = 17;
    r.ts = ts;
    if (action == raw::RdmaAction::PostOne) {
        r.u.wr.wrId = wrId;
        r.u.wr.bytes = 64;
        r.u.wr.opcode = 0; // IBV_WR_RDMA_WRITE
        r.u.postOne.op = uint16_t(Op::IbvPostSend);
        r.u.postOne.end = end;
    } else {
        r.u.wc.wrId = wrId;
        r.u.wc.byteLen = 64;
        r.u.pollOne.op = uint16_t(Op::IbvPollCq);
        r.u.pollOne.end = end;
    }
    return r;
}
raw::RdmaRecord postOne(uint64_t ts, uint64_t end, uint64_t wrId) {
    return oneRecord(raw::RdmaAction::PostOne, ts, end, wrId);
}
raw::RdmaRecord pollOne(uint64_t ts, uint64_t end, uint64_t wrId) {
    return oneRecord(raw::RdmaAction::PollOne, ts, end, wrId);
}

raw::RdmaRecord foldedPolls(uint64_t ts, uint64_t end) {
    raw::RdmaRecord r{};
    r.kind = raw::RecordKind::Rdma;
    r.action = raw::RdmaAction::Call;
    r.ts = ts;
    r.u.call.end = end;
    r.u.call.op = uint16_t(Op::IbvPollCq);
    r.u.call.folded = 3;
    return r;
}

struct Span {
    uint64_t start, end, counter;
    bool operator==(const Span&) const = default;
};

} // namespace

TEST_CASE("Repeat records expand into the calls they stand for", "[store][raw]") {
    test::TempDir dir;
    RawEventSpec allreduce{uint16_t(Op::MpiAllreduce), 1000, 1100, 0};
    allreduce.flags = raw::kFlagSeqValid;
    allreduce.seq = 0xfffffffeu;
    RawThreadBuilder t(300);
    t.event(allreduce)
        .record(repeat(1, {entry(50, 100), entry(0, 0), entry(7, 3), entry(1, 1), entry(1, 1),
                           entry(1, 1), entry(1, 1)}))
        .record(repeat(1, {entry(2, 2)}))
        .string(9, "breaks the run")
        .record(repeat(1, {entry(1, 1)})) // no run before it: torn
        .record(postOne(2000, 2010, 100))
        .record(repeat(-8, {entry(5, 10), entry(0, 1)}))
        .record(foldedPolls(3000, 3005))
        .record(repeat(0, {entry(1, 1)}));
    auto folder =
        test::writeRawProcess(dir.path() / "raw", test::makeProcessHeader(300, 1'000'000), {t});

    store::RawProblems problems;
    store::ThreadRecords r = store::readThreadFile(folder / "thread-300", problems);
    CHECK(problems.tornRecords == 1);
    std::vector<Span> events;
    for (const auto& e : r.events) {
        CHECK(e.op == uint16_t(Op::MpiAllreduce));
        CHECK(e.flags == raw::kFlagSeqValid);
        CHECK(e.bytes == 0);
        events.push_back({e.start, e.end, e.seq});
    }
    CHECK(events == std::vector<Span>{{1000, 1100, 0xfffffffeu}, {1150, 1250, 0xffffffffu},
                                      {1250, 1250, 0}, {1257, 1260, 1}, {1261, 1262, 2},
                                      {1263, 1264, 3}, {1265, 1266, 4}, {1267, 1268, 5},
                                      {1270, 1272, 6}});
    std::vector<Span> rdma;
    for (const auto& bytes : recordsOf(r, raw::RecordKind::Rdma)) {
        auto rec = store::recordAs<raw::RdmaRecord>(bytes);
        if (rec.action == raw::RdmaAction::PostOne) {
            CHECK(rec.qpNum == 17);
            CHECK(rec.u.wr.bytes == 64);
            rdma.push_back({rec.ts, rec.u.postOne.end, rec.u.wr.wrId});
        } else {
            CHECK(rec.action == raw::RdmaAction::Call);
            CHECK(rec.u.call.folded == 3);
            rdma.push_back({rec.ts, rec.u.call.end, rec.u.call.posted});
        }
    }
    CHECK(rdma == std::vector<Span>{{2000, 2010, 100}, {2015, 2025, 92}, {2025, 2026, 84},
                                    {3000, 3005, 0}, {3006, 3007, 0}});

    // Through the whole store: nine MPI_Allreduce events with their own times and instances.
    test::mergeRaw(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT dur_ns FROM event_view WHERE name = 'MPI_Allreduce' ORDER BY ts_ns") ==
          std::vector<std::string>{"100", "100", "0", "3", "1", "1", "1", "1", "2"});
}

TEST_CASE("Period-2 Repeat records alternate between the two calls before them", "[store][raw]") {
    test::TempDir dir;
    // A one-WR post and a poll that returned its completion (PostOne and PollOne, counter
    // wr_id): post, poll, then 7 more of each as 8-byte entries, chained in time (each from the
    // previous call's end), wr_id advancing by 1 in both.
    RawThreadBuilder t(302);
    t.record(postOne(2000, 2010, 100))
        .record(pollOne(2012, 2020, 100))
        .record(repeat(1, {entry(5, 10), entry(1, 8), entry(5, 10), entry(1, 8), entry(5, 10),
                           entry(1, 8), entry(5, 10)}, 2))
        .record(repeat(1, {entry(1, 8), entry(5, 10), entry(1, 8), entry(5, 10), entry(1, 8),
                           entry(5, 10), entry(1, 8)}, 2)) // goes on with the poll
        .string(9, "breaks the run")
        .record(postOne(3000, 3010, 200))
        .record(repeat(1, {entry(1, 1)}, 2)); // one call before it, not two: torn
    auto folder =
        test::writeRawProcess(dir.path() / "raw", test::makeProcessHeader(302, 1'000'000), {t});
    store::RawProblems problems;
    store::ThreadRecords r = store::readThreadFile(folder / "thread-302", problems);
    CHECK(problems.tornRecords == 1);
    std::vector<Span> posts, polls;
    uint64_t previousEnd = 0;
    for (const auto& bytes : recordsOf(r, raw::RecordKind::Rdma)) {
        auto rec = store::recordAs<raw::RdmaRecord>(bytes);
        uint64_t end = rec.action == raw::RdmaAction::PostOne ? rec.u.postOne.end : rec.u.pollOne.end;
        CHECK(rec.ts >= previousEnd);
        previousEnd = end;
        if (rec.action == raw::RdmaAction::PostOne)
            posts.push_back({rec.ts, end, rec.u.wr.wrId});
        else
            polls.push_back({rec.ts, end, rec.u.wc.wrId});
    }
    // 1 + 4 + 3 posts before the string, then the last one; 1 + 3 + 4 polls, alternating.
    REQUIRE(posts.size() == 8 + 1);
    REQUIRE(polls.size() == 8);
    CHECK(posts[1] == Span{2025, 2035, 101}); // the poll ended at 2020, +5
    CHECK(polls[1] == Span{2036, 2044, 101}); // +1 after that post, 8 ticks
    CHECK(posts[7] == Span{2025 + 6 * 24, 2025 + 6 * 24 + 10, 107});
    CHECK(polls[7] == Span{2025 + 6 * 24 + 11, 2025 + 6 * 24 + 19, 107});
    CHECK(posts[8] == Span{3000, 3010, 200});
}

TEST_CASE("thread files of the previous raw format are read; newer ones are refused, not misread",
          "[store][raw]") {
    test::TempDir dir;
    RawThreadBuilder t(301);
    t.event({uint16_t(Op::PosixRead), 1000, 1100, 10});
    auto folder =
        test::writeRawProcess(dir.path() / "raw", test::makeProcessHeader(301, 1'000'000), {t});
    auto setVersion = [&](uint32_t v) {
        std::fstream f(folder / "thread-301", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(offsetof(raw::ThreadFileHeader, version));
        f.write(reinterpret_cast<const char*>(&v), sizeof(v));
    };
    setVersion(1); // before Repeat records existed: nothing to read differently
    store::RawProblems problems;
    CHECK(store::readThreadFile(folder / "thread-301", problems).events.size() == 1);
    CHECK(problems.unreadableFiles == 0);
    setVersion(raw::kFormatVersion + 1); // a newer agent's records may mean something else
    CHECK(store::readThreadFile(folder / "thread-301", problems).events.empty());
    CHECK(problems.unreadableFiles == 1);
    REQUIRE(problems.messages.size() == 1);
    CHECK_THAT(problems.messages[0], Catch::Contains("unsupported raw format"));
}
