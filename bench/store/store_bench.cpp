// SPDX-License-Identifier: MIT
// Store throughput benchmark: writes a synthetic raw capture (processes x threads x events, an
// I/O-like mix of reads, writes, pwrites, opens and closes on a few hundred files), converts it
// with the store step and reports events per second (one core) and trace bytes per event.
//
//   store_bench [EVENTS_TOTAL] [PROCESSES] [THREADS_PER_PROCESS] [KEEP_TRACE_AS]
//
// KEEP_TRACE_AS keeps a copy of the trace (e.g. to see where its bytes go with the dbstat table).
#include <sys/resource.h>

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

namespace fs = std::filesystem;
namespace raw = hpcprof::schema::raw;
using hpcprof::schema::Op;

namespace {

constexpr int kFiles = 200; // file ids 1..kFiles, each with a string record per thread

void writeProcessHeader(const fs::path& dir, int pid) {
    raw::ProcessHeader h{};
    h.magic = raw::kProcessMagic;
    h.version = raw::kFormatVersion;
    h.recordSize = raw::kRecordSize;
    h.pid = pid;
    h.ppid = 1;
    h.rank = pid - 1000;
    h.worldSize = -1;
    h.localRank = -1;
    h.clockKind = raw::ClockKind::Monotonic;
    h.start = {1'000'000, 1'000'000, 1'700'000'000'000'000'000};
    h.last = h.start;
    h.endState = raw::EndState::Exited;
    std::strcpy(h.host, "benchhost");
    std::strcpy(h.rankSource, "bench");
    std::FILE* pf = std::fopen((dir / "process.bin").c_str(), "wb");
    std::fwrite(&h, sizeof(h), 1, pf);
    std::fclose(pf);
}

/// The string record that names file `id`.
void pushFileName(std::vector<char>& buf, uint32_t id) {
    char rec[64] = {};
    rec[0] = char(raw::RecordKind::String);
    rec[1] = 1;
    std::string path = "/scratch/run/data/shard-" + std::to_string(id) + ".bin";
    uint16_t len = uint16_t(path.size());
    std::memcpy(rec + 2, &len, 2);
    std::memcpy(rec + 4, &id, 4);
    std::memcpy(rec + 8, path.data(), len);
    buf.insert(buf.end(), rec, rec + 64);
}

/// One I/O event record after `now` (advanced to its end); the draws from `rng` in a fixed order.
void pushEvent(std::vector<char>& buf, uint64_t& now, std::mt19937_64& rng) {
    static const Op kOps[] = {Op::PosixRead, Op::PosixWrite, Op::PosixPread64, Op::PosixPwrite64,
                              Op::StdioFwrite, Op::PosixLseek};
    char rec[64] = {};
    rec[0] = char(raw::RecordKind::Event);
    Op op = kOps[rng() % std::size(kOps)];
    uint16_t opId = uint16_t(op);
    std::memcpy(rec + 2, &opId, 2);
    now += 200 + rng() % 2000;
    uint64_t end = now + 300 + rng() % 20000;
    std::memcpy(rec + 8, &now, 8);
    std::memcpy(rec + 16, &end, 8);
    int64_t bytes = op == Op::PosixLseek ? -1 : int64_t(4096 << (rng() % 6));
    std::memcpy(rec + 24, &bytes, 8);
    uint32_t obj = uint32_t(1 + rng() % kFiles);
    std::memcpy(rec + 32, &obj, 4);
    int32_t fd = int32_t(3 + obj), none = -1;
    std::memcpy(rec + 36, &fd, 4);
    std::memcpy(rec + 40, &none, 4);
    int64_t aux = -1;
    if (op == Op::PosixPread64 || op == Op::PosixPwrite64) {
        rec[1] = char(raw::kFlagHasOffset);
        aux = int64_t(rng() % (1ull << 30));
    }
    std::memcpy(rec + 56, &aux, 8);
    buf.insert(buf.end(), rec, rec + 64);
    now = end;
}

void writeThread(const fs::path& dir, int pid, int tid, int64_t events, std::mt19937_64& rng) {
    std::FILE* f = std::fopen((dir / ("thread-" + std::to_string(tid))).c_str(), "wb");
    raw::ThreadFileHeader th{};
    th.magic = raw::kThreadMagic;
    th.version = raw::kFormatVersion;
    th.recordSize = raw::kRecordSize;
    th.pid = pid;
    th.tid = tid;
    std::vector<char> buf;
    buf.reserve(size_t(events + 300) * 64);
    for (uint32_t id = 1; id <= uint32_t(kFiles); ++id) pushFileName(buf, id);
    uint64_t now = 1'000'000;
    for (int64_t i = 0; i < events; ++i) pushEvent(buf, now, rng);
    th.capacity = buf.size() / 64;
    std::fwrite(&th, sizeof(th), 1, f);
    std::fwrite(buf.data(), 1, buf.size(), f);
    std::fclose(f);
}

void writeProcess(const fs::path& rawDir, int pid, int threads, int64_t eventsPerThread,
                  std::mt19937_64& rng) {
    fs::path dir = rawDir / ("proc-" + std::to_string(pid) + "-1000000");
    fs::create_directories(dir);
    writeProcessHeader(dir, pid);
    for (int t = 0; t < threads; ++t) writeThread(dir, pid, pid * 100 + t, eventsPerThread, rng);
}

double cpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

} // namespace

int main(int argc, char** argv) {
    int64_t total = argc > 1 ? std::atoll(argv[1]) : 4'000'000;
    int procs = argc > 2 ? std::atoi(argv[2]) : 4;
    int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    fs::path dir = fs::temp_directory_path() / ("hpcprof-store-bench-" + std::to_string(getpid()));
    fs::remove_all(dir);
    std::mt19937_64 rng(42);
    for (int p = 0; p < procs; ++p)
        writeProcess(dir / "raw", 1000 + p, threads, total / (procs * threads), rng);

    hpcprof::store::MergeOptions o;
    o.rawDir = dir / "raw";
    o.output = dir / "bench.hpcprof";
    double cpu0 = cpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    auto r = hpcprof::store::mergeRawDirectory(o);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = cpuSeconds() - cpu0;
    if (!r) {
        std::fprintf(stderr, "merge failed: %s\n", r.status().message().c_str());
        return 1;
    }
    auto size = fs::file_size(o.output);
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("events %lld, processes %d, threads %d\n", (long long)r->events, procs,
                procs * threads);
    std::printf("wall %.3f s, cpu %.3f s, %.2f million events/s (wall), %.2f million events/s per "
                "cpu-second\n",
                wall, cpu, double(r->events) / wall / 1e6, double(r->events) / cpu / 1e6);
    std::printf("trace %llu bytes, %.1f bytes/event; peak RSS %ld MiB\n", (unsigned long long)size,
                double(size) / double(r->events), ru.ru_maxrss / 1024);
    if (argc > 4) {
        std::error_code ec;
        fs::rename(o.output, argv[4], ec);
        if (ec) fs::copy_file(o.output, argv[4], fs::copy_options::overwrite_existing, ec);
        if (ec) std::fprintf(stderr, "cannot keep the trace as %s: %s\n", argv[4], ec.message().c_str());
    }
    fs::remove_all(dir);
    return 0;
}
