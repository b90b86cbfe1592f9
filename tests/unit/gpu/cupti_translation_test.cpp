// SPDX-License-Identifier: MIT
// CPU-only test of the CUPTI path: hand-filled CUDA 13 activity records (the structs CUPTI fills)
// go through the collector's translator into a raw capture, the store converts it, and the trace
// must hold exactly the expected GPU tracks, CPU-side API rows, correlation links and drop counts.
#include <catch2/catch.hpp>

#include <cupti.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>

#include "cupti/activity_translator.hpp"
#include "hpcprof/store/merge.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::test;
namespace raw = schema::raw;

namespace {

constexpr int32_t kPid = 4242;
constexpr int64_t kStart = 1'000'000; // process start, monotonic ns (= trace ts 0)

/// Collects translated records as the agent's drain thread would write them.
class VectorSink final : public agent::cupti::RecordSink {
public:
    raw::GpuRecord* reserve() override { return &m_slots.emplace_back(); }
    void commit(raw::GpuRecord* r) override { r->kind = raw::RecordKind::Gpu; }
    uint32_t intern(const char* text, size_t len) override {
        uint32_t id = m_nextId++;
        m_strings.string(id, std::string(text, len));
        return id;
    }
    const char* apiName(bool runtime, uint32_t cbid) override {
        auto it = m_apiNames.find({runtime, cbid});
        return it == m_apiNames.end() ? nullptr : it->second;
    }

    std::map<std::pair<bool, uint32_t>, const char*> m_apiNames;
    std::vector<raw::GpuRecord> m_slots;
    RawThreadBuilder m_strings{0};
    uint32_t m_nextId = 100;
};

void writeThreadFile(const std::filesystem::path& dir, int32_t tid,
                     const std::vector<std::array<char, 64>>& records) {
    raw::ThreadFileHeader h{};
    h.magic = raw::kThreadMagic;
    h.version = raw::kFormatVersion;
    h.recordSize = raw::kRecordSize;
    h.pid = kPid;
    h.tid = tid;
    h.reserved = records.size();
    h.capacity = records.size();
    std::ofstream out(dir / ("thread-" + std::to_string(tid)), std::ios::binary);
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    for (const auto& r : records) out.write(r.data(), 64);
}

template <typename T> std::array<char, 64> bytesOf(const T& rec) {
    std::array<char, 64> out{};
    static_assert(sizeof(T) == 64);
    std::memcpy(out.data(), &rec, 64);
    return out;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint64_t start,
                      uint64_t end) {
    CUpti_ActivityAPI a{};
    a.kind = kind;
    a.cbid = cbid;
    a.start = start;
    a.end = end;
    a.processId = kPid;
    a.threadId = kPid; // the main thread (system tid)
    a.correlationId = corr;
    return a;
}

CUpti_ActivityKernel10 kernel(const char* name, uint32_t stream, uint32_t corr, uint64_t start,
                              uint64_t end) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    k.correlationId = corr;
    k.start = start;
    k.end = end;
    k.gridX = 64, k.gridY = 1, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    return k;
}

std::filesystem::path buildCapture(const TempDir& dir, uint64_t* ignored) {
    VectorSink sink;
    sink.m_apiNames = {{{true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000}, "cudaLaunchKernel"},
                       {{true, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020}, "cudaMemcpyAsync"},
                       {{true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020},
                        "cudaStreamSynchronize"},
                       {{true, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000}, "cudaGraphLaunch"},
                       {{false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx}, "cuLaunchKernelEx"}};
    agent::cupti::ActivityTranslator t(sink);
    auto feed = [&](const auto& rec) { t.translate(reinterpret_cast<const CUpti_Activity*>(&rec)); };

    feed(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1,
             1'100'000, 1'105'000));
    feed(kernel("_Z6matmulPfS_S_i", 7, 1, 1'110'000, 1'150'000));

    feed(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2,
             1'200'000, 1'201'000));
    CUpti_ActivityMemcpy6 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.start = 1'210'000;
    m.end = 1'260'000;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 7;
    m.correlationId = 902; // the driver call inside; the runtime call is what the program made
    m.runtimeCorrelationId = 2;
    feed(m);

    CUpti_ActivityMemset4 s{}; // its API call was filtered out: an unmatched correlation
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 4096;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s.start = 1'300'000;
    s.end = 1'301'000;
    s.streamId = 9;
    s.correlationId = 3;
    feed(s);

    feed(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 4,
             1'399'000, 1'451'000));
    CUpti_ActivitySynchronization2 y{};
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = 1'400'000;
    y.end = 1'450'000;
    y.correlationId = 4;
    y.contextId = 1;
    y.streamId = 7;
    feed(y);

    // An NCCL call pushed external id 77; the launch inside it is correlation 5.
    CUpti_ActivityExternalCorrelation x{};
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    x.externalId = 77;
    x.correlationId = 5;
    feed(x);
    feed(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 5, 1'500'000,
             1'501'000));
    feed(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, 5, 1'510'000, 1'600'000));

    feed(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 6,
             1'690'000, 1'691'000));
    CUpti_ActivityGraphTrace2 g{};
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    g.correlationId = 6;
    g.start = 1'700'000;
    g.end = 1'800'000;
    g.graphId = 12;
    g.streamId = 8;
    feed(g);

    feed(kernel("untimed", 7, 1, 0, 0)); // CUPTI had no device memory for its timestamps
    CUpti_ActivityOverhead3 o{};
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
    o.start = 1'000'000;
    o.end = 1'000'500;
    feed(o);
    CUpti_ActivityDevice5 d{};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE; // not used by hpcprof
    feed(d);
    t.dropped(3);
    *ignored = t.ignored();

    // The drain thread's file: strings, then the GPU records.
    auto header = makeProcessHeader(kPid, kStart);
    auto procDir = writeRawProcess(dir.path() / "raw", header, {});
    std::vector<std::array<char, 64>> drain = sink.m_strings.records();
    for (const auto& r : sink.m_slots) drain.push_back(bytesOf(r));
    writeThreadFile(procDir, kPid + 1, drain);

    // The main thread's file: the NCCL communicator and the all-reduce around the launch.
    RawThreadBuilder mainStrings(kPid);
    mainStrings.string(1, "nccl:abc");
    std::vector<std::array<char, 64>> mainRecs = mainStrings.records();
    raw::NcclRecord init{};
    init.kind = raw::RecordKind::Nccl;
    init.op = uint16_t(schema::Op::NcclCommInitRank);
    init.datatype = init.redop = 255;
    init.start = 1'020'000;
    init.end = 1'030'000;
    init.u.init.nranks = 2;
    init.peer = 0;  // this rank
    init.commKeyId = 1;
    init.seq = raw::kNoSeq;
    mainRecs.push_back(bytesOf(init));
    raw::NcclRecord ar = init;
    ar.op = uint16_t(schema::Op::NcclAllReduce);
    ar.datatype = 7; // float32
    ar.redop = 0;
    ar.start = 1'499'000;
    ar.end = 1'502'000;
    ar.u.call = {256, 0};
    ar.peer = -1;
    ar.seq = 0;
    ar.externalId = 77;
    mainRecs.push_back(bytesOf(ar));
    writeThreadFile(procDir, kPid, mainRecs);
    return dir.path() / "raw";
}

} // namespace

TEST_CASE("hand-filled CUDA 13 activity records become exactly the expected trace rows",
          "[unit][gpu][cupti]") {
    TempDir dir;
    uint64_t ignored = 0;
    auto rawDir = buildCapture(dir, &ignored);
    CHECK(ignored == 1);
    store::MergeOptions mo;
    mo.rawDir = rawDir;
    mo.output = dir / "trace.hpcprof";
    auto merged = store::mergeRawDirectory(mo);
    REQUIRE(merged.ok());
    TraceQuery q(dir / "trace.hpcprof");

    // One track per (device, stream); the drain thread gets none of its own.
    CHECK(q.rows("SELECT name, kind, device, stream FROM track ORDER BY id") ==
          std::vector<std::string>{"thread 4242|cpu_thread||", "GPU 0 stream 7|gpu_stream|0|7",
                                   "GPU 0 stream 8|gpu_stream|0|8",
                                   "GPU 0 stream 9|gpu_stream|0|9"});
    CHECK(q.rows("SELECT track, category, name, ts_ns, dur_ns, COALESCE(bytes, ''),"
                 " COALESCE(correlation_id, ''), COALESCE(communicator, ''), COALESCE(seq, '')"
                 " FROM event_view WHERE track_kind = 'gpu_stream' ORDER BY track_id, ts_ns") ==
          std::vector<std::string>{
              "GPU 0 stream 7|gpu_kernel|matmul(float*, float*, float*, int)|110000|40000||1||",
              "GPU 0 stream 7|gpu_memcpy|memcpy HtoD|210000|50000|1048576|2||",
              "GPU 0 stream 7|gpu_comm_kernel|ncclDevKernel_AllReduce_Sum_f32_RING_LL|510000|90000||5|nccl:abc|0",
              "GPU 0 stream 8|gpu_kernel|cuda_graph 12|700000|100000||6||",
              "GPU 0 stream 9|gpu_memset|memset|300000|1000|4096|3||",
          });
    // CUDA API calls sit on the calling thread, joined to their GPU work by correlation id; the
    // stream sync is a sync-class event inside its API call; the NCCL call carries the launch's id.
    CHECK(q.rows("SELECT category, name, ts_ns, dur_ns, depth, COALESCE(correlation_id, '')"
                 " FROM event_view WHERE track_kind = 'cpu_thread' ORDER BY ts_ns, depth") ==
          std::vector<std::string>{
              "nccl_setup|ncclCommInitRank|20000|10000|0|",
              "cuda_api|cudaLaunchKernel|100000|5000|0|1",
              "cuda_api|cudaMemcpyAsync|200000|1000|0|2",
              "cuda_api|cudaStreamSynchronize|399000|52000|0|4",
              "gpu_sync|stream_synchronize|400000|50000|1|4",
              "nccl_collective|ncclAllReduce|499000|3000|0|5",
              "cuda_api|cuLaunchKernelEx|500000|1000|1|5",
              "cuda_api|cudaGraphLaunch|690000|1000|0|6",
          });
    auto args = [&](const std::string& name) {
        return q.rows("SELECT a.key, a.value FROM event_arg a JOIN event_view e ON e.event_id ="
                      " a.event_id WHERE e.name = '" + name + "' ORDER BY a.key");
    };
    CHECK(args("memcpy HtoD") ==
          std::vector<std::string>{"copy_kind|HtoD", "dst_kind|device", "src_kind|pageable"});
    CHECK(args("matmul(float*, float*, float*, int)") ==
          std::vector<std::string>{"block|256,1,1", "grid|64,1,1"});
    CHECK(args("ncclAllReduce") == std::vector<std::string>{"count|256", "datatype|float32",
                                                            "op|sum", "stream|0"});
    CHECK(q.scalar("SELECT bytes FROM event_view WHERE name = 'ncclAllReduce'") == 1024);
    auto stat = [&](const std::string& name) {
        return q.scalar("SELECT value FROM stats WHERE name = '" + name + "'");
    };
    CHECK(stat("cupti_records_dropped") == 3);
    CHECK(stat("gpu_untimed_records") == 1);
    CHECK(stat("gpu_unmatched_correlations") == 1);
    CHECK(stat("cupti_overhead_ns") == 500);
    CHECK(stat("cupti_unavailable") == 0);
}

TEST_CASE("a process whose CUPTI could not start is counted and explained", "[unit][gpu][cupti]") {
    TempDir dir;
    VectorSink sink;
    agent::cupti::ActivityTranslator t(sink);
    t.unavailable("another CUDA profiler already uses CUPTI in this process (CUPTI error 39)");
    auto procDir = writeRawProcess(dir.path() / "raw", makeProcessHeader(kPid, kStart), {});
    std::vector<std::array<char, 64>> recs = sink.m_strings.records();
    for (const auto& r : sink.m_slots) recs.push_back(bytesOf(r));
    writeThreadFile(procDir, kPid, recs);
    store::MergeOptions mo;
    mo.rawDir = dir.path() / "raw";
    mo.output = dir / "trace.hpcprof";
    auto merged = store::mergeRawDirectory(mo);
    REQUIRE(merged.ok());
    CHECK(merged->warnings ==
          std::vector<std::string>{"process 4242: CUDA activity not recorded: another CUDA "
                                   "profiler already uses CUPTI in this process (CUPTI error 39)"});
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'cupti_unavailable'") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM track") == 0);
}
