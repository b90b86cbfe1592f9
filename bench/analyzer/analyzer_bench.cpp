// SPDX-License-Identifier: MIT
// Analyzer benchmark. `gen` writes a synthetic trace (ranks x events, a realistic mix per step:
// compute gaps, an Allreduce with one rank drifting late, ring send/recv with tags, file reads and
// writes, a stream sync, GPU kernels and a copy on a GPU stream, a ProfilerStep range);
// `analyze` runs the full analysis (analyzeTrace + rules; THREADS workers, default: the hardware's)
// and prints wall and CPU seconds and peak RSS. The two
// are separate processes so the RSS is the analysis's own. Results: docs/performance.md.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hpcprof/store/trace_writer.hpp"
#include "hpcprof/analyzer/analyze.hpp"

using namespace hpcprof;
using schema::Category;

namespace {

int generate(const std::string& path, int64_t ranks, int64_t totalEvents) {
    auto created = store::TraceWriter::create(path);
    if (!created) {
        std::fprintf(stderr, "%s\n", created.status().message().c_str());
        return 1;
    }
    store::TraceWriter& w = created.value();
    constexpr int64_t kPerStep = 14; // events per rank and step, see below
    const int64_t steps = std::max<int64_t>(1, totalEvents / ranks / kPerStep);
    const int64_t stepNs = 1'000'000;
    const int64_t comm = w.internCommunicator("MPI_COMM_WORLD", ranks, "mpi");
    const int64_t nAllreduce = w.internString("MPI_Allreduce"), nSend = w.internString("MPI_Send"),
                  nRecv = w.internString("MPI_Recv"), nRead = w.internString("read"),
                  nWrite = w.internString("write"), nSync = w.internString("cudaStreamSynchronize"),
                  nMemcpy = w.internString("Memcpy HtoD"), nStep = w.internString("ProfilerStep#");
    int64_t kernels[4] = {w.internString("volta_sgemm_128x64_nn"), w.internString("elementwise_kernel"),
                          w.internString("reduce_kernel"), w.internString("ampere_bf16_s16816gemm")};
    const int64_t file = w.internObject(w.internString("/data/train.bin"), "/data/train.bin");
    for (int64_t r = 0; r < ranks; ++r) {
        store::ProcessRow p;
        p.id = r + 1;
        p.rank = r;
        p.worldSize = ranks;
        p.rankSource = "bench";
        p.host = "node" + std::to_string(r / 8);
        p.pid = 10000 + r;
        p.command = p.exe = "bench";
        p.startTs = 0;
        p.endTs = steps * stepNs;
        p.endState = "exited";
        p.clockMethod = "monotonic";
        if (!w.insertProcess(p).ok()) return 1;
    }
    for (int64_t r = 0; r < ranks; ++r) {
        int64_t thread = w.insertThread(r + 1, 10000 + r, "main");
        int64_t cpu = w.insertTrack(r + 1, thread, "cpu_thread", "main", std::nullopt, std::nullopt);
        int64_t first = 0, last = 0, count = 0;
        auto add = [&](int64_t track, Category c, int64_t name, int64_t ts, int64_t dur, int64_t depth = 0) {
            store::EventRow e;
            e.trackId = track;
            e.ts = ts;
            e.dur = dur;
            e.categoryId = int64_t(c);
            e.nameId = name;
            e.depth = depth;
            return e;
        };
        auto put = [&](const store::EventRow& e, const store::EventDetail& d = {}) {
            int64_t id = w.insertEvent(e, d);
            if (!first) first = id;
            last = id;
            ++count;
        };
        // CPU thread: 8 events per step.
        const int64_t late = (r == ranks / 2) ? 30'000 : 0; // one rank drifts late into every Allreduce
        for (int64_t s = 0; s < steps; ++s) {
            int64_t t = s * stepNs;
            put(add(cpu, Category::UserRange, nStep, t, stepNs - 1000));
            put(add(cpu, Category::PosixIo, nRead, t + 10'000, 40'000, 1), {});
            auto rd = add(cpu, Category::PosixIo, nRead, t + 60'000, 8'000, 1);
            rd.bytes = 4096;
            rd.objectId = file;
            put(rd);
            auto snd = add(cpu, Category::MpiP2p, nSend, t + 100'000, 20'000, 1);
            snd.peer = (r + 1) % ranks;
            snd.bytes = 65536;
            store::EventDetail tag;
            tag.tag = 7;
            put(snd, tag);
            auto rcv = add(cpu, Category::MpiP2p, nRecv, t + 125'000, 25'000, 1);
            rcv.peer = (r + ranks - 1) % ranks;
            rcv.bytes = 65536;
            put(rcv, tag);
            put(add(cpu, Category::GpuSync, nSync, t + 300'000, 50'000, 1));
            auto ar = add(cpu, Category::MpiCollective, nAllreduce, t + 700'000 + late, 100'000 - late, 1);
            ar.communicatorId = comm;
            ar.seq = s;
            ar.bytes = 8 << 20;
            put(ar);
            auto wr = add(cpu, Category::PosixIo, nWrite, t + 850'000, 5'000, 1);
            wr.bytes = 512;
            wr.objectId = file;
            put(wr);
        }
        if (!w.finishTrack(cpu, first, last, count).ok()) return 1;
        // GPU stream: 6 events per step.
        int64_t gpu = w.insertTrack(r + 1, std::nullopt, "gpu_stream", "GPU 0 stream 7", 0, 7);
        first = last = count = 0;
        for (int64_t s = 0; s < steps; ++s) {
            int64_t t = s * stepNs;
            auto cp = add(gpu, Category::GpuMemcpy, nMemcpy, t + 70'000, 20'000);
            cp.bytes = 1 << 20;
            put(cp);
            for (int k = 0; k < 5; ++k)
                put(add(gpu, Category::GpuKernel, kernels[k % 4], t + 150'000 + k * 100'000, 80'000));
        }
        if (!w.finishTrack(gpu, first, last, count).ok()) return 1;
    }
    store::StatCounts zero{};
    if (!w.writeStats(zero, {}).ok() || !w.error().ok() || !w.finish().ok()) {
        std::fprintf(stderr, "write failed: %s\n", w.error().message().c_str());
        return 1;
    }
    std::printf("generated %lld ranks x %lld steps = %lld events\n", (long long)ranks, (long long)steps,
                (long long)(ranks * steps * kPerStep));
    return 0;
}

int analyze(const std::string& path, int threads) {
    auto t0 = std::chrono::steady_clock::now();
    auto trace = analyzer::Trace::open(path);
    if (!trace) {
        std::fprintf(stderr, "%s\n", trace.status().message().c_str());
        return 1;
    }
    analyzer::AnalysisOptions options;
    options.threads = threads;
    auto a = analyzer::analyzeTrace(*trace, options);
    auto t1 = std::chrono::steady_clock::now();
    if (!a) {
        std::fprintf(stderr, "%s\n", a.status().message().c_str());
        return 1;
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    std::printf("events=%lld ranks=%lld seconds=%.3f cpu_seconds=%.3f peak_rss_mb=%.1f findings=%zu"
                " load_balance=%.3f\n",
                (long long)a->summary.events, (long long)a->summary.rankCount,
                std::chrono::duration<double>(t1 - t0).count(), secs(ru.ru_utime) + secs(ru.ru_stime),
                double(ru.ru_maxrss) / 1024.0, a->findings.size(), a->pop.loadBalance);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "gen")
        return generate(argv[2], std::atoll(argv[3]), std::atoll(argv[4]));
    if ((argc == 3 || argc == 4) && std::string(argv[1]) == "analyze")
        return analyze(argv[2], argc == 4 ? std::atoi(argv[3]) : 0);
    std::fprintf(stderr, "usage: analyzer_bench gen TRACE RANKS EVENTS | analyzer_bench analyze TRACE [THREADS]\n");
    return 2;
}
