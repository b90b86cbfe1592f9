// SPDX-License-Identifier: MIT
// Per-node conversion and shard merge throughput (issue 22). Writes a synthetic raw capture of
// NODES node folders x RANKS_PER_NODE processes x EVENTS_PER_RANK events (an I/O-like mix on a
// few hundred files, one thread per rank), then, RUNS times, side by side:
//   node     each node's folder converted into its shard (convertShard), one after the other on
//            one core: events per CPU-second is the per-core conversion throughput;
//   merge    the shards merged into one trace (mergeShards, event rows written below SQL:
//            shard_pages.hpp): events per wall second and per CPU-second;
//   sql      the same merge with the event rows copied by INSERT ... SELECT (pageCopy off, the
//            merge before): events per CPU-second;
//   whole    every process converted in one piece (mergeRawDirectory), the current path.
// Prints each run and the medians.
//
//   shard_bench [NODES] [RANKS_PER_NODE] [EVENTS_PER_RANK] [RUNS]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "hpcprof/store/merge.hpp"
#include "hpcprof/store/shards.hpp"

namespace fs = std::filesystem;
namespace raw = hpcprof::schema::raw;
using hpcprof::schema::Op;

namespace {

constexpr int kFiles = 200;

void writeHeader(const fs::path& dir, int pid, int rank, int world, int node) {
    raw::ProcessHeader h{};
    h.magic = raw::kProcessMagic;
    h.version = raw::kFormatVersion;
    h.recordSize = raw::kRecordSize;
    h.pid = pid;
    h.ppid = 1;
    h.rank = rank;
    h.worldSize = world;
    h.localRank = -1;
    h.clockKind = raw::ClockKind::Monotonic;
    // Every node's clock starts elsewhere; the realtime clock places them.
    const int64_t mono = 1'000'000 + int64_t(node) * 777'000'000;
    h.start = {uint64_t(mono), mono, 1'700'000'000'000'000'000};
    h.last = h.start;
    h.endState = raw::EndState::Exited;
    std::snprintf(h.host, sizeof(h.host), "benchnode%d", node);
    std::strcpy(h.rankSource, "bench");
    std::FILE* f = std::fopen((dir / "process.bin").c_str(), "wb");
    std::fwrite(&h, sizeof(h), 1, f);
    std::fclose(f);
}

void pushRecord(std::vector<char>& buf, const char* rec) { buf.insert(buf.end(), rec, rec + 64); }

void pushFileName(std::vector<char>& buf, uint32_t id) {
    char rec[64] = {};
    rec[0] = char(raw::RecordKind::String);
    rec[1] = 1;
    std::string path = "/scratch/run/data/part-" + std::to_string(id) + ".bin";
    uint16_t len = uint16_t(path.size());
    std::memcpy(rec + 2, &len, 2);
    std::memcpy(rec + 4, &id, 4);
    std::memcpy(rec + 8, path.data(), len);
    pushRecord(buf, rec);
}

void pushEvent(std::vector<char>& buf, uint64_t& now, std::mt19937_64& rng) {
    static const Op kOps[] = {Op::PosixRead, Op::PosixWrite, Op::PosixPread64, Op::PosixPwrite64};
    char rec[64] = {};
    rec[0] = char(raw::RecordKind::Event);
    uint16_t op = uint16_t(kOps[rng() % std::size(kOps)]);
    std::memcpy(rec + 2, &op, 2);
    now += 200 + rng() % 2000;
    uint64_t end = now + 300 + rng() % 20000;
    std::memcpy(rec + 8, &now, 8);
    std::memcpy(rec + 16, &end, 8);
    int64_t bytes = int64_t(4096 << (rng() % 6));
    std::memcpy(rec + 24, &bytes, 8);
    uint32_t obj = uint32_t(1 + rng() % kFiles);
    std::memcpy(rec + 32, &obj, 4);
    int32_t fd = int32_t(3 + obj), none = -1;
    std::memcpy(rec + 36, &fd, 4);
    std::memcpy(rec + 40, &none, 4);
    int64_t aux = -1;
    std::memcpy(rec + 56, &aux, 8);
    pushRecord(buf, rec);
    now = end;
}

void writeRank(const fs::path& nodeDir, int rank, int world, int node, int64_t events) {
    const int pid = 1000 + rank;
    fs::path dir = nodeDir / ("proc-" + std::to_string(pid) + "-1000000");
    fs::create_directories(dir);
    writeHeader(dir, pid, rank, world, node);
    std::mt19937_64 rng(uint64_t(rank) + 1);
    std::vector<char> buf;
    buf.reserve(size_t(events + kFiles) * 64);
    for (uint32_t id = 1; id <= uint32_t(kFiles); ++id) pushFileName(buf, id);
    uint64_t now = 1'000'000 + uint64_t(node) * 777'000'000;
    for (int64_t i = 0; i < events; ++i) pushEvent(buf, now, rng);
    raw::ThreadFileHeader th{};
    th.magic = raw::kThreadMagic;
    th.version = raw::kFormatVersion;
    th.recordSize = raw::kRecordSize;
    th.pid = pid;
    th.tid = pid;
    th.capacity = buf.size() / 64;
    std::FILE* f = std::fopen((dir / ("thread-" + std::to_string(pid))).c_str(), "wb");
    std::fwrite(&th, sizeof(th), 1, f);
    std::fwrite(buf.data(), 1, buf.size(), f);
    std::fclose(f);
}

double cpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "shard_bench: %s\n", what.c_str());
    std::exit(1);
}

struct Run {
    double nodePerCpu, mergeWall, mergePerCpu, sqlPerCpu, wholePerCpu, wholeWall, nodeWall;
};

Run runOnce(const fs::path& dir, int nodes, int64_t events) {
    Run r{};
    std::vector<fs::path> shards;
    double cpu0 = cpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < nodes; ++n) {
        hpcprof::store::MergeOptions o;
        o.rawDir = dir / "nodes" / ("node" + std::to_string(n));
        o.output = dir / "shards" / ("shard-node" + std::to_string(n) + ".hpcprof");
        o.force = true;
        auto c = hpcprof::store::convertShard(o, {"node" + std::to_string(n), nodes, 0});
        if (!c) fail(c.status().message());
        shards.push_back(o.output);
    }
    r.nodeWall = seconds(t0);
    r.nodePerCpu = double(events) / (cpuSeconds() - cpu0) / 1e6;
    hpcprof::store::ShardMergeOptions m{shards, dir / "merged.hpcprof", true};
    cpu0 = cpuSeconds();
    t0 = std::chrono::steady_clock::now();
    auto merged = hpcprof::store::mergeShards(m);
    if (!merged) fail(merged.status().message());
    if (merged->events != events) fail("merged trace has " + std::to_string(merged->events) + " events");
    r.mergeWall = double(events) / seconds(t0) / 1e6;
    r.mergePerCpu = double(events) / (cpuSeconds() - cpu0) / 1e6;
    if (!merged->pageCopied) fail("the event rows were not written below SQL: " + merged->pageCopyFallback);
    m.pageCopy = false;
    cpu0 = cpuSeconds();
    if (auto sql = hpcprof::store::mergeShards(m); !sql) fail(sql.status().message());
    r.sqlPerCpu = double(events) / (cpuSeconds() - cpu0) / 1e6;
    // The current path: every process converted in one piece.
    fs::path whole = dir / "whole";
    fs::create_directories(whole);
    for (const auto& node : fs::directory_iterator(dir / "nodes"))
        for (const auto& p : fs::directory_iterator(node.path()))
            if (!fs::exists(whole / p.path().filename()))
                fs::create_directory_symlink(p.path(), whole / p.path().filename());
    hpcprof::store::MergeOptions o;
    o.rawDir = whole;
    o.output = dir / "whole.hpcprof";
    o.force = true;
    cpu0 = cpuSeconds();
    t0 = std::chrono::steady_clock::now();
    if (auto w = hpcprof::store::mergeRawDirectory(o); !w) fail(w.status().message());
    r.wholeWall = seconds(t0);
    r.wholePerCpu = double(events) / (cpuSeconds() - cpu0) / 1e6;
    return r;
}

} // namespace

int main(int argc, char** argv) {
    const int nodes = argc > 1 ? std::atoi(argv[1]) : 4;
    const int perNode = argc > 2 ? std::atoi(argv[2]) : 4;
    const int64_t perRank = argc > 3 ? std::atoll(argv[3]) : 250'000;
    const int runs = argc > 4 ? std::atoi(argv[4]) : 3;
    fs::path dir = fs::temp_directory_path() / ("hpcprof-shard-bench-" + std::to_string(getpid()));
    const int world = nodes * perNode;
    for (int rank = 0; rank < world; ++rank)
        writeRank(dir / "nodes" / ("node" + std::to_string(rank / perNode)), rank, world,
                  rank / perNode, perRank);
    fs::create_directories(dir / "shards");
    const int64_t events = int64_t(world) * perRank;
    std::printf("%d nodes x %d ranks x %lld events = %lld events\n", nodes, perNode,
                (long long)perRank, (long long)events);
    std::vector<double> node, merge, mergeCpu, sqlCpu, whole, nodeWall, wholeWall;
    for (int i = 0; i < runs; ++i) {
        Run r = runOnce(dir, nodes, events);
        std::printf("run %d: node conversion %.2f M events/s per core (%.2f s for all nodes on one "
                    "core), shard merge %.2f M events/s (%.2f per CPU-second; with SQL %.2f per CPU-second), "
                    "one-piece conversion %.2f M events/s per core (%.2f s)\n",
                    i + 1, r.nodePerCpu, r.nodeWall, r.mergeWall, r.mergePerCpu, r.sqlPerCpu, r.wholePerCpu, r.wholeWall);
        node.push_back(r.nodePerCpu);
        merge.push_back(r.mergeWall);
        mergeCpu.push_back(r.mergePerCpu);
        sqlCpu.push_back(r.sqlPerCpu);
        whole.push_back(r.wholePerCpu);
        nodeWall.push_back(r.nodeWall);
        wholeWall.push_back(r.wholeWall);
    }
    std::printf("median: node conversion %.2f M events/s per core (target >= 2), shard merge %.2f M "
                "events/s (%.2f per CPU-second, with SQL %.2f; target >= 20), one-piece conversion %.2f M events/s per core; "
                "with one core per node the conversion takes %.2f s instead of %.2f s\n",
                median(node), median(merge), median(mergeCpu), median(sqlCpu), median(whole), median(nodeWall) / nodes, median(wholeWall));
    fs::remove_all(dir);
    return 0;
}
