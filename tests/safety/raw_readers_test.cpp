// SPDX-License-Identifier: MIT
// `hpcprof merge` against hostile raw captures: folders that are not captures, cut, zeroed,
// bit-flipped and sparse thread files, headers that claim more than the file holds, strings that
// never end. Merge refuses what is not a capture (exit 2, one line, no trace written), converts
// what is damaged with the damage counted, and stays fast and bounded in memory.
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <random>

#include "hostile_corpus.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "raw_builder.hpp"
#include "reader_checks.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::test;
namespace fs = std::filesystem;
namespace raw = schema::raw;

namespace {

constexpr int kEvents = 600; // events of the capture's main thread

/// A one-process capture: a main thread reading a file with a hostile name, a second thread.
/// Returns the main thread's file.
fs::path writeCapture(const fs::path& rawDir) {
    RawThreadBuilder main(4242);
    main.string(1, corpus::hostileFileName());
    for (int i = 0; i < kEvents; ++i) {
        RawEventSpec e{uint16_t(schema::Op::PosixRead), uint64_t(1000 + 100 * i),
                       uint64_t(1050 + 100 * i)};
        e.objectId = 1;
        e.fd = 3;
        e.bytes = 4096;
        main.event(e);
    }
    RawThreadBuilder other(4243);
    other.event({uint16_t(schema::Op::PosixRead), 5000, 6000});
    auto header = makeProcessHeader(4242, 1000, 0);
    header.endMonotonicNs = 100'000;
    fs::path dir = writeRawProcess(rawDir, header, {main, other});
    return dir / "thread-4242";
}

/// Patches `bytes` at `offset` of `file`.
void patch(const fs::path& file, size_t offset, const void* bytes, size_t n) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(offset));
    f.write(static_cast<const char*>(bytes), std::streamsize(n));
}

void setCapacity(const fs::path& threadFile, uint64_t capacity) {
    patch(threadFile, offsetof(raw::ThreadFileHeader, capacity), &capacity, sizeof capacity);
}

int64_t stat(const std::string& trace, const std::string& name) {
    return TraceQuery(trace).scalar("SELECT value FROM stats WHERE name = '" + name + "'");
}

int64_t events(const std::string& trace) {
    return TraceQuery(trace).scalar("SELECT COUNT(*) FROM event");
}

/// Largest resident set of the children waited for so far, in MiB.
long childrenMaxRssMib() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return u.ru_maxrss / 1024;
}

struct MergeFixture {
    TempDir dir;
    ReaderRunner runner{dir.path()};
    int next = 0;
    /// Merges `rawDir` into a new trace; returns its path.
    std::string merge(const fs::path& rawDir, const std::vector<int>& codes,
                      const std::string& refusal = {}) {
        const std::string out = (dir.path() / ("t" + std::to_string(next++) + ".hpcprof")).string();
        auto r = runner.run({hpcprofBinary(), "merge", rawDir.string(), "-o", out}, codes,
                            Output::None, out, refusal);
        if (r.exitCode == 0) {
            // What merge wrote is readable by every report format.
            runner.run({hpcprofBinary(), "report", out, "--format", "json"}, {0}, Output::Json);
            runner.run({hpcprofBinary(), "report", out}, {0}, Output::Text);
        }
        return out;
    }
};

} // namespace

TEST_CASE("merge refuses folders that are not captures, with one line and no trace",
          "[robustness][merge]") {
    MergeFixture f;
    const fs::path empty = f.dir.path() / "empty";
    fs::create_directory(empty);
    f.merge(empty, {2}, "not a raw capture");
    const fs::path other = f.dir.path() / "other";
    fs::create_directories(other / "sub");
    std::ofstream(other / "notes.txt") << "hello\n";
    std::ofstream(other / "thread-1") << "not a capture\n";
    f.merge(other, {2}, "not a raw capture");
    const fs::path garbage = f.dir.path() / "garbage";
    fs::create_directories(garbage / "proc-1-2");
    std::ofstream(garbage / "proc-1-2" / "process.bin") << std::string(5000, 'z');
    f.merge(garbage, {2}, "no readable process folder");
    std::ofstream(f.dir.path() / "a-file") << "x";
    f.merge(f.dir.path() / "a-file", {2}, "not a folder");
    f.merge(f.dir.path() / "does-not-exist", {2}, "no such folder");
    // The same folder with a capture in it is fine; its hostile path stays out of the terminal.
    const fs::path hostile = f.dir.path() / "raw\xff\x1b[31m\r\x07";
    writeCapture(hostile);
    auto out = f.merge(hostile, {0});
    CHECK(events(out) == kEvents + 1);
    ReaderRunner::checkNoLeftovers(f.dir.path());
    f.runner.validateQueued();
}

TEST_CASE("merge converts cut, zeroed and bit-flipped raw files with the damage counted",
          "[robustness][merge]") {
    MergeFixture f;
    {
        const fs::path rawDir = f.dir.path() / "cut";
        const fs::path t = writeCapture(rawDir);
        fs::resize_file(t, raw::kHeaderSize + 64 * 200 + 17); // mid-record; the header says 601
        auto out = f.merge(rawDir, {0});
        CHECK(stat(out, "thread_files_truncated") == 1);
        CHECK(events(out) == 199 + 1); // 200 slots: the string, 199 reads; the other thread's read
    }
    {
        const fs::path rawDir = f.dir.path() / "zeroed-header";
        const fs::path t = writeCapture(rawDir);
        const std::string zeros(raw::kHeaderSize, '\0');
        patch(t, 0, zeros.data(), zeros.size());
        auto out = f.merge(rawDir, {0});
        CHECK(stat(out, "raw_files_unreadable") == 1);
        CHECK(events(out) == 1);
    }
    {
        // A thread whose process ended while it set its file up: space reserved, no magic, no
        // record (the agent writes the magic last). Nothing lost: not counted as damage.
        const fs::path rawDir = f.dir.path() / "never-initialised";
        const fs::path t = writeCapture(rawDir);
        const std::string zeros(raw::kHeaderSize + 4 * raw::kRecordSize, '\0');
        patch(t, 0, zeros.data(), zeros.size());
        fs::resize_file(t, zeros.size());
        auto out = f.merge(rawDir, {0});
        CHECK(stat(out, "raw_files_unreadable") == 0);
        CHECK(events(out) == 1);
    }
    {
        const fs::path rawDir = f.dir.path() / "other-version";
        const fs::path t = writeCapture(rawDir);
        const uint32_t version = 99;
        patch(t, offsetof(raw::ThreadFileHeader, version), &version, sizeof version);
        auto out = f.merge(rawDir, {0});
        CHECK(stat(out, "raw_files_unreadable") == 1);
    }
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        INFO("seed " << seed);
        const fs::path rawDir = f.dir.path() / ("flipped-" + std::to_string(seed));
        const fs::path t = writeCapture(rawDir);
        std::string data = readWholeFile(t.string());
        std::mt19937 rng(seed);
        for (int i = 0; i < 200; ++i)
            data[raw::kHeaderSize + rng() % (data.size() - raw::kHeaderSize)] ^=
                char(1u << (rng() % 8));
        std::ofstream(t, std::ios::binary) << data;
        f.merge(rawDir, {0});
        // A damaged process header: refused or read, never a crash.
        const fs::path p = t.parent_path() / "process.bin";
        std::string h = readWholeFile(p.string());
        for (int i = 0; i < 64; ++i)
            h[rng() % h.size()] ^= char(1u << (rng() % 8));
        std::ofstream(p, std::ios::binary) << h;
        f.merge(rawDir, {0, 2});
    }
    ReaderRunner::checkNoLeftovers(f.dir.path());
    f.runner.validateQueued();
}

TEST_CASE("merge reads a sparse multi-GiB thread file only as far as its header vouches, fast and "
          "in bounded memory",
          "[robustness][merge]") {
    MergeFixture f;
    constexpr uint64_t kSparse = uint64_t(8) << 30;
    {
        // The file was extended after the run (truncate -s 8G): the header still says 601 slots.
        const fs::path rawDir = f.dir.path() / "extended";
        fs::resize_file(writeCapture(rawDir), kSparse);
        auto start = std::chrono::steady_clock::now();
        auto out = f.merge(rawDir, {0});
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
        CHECK(events(out) == kEvents + 1);
        CHECK(stat(out, "raw_file_tails_ignored") == 1);
    }
    {
        // The header claims 2^40 slots, the file is 8 GiB of which 37 KiB are data, and one
        // record of garbage sits at its very end: the holes are not read, each counts as torn.
        const fs::path rawDir = f.dir.path() / "claims-too-much";
        const fs::path t = writeCapture(rawDir);
        setCapacity(t, uint64_t(1) << 40);
        fs::resize_file(t, kSparse);
        const char garbage[64] = {char(0x77), 1, 2, 3};
        patch(t, kSparse - 64, garbage, sizeof garbage);
        auto start = std::chrono::steady_clock::now();
        auto out = f.merge(rawDir, {0});
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
        CHECK(events(out) == kEvents + 1);
        CHECK(stat(out, "thread_files_truncated") == 1);
        CHECK(stat(out, "records_torn") > 0);
    }
    CHECK(childrenMaxRssMib() < 1024);
    ReaderRunner::checkNoLeftovers(f.dir.path());
    f.runner.validateQueued();
}

TEST_CASE("merge gives up strings that never end instead of searching them all for every piece",
          "[robustness][merge]") {
    MergeFixture f;
    const fs::path rawDir = f.dir.path() / "strings";
    RawThreadBuilder t(7);
    // 200 000 first pieces of strings that never get their last piece, then one real event.
    std::array<char, 64> piece{};
    piece[0] = char(raw::RecordKind::String);
    piece[2] = 8; // length
    for (uint32_t id = 1; id <= 200'000; ++id) {
        std::memcpy(&piece[4], &id, 4);
        t.record(piece);
    }
    t.event({uint16_t(schema::Op::PosixRead), 5000, 6000});
    writeRawProcess(rawDir, makeProcessHeader(7, 1000, 0), {t});
    auto start = std::chrono::steady_clock::now();
    auto out = f.merge(rawDir, {0});
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    CHECK(events(out) == 1);
    CHECK(stat(out, "unknown_string_refs") == 200'000);
    f.runner.validateQueued();
}
