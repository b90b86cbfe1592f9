// SPDX-License-Identifier: MIT
// Writes a synthetic Kineto-like trace of N events for the import benchmark: profiler steps
// (user annotations) holding nested CPU ops, each launching a kernel (cudaLaunchKernel + kernel
// with correlation ids and Kineto's usual kernel args), with memcpys and NCCL all-reduces mixed
// in, on two CPU threads and three GPU streams. Fractional microsecond timestamps, as newer
// PyTorch versions write them. RANK and WORLD fill distributedInfo, so that one file per rank
// makes a multi-rank set for `hpcprof import`; each rank's clock starts RANK x 3 µs later and
// its ops are RANK x 1 ns longer, so the ranks are not identical.
//
//   kineto_gen OUT.json[.gz] [EVENTS [RANK WORLD]]
#include <zlib.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

class Out {
public:
    explicit Out(const std::string& path) {
        bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
        if (gz)
            m_gz = gzopen(path.c_str(), "wb1");
        else
            m_file = std::fopen(path.c_str(), "wb");
        if (!m_gz && !m_file) {
            std::perror(path.c_str());
            std::exit(2);
        }
    }
    ~Out() {
        flush();
        if (m_gz) gzclose(m_gz);
        if (m_file) std::fclose(m_file);
    }
    std::string& buf() { return m_buf; }
    void maybeFlush() {
        if (m_buf.size() > (1 << 20)) flush();
    }

private:
    void flush() {
        if (m_gz) gzwrite(m_gz, m_buf.data(), unsigned(m_buf.size()));
        if (m_file) std::fwrite(m_buf.data(), 1, m_buf.size(), m_file);
        m_buf.clear();
    }
    gzFile m_gz = nullptr;
    std::FILE* m_file = nullptr;
    std::string m_buf;
};

/// Microseconds with three decimals from ns.
std::string us(long long ns) {
    char b[40];
    std::snprintf(b, sizeof b, "%lld.%03lld", ns / 1000, ns % 1000);
    return b;
}

/// The trace's events, one step after another, until `target` events are written.
class Generator {
public:
    Generator(Out& out, long long target, int rank, int world)
        : m_out(out), m_target(target), m_rank(rank), m_world(world) {
        m_t = m_gpuT = kBase + rank * 3000LL;
    }

    void writeAll() {
        std::string& b = m_out.buf();
        char head[256];
        std::snprintf(head, sizeof head,
                      "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", "
                      "\"rank\": %d, \"world_size\": %d}, \"deviceProperties\": [{\"id\": 0, "
                      "\"name\": \"Synthetic GPU\"}], \"traceEvents\": [\n",
                      m_rank, m_world);
        b += head;
        while (!full()) writeStep();
        m_out.buf() += "\n]}\n";
    }
    long long events() const { return m_events; }

private:
    static constexpr long long kBase = 1700000000000000000LL; // ns

    bool full() const { return m_events >= m_target; }

    void emit(const char* s) {
        std::string& b = m_out.buf();
        if (!m_first) b += ",\n";
        m_first = false;
        b += s;
        ++m_events;
        m_out.maybeFlush();
    }

    /// One step: an annotation around 16 ops.
    void writeStep() {
        long long stepStart = m_t;
        std::string stepName = "ProfilerStep#" + std::to_string(m_step++);
        long long stepDur = 16 * (9000 + m_rank) + 500;
        std::snprintf(m_line, sizeof m_line,
                      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", \"pid\": "
                      "4037, \"tid\": 4037, \"ts\": %s, \"dur\": %s, \"args\": {\"External id\": "
                      "%lld}}",
                      stepName.c_str(), us(stepStart).c_str(), us(stepDur).c_str(), m_corr);
        emit(m_line);
        m_t += 250;
        for (int op = 0; op < 16 && !full(); ++op)
            if (!writeOp(op)) break;
        m_t = stepStart + stepDur + 1000;
    }

    /// A CPU op, its launch and its GPU event; false when the trace is full before its end.
    bool writeOp(int op) {
        bool comm = op == 15, copy = op == 7;
        std::snprintf(m_line, sizeof m_line,
                      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::%s\", \"pid\": "
                      "4037, \"tid\": 4037, \"ts\": %s, \"dur\": %s, \"args\": {\"External "
                      "id\": %lld, \"Ev Idx\": %lld, \"Input Dims\": [[2048, 1024], [1024]], "
                      "\"Input type\": [\"float\", \"float\"]}}",
                      copy ? "copy_" : comm ? "all_reduce" : "addmm", us(m_t).c_str(),
                      us(8000).c_str(), m_corr, m_events);
        emit(m_line);
        if (full()) return false;
        std::snprintf(m_line, sizeof m_line,
                      "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": "
                      "4037, \"tid\": 4037, \"ts\": %s, \"dur\": %s, \"args\": {\"External "
                      "id\": %lld, \"cbid\": 211, \"correlation\": %lld}}",
                      copy ? "cudaMemcpyAsync" : "cudaLaunchKernel", us(m_t + 1500).c_str(),
                      us(4250).c_str(), m_corr, m_corr);
        emit(m_line);
        if (full()) return false;
        m_gpuT = std::max(m_gpuT, m_t + 6000) + 125;
        formatGpuEvent(op, comm, copy);
        emit(m_line);
        m_gpuT += 5555;
        ++m_corr;
        m_t += 9000 + m_rank;
        return true;
    }

    /// The GPU side of op `op`: a memcpy, an NCCL all-reduce kernel or a GEMM kernel.
    void formatGpuEvent(int op, bool comm, bool copy) {
        int stream = comm ? 25 : copy ? 23 : 7;
        if (copy)
            std::snprintf(m_line, sizeof m_line,
                          "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD "
                          "(Pinned -> Device)\", \"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": "
                          "%s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": "
                          "1, \"stream\": %d, \"correlation\": %lld, \"bytes\": 8388608, "
                          "\"memory bandwidth (GB/s)\": 20.5}}",
                          stream, us(m_gpuT).c_str(), us(3333).c_str(), m_corr, stream, m_corr);
        else if (comm)
            std::snprintf(m_line, sizeof m_line,
                          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                          "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<"
                          "4096ul>)\", \"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": %s, "
                          "\"args\": {\"External id\": %lld, \"device\": 0, \"stream\": %d, "
                          "\"correlation\": %lld, \"grid\": [2, 1, 1], \"block\": [512, 1, "
                          "1], \"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In "
                          "msg nelems\": 2097152, \"Out msg nelems\": 2097152, \"Group "
                          "size\": 8, \"Process Group Name\": \"0\"}}",
                          stream, us(m_gpuT).c_str(), us(7777).c_str(), m_corr, stream, m_corr);
        else
            std::snprintf(m_line, sizeof m_line,
                          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void "
                          "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_%d>(Params)\", "
                          "\"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": %s, \"args\": "
                          "{\"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": "
                          "1, \"stream\": %d, \"correlation\": %lld, \"registers per "
                          "thread\": 128, \"shared memory\": 49152, \"blocks per SM\": 1.5, "
                          "\"warps per SM\": 6.0, \"grid\": [16, 8, 1], \"block\": [128, 1, "
                          "1], \"est. achieved occupancy %%\": 25}}",
                          op % 4, stream, us(m_gpuT).c_str(), us(5555).c_str(), m_corr,
                          stream, m_corr);
    }

    Out& m_out;
    const long long m_target;
    const int m_rank, m_world;
    long long m_t = kBase, m_gpuT = kBase, m_events = 0, m_corr = 1, m_step = 0;
    bool m_first = true;
    char m_line[1024];
};

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: kineto_gen OUT.json[.gz] [EVENTS [RANK WORLD]]\n");
        return 2;
    }
    long long target = argc > 2 ? std::atoll(argv[2]) : 1000000;
    Out out(argv[1]);
    int rank = argc > 4 ? std::atoi(argv[3]) : 0, world = argc > 4 ? std::atoi(argv[4]) : 8;
    Generator gen(out, target, rank, world);
    gen.writeAll();
    std::fprintf(stderr, "kineto_gen: %lld events -> %s\n", gen.events(), argv[1]);
    return 0;
}
