// SPDX-License-Identifier: MIT
// OpenMP capture through OMPT, the OpenMP 5 tool interface (LLVM's libomp; GCC's libgomp has
// none). libomp finds `ompt_start_tool` in the address space (the preloaded agent) or through
// OMP_TOOL_LIBRARIES, which `hpcprof run` points at the agent too. The tool records, per thread:
//
//   omp_parallel        the master thread's parallel region
//   omp_implicit_task   each thread's share of a region (peer = its thread number in the team)
//   omp_loop, omp_sections, omp_single, ...  work-sharing constructs
//   omp_*_wait          the time a thread waits in a barrier, taskwait, taskgroup or reduction
//
// all with seq = the region's instance number (process-wide, from 1), so the analysis can line
// the threads of one region up. Times are read in the callbacks (OMPT gives
// none); begins are kept on a small per-thread stack and the record is written at the end, as
// every other hook does. Callbacks run on OpenMP threads inside the program: no allocation, no
// lock, no system call beyond the recorder's own chunk growth.
#include <dlfcn.h>
#include <omp-tools.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/real_function.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::openmp {

namespace {

using agent::SourceBit;
using schema::Op;

constexpr int kMaxDepth = 16; // nested scopes per kind kept per thread; deeper ones are not timed

/// Open scopes of one kind on the calling thread (begin ticks and region).
struct ScopeStack {
    uint64_t begin[kMaxDepth];
    uint32_t region[kMaxDepth];
    int32_t extra[kMaxDepth]; // implicit task: thread number; work: ompt_work_t; wait: kind
    int depth;

    void push(uint64_t t, uint32_t r, int32_t x) {
        if (depth < kMaxDepth) {
            begin[depth] = t;
            region[depth] = r;
            extra[depth] = x;
        }
        ++depth;
    }
    /// False when the scope was not timed (too deep, or an end without a begin).
    bool pop(uint64_t& t, uint32_t& r, int32_t& x) {
        if (depth <= 0) return false;
        --depth;
        if (depth >= kMaxDepth) return false;
        t = begin[depth];
        r = region[depth];
        x = extra[depth];
        return true;
    }
};

struct ThreadScopes {
    ScopeStack regions; // parallel regions this thread started
    ScopeStack tasks;   // implicit tasks (extra: thread number in the team)
    ScopeStack work;    // work-sharing constructs (extra: ompt_work_t)
    ScopeStack waits;   // waits (extra: ompt_sync_region_t)
};
thread_local ThreadScopes t_scopes __attribute__((tls_model("initial-exec")));

std::atomic<uint32_t> g_nextRegion{1};

uint32_t regionOf(const ompt_data_t* parallel) {
    return parallel ? uint32_t(parallel->value) : 0;
}

/// The op of a work-sharing construct, or Op(0) for those not recorded (a `single` another
/// thread executed: this thread did no work in it).
Op workOp(ompt_work_t w) {
    switch (w) {
    case ompt_work_loop: return Op::OmpLoop;
    case ompt_work_sections: return Op::OmpSections;
    case ompt_work_single_executor: return Op::OmpSingle;
    case ompt_work_workshare: return Op::OmpWorkshare;
    case ompt_work_distribute: return Op::OmpDistribute;
    case ompt_work_taskloop: return Op::OmpTaskloop;
    default: return Op(0);
    }
}

/// The op of a wait, or Op(0) for kinds not recorded.
Op waitOp(ompt_sync_region_t kind) {
    switch (kind) {
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implementation: return Op::OmpImplicitBarrierWait;
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit: return Op::OmpExplicitBarrierWait;
    case ompt_sync_region_taskwait: return Op::OmpTaskwaitWait;
    case ompt_sync_region_taskgroup: return Op::OmpTaskgroupWait;
    case ompt_sync_region_reduction: return Op::OmpReductionWait;
    default: return Op(0);
    }
}

void record(Op op, uint64_t begin, uint64_t end, uint32_t region, int32_t peer = -1) {
    agent::EventFields f;
    f.op = op;
    f.start = begin;
    f.end = end;
    f.seq = region;
    f.flags = schema::raw::kFlagSeqValid;
    f.peer = peer;
    agent::recordEvent(f);
}

// ---- callbacks (OpenMP threads; async-signal-safety not required, allocation-free) ----------

void onParallelBegin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel, unsigned, int,
                     const void*) {
    const uint32_t region = g_nextRegion.fetch_add(1, std::memory_order_relaxed);
    if (parallel) parallel->value = region;
    t_scopes.regions.push(agent::now(), region, 0);
}

void onParallelEnd(ompt_data_t* parallel, ompt_data_t*, int, const void*) {
    uint64_t begin = 0;
    uint32_t region = 0;
    int32_t unused = 0;
    const uint64_t end = agent::now();
    if (!t_scopes.regions.pop(begin, region, unused)) return;
    if (!agent::recording(SourceBit::OpenMp)) return;
    record(Op::OmpParallel, begin, end, parallel ? regionOf(parallel) : region);
}

void onImplicitTask(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t*,
                    unsigned, unsigned index, int flags) {
    if (flags & ompt_task_initial) return; // the program's initial task: not a region's share
    if (endpoint == ompt_scope_begin) {
        t_scopes.tasks.push(agent::now(), regionOf(parallel), int32_t(index));
        return;
    }
    uint64_t begin = 0;
    uint32_t region = 0;
    int32_t thread = 0;
    const uint64_t end = agent::now();
    if (!t_scopes.tasks.pop(begin, region, thread)) return;
    if (!agent::recording(SourceBit::OpenMp)) return;
    record(Op::OmpImplicitTask, begin, end, region, thread);
}

void onWork(ompt_work_t work, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t*,
            uint64_t, const void*) {
    if (endpoint == ompt_scope_begin) {
        t_scopes.work.push(agent::now(), regionOf(parallel), int32_t(work));
        return;
    }
    uint64_t begin = 0;
    uint32_t region = 0;
    int32_t kind = 0;
    const uint64_t end = agent::now();
    if (!t_scopes.work.pop(begin, region, kind)) return;
    const Op op = workOp(ompt_work_t(kind));
    if (op == Op(0) || !agent::recording(SourceBit::OpenMp)) return;
    record(op, begin, end, region);
}

void onSyncWait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                ompt_data_t*, const void*) {
    if (endpoint == ompt_scope_begin) {
        // The region of the wait: the team's (workers may see no parallel data at the implicit
        // barrier that ends a region, so fall back to the thread's innermost implicit task).
        uint32_t region = regionOf(parallel);
        const ScopeStack& tasks = t_scopes.tasks;
        if (region == 0 && tasks.depth > 0 && tasks.depth <= kMaxDepth) region = tasks.region[tasks.depth - 1];
        t_scopes.waits.push(agent::now(), region, int32_t(kind));
        return;
    }
    uint64_t begin = 0;
    uint32_t region = 0;
    int32_t k = 0;
    const uint64_t end = agent::now();
    if (!t_scopes.waits.pop(begin, region, k)) return;
    const Op op = waitOp(ompt_sync_region_t(k));
    if (op == Op(0) || !agent::recording(SourceBit::OpenMp)) return;
    record(op, begin, end, region);
}

int initializeTool(ompt_function_lookup_t lookup, int, ompt_data_t*) {
    auto setCallback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
    if (!setCallback) return 0; // not a usable runtime: stay out of the way
    setCallback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&onParallelBegin));
    setCallback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(&onParallelEnd));
    setCallback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(&onImplicitTask));
    setCallback(ompt_callback_work, reinterpret_cast<ompt_callback_t>(&onWork));
    setCallback(ompt_callback_sync_region_wait, reinterpret_cast<ompt_callback_t>(&onSyncWait));
    return 1;
}

void finalizeTool(ompt_data_t*) {}

ompt_start_tool_result_t g_tool = {&initializeTool, &finalizeTool, {0}};

/// True when the user named another OMPT tool: libomp asks the address space first, so
/// answering would silently displace theirs. hpcprof then yields (and `hpcprof run` says so).
bool anotherToolNamed() {
    const char* libs = std::getenv("OMP_TOOL_LIBRARIES");
    if (!libs || !*libs) return false;
    Dl_info self{};
    if (!dladdr(reinterpret_cast<void*>(&initializeTool), &self) || !self.dli_fname) return true;
    return std::strstr(libs, self.dli_fname) == nullptr;
}

} // namespace

} // namespace hpcprof::agent::openmp

/// The OMPT entry point libomp looks for. nullptr keeps hpcprof out of the runtime (OpenMP not
/// recorded, or another tool named by the user).
HPCPROF_HOOK ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
    using namespace hpcprof;
    if (!agent::recording(agent::SourceBit::OpenMp)) return nullptr;
    if (agent::openmp::anotherToolNamed()) return nullptr;
    return &agent::openmp::g_tool;
}
