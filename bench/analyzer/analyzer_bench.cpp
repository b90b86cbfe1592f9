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

constexpr int64_t kPerStep = 14; // events per rank and step: 8 on the CPU thread, 6 on the GPU stream
constexpr int64_t kStepNs = 1'000'000;

/// The interned names and objects every rank's events refer to.
struct Names {
    int64_t comm, allreduce, send, recv, read, write, sync, memcpy, step;
    int64_t kernels[4];
    int64_t file;
};

Names internNames(store::TraceWriter& w, int64_t ranks) {
    Names n;
    n.comm = w.internCommunicator("MPI_COMM_WORLD", ranks, "mpi");
    n.allreduce = w.internString("MPI_Allreduce");
    n.send = w.internString("MPI_Send");
    n.recv = w.internString("MPI_Recv");
    n.read = w.internString("read");
    n.write = w.internString("write");
    n.sync = w.internString("cudaStreamSynchronize");
    n.memcpy = w.internString("Memcpy HtoD");
    n.step = w.internString("ProfilerStep#");
    const char* kernels[4] = {"volta_sgemm_128x64_nn", "elementwise_kernel", "reduce_kernel",
                              "ampere_bf16_s16816gemm"};
    for (int k = 0; k < 4; ++k) n.kernels[k] = w.internString(kernels[k]);
    n.file = w.internObject(w.internString("/data/train.bin"), "/data/train.bin");
    return n;
}

bool writeProcesses(store::TraceWriter& w, int64_t ranks, int64_t steps) {
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
        p.endTs = steps * kStepNs;
        p.endState = "exited";
        p.clockMethod = "monotonic";
        if (!w.insertProcess(p).ok()) return false;
    }
    return true;
}

/// One track's events as they are inserted: builds the rows and keeps the first and last event
/// id and the count for finishTrack.
class TrackFill {
public:
    TrackFill(store::TraceWriter& w, int64_t track) : m_w(w), m_track(track) {}

    store::EventRow row(Category c, int64_t name, int64_t ts, int64_t dur, int64_t depth = 0) const {
        store::EventRow e;
        e.trackId = m_track;
        e.ts = ts;
        e.dur = dur;
        e.categoryId = int64_t(c);
        e.nameId = name;
        e.depth = depth;
        return e;
    }
    void put(const store::EventRow& e, const store::EventDetail& d = {}) {
        int64_t id = m_w.insertEvent(e, d);
        if (!m_first) m_first = id;
        m_last = id;
        ++m_count;
    }
    bool finish() { return m_w.finishTrack(m_track, m_first, m_last, m_count).ok(); }

private:
    store::TraceWriter& m_w;
    int64_t m_track;
    int64_t m_first = 0, m_last = 0, m_count = 0;
};

/// CPU thread: 8 events per step.
void fillCpuStep(TrackFill& cpu, const Names& n, int64_t r, int64_t ranks, int64_t s) {
    const int64_t late = (r == ranks / 2) ? 30'000 : 0; // one rank drifts late into every Allreduce
    int64_t t = s * kStepNs;
    cpu.put(cpu.row(Category::UserRange, n.step, t, kStepNs - 1000));
    cpu.put(cpu.row(Category::PosixIo, n.read, t + 10'000, 40'000, 1), {});
    auto rd = cpu.row(Category::PosixIo, n.read, t + 60'000, 8'000, 1);
    rd.bytes = 4096;
    rd.objectId = n.file;
    cpu.put(rd);
    auto snd = cpu.row(Category::MpiP2p, n.send, t + 100'000, 20'000, 1);
    snd.peer = (r + 1) % ranks;
    snd.bytes = 65536;
    store::EventDetail tag;
    tag.tag = 7;
    cpu.put(snd, tag);
    auto rcv = cpu.row(Category::MpiP2p, n.recv, t + 125'000, 25'000, 1);
    rcv.peer = (r + ranks - 1) % ranks;
    rcv.bytes = 65536;
    cpu.put(rcv, tag);
    cpu.put(cpu.row(Category::GpuSync, n.sync, t + 300'000, 50'000, 1));
    auto ar = cpu.row(Category::MpiCollective, n.allreduce, t + 700'000 + late, 100'000 - late, 1);
    ar.communicatorId = n.comm;
    ar.seq = s;
    ar.bytes = 8 << 20;
    cpu.put(ar);
    auto wr = cpu.row(Category::PosixIo, n.write, t + 850'000, 5'000, 1);
    wr.bytes = 512;
    wr.objectId = n.file;
    cpu.put(wr);
}

/// GPU stream: 6 events per step.
void fillGpuStep(TrackFill& gpu, const Names& n, int64_t s) {
    int64_t t = s * kStepNs;
    auto cp = gpu.row(Category::GpuMemcpy, n.memcpy, t + 70'000, 20'000);
    cp.bytes = 1 << 20;
    gpu.put(cp);
    for (int k = 0; k < 5; ++k)
        gpu.put(gpu.row(Category::GpuKernel, n.kernels[k % 4], t + 150'000 + k * 100'000, 80'000));
}

bool writeRank(store::TraceWriter& w, const Names& n, int64_t r, int64_t ranks, int64_t steps) {
    int64_t thread = w.insertThread(r + 1, 10000 + r, "main");
    TrackFill cpu(w, w.insertTrack(r + 1, thread, "cpu_thread", "main", std::nullopt, std::nullopt));
    for (int64_t s = 0; s < steps; ++s) fillCpuStep(cpu, n, r, ranks, s);
    if (!cpu.finish()) return false;
    TrackFill gpu(w, w.insertTrack(r + 1, std::nullopt, "gpu_stream", "GPU 0 stream 7", 0, 7));
    for (int64_t s = 0; s < steps; ++s) fillGpuStep(gpu, n, s);
    return gpu.finish();
}

int generate(const std::string& path, int64_t ranks, int64_t totalEvents) {
    auto created = store::TraceWriter::create(path);
    if (!created) {
        std::fprintf(stderr, "%s\n", created.status().message().c_str());
        return 1;
    }
    store::TraceWriter& w = created.value();
    const int64_t steps = std::max<int64_t>(1, totalEvents / ranks / kPerStep);
    const Names names = internNames(w, ranks);
    if (!writeProcesses(w, ranks, steps)) return 1;
    for (int64_t r = 0; r < ranks; ++r)
        if (!writeRank(w, names, r, ranks, steps)) return 1;
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
