// SPDX-License-Identifier: MIT
// The CUDA training-step sample under `hpcprof run` on a machine without a usable GPU: the
// program's own exit code (3, "no device") passes through and the NVTX events it made before
// giving up are recorded. (On a GPU machine bench/gpu/validate.sh checks the full trace.)
#include <catch2/catch.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

TEST_CASE("a CUDA program that finds no device keeps its exit code and its NVTX events",
          "[integration][gpu][cuda]") {
    TempDir dir;
    auto plain = runProcess({sampleBinary("training_step")});
    if (plain.exitCode != 3) {
        WARN("SKIPPED: a CUDA device is usable here (exit " << plain.exitCode
                                                              << "); run bench/gpu/validate.sh");
        return;
    }
    auto r = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "trace.hpcprof", "--",
                         sampleBinary("training_step")});
    INFO(r.err);
    CHECK(r.exitCode == 3);
    CHECK(r.err.find("training_step: no CUDA device") != std::string::npos);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT name, depth, dur_ns > 0 FROM event_view WHERE category = 'nvtx'"
                 " ORDER BY ts_ns, depth") ==
          std::vector<std::string>{"setup|0|1", "no_device|1|0"});
    CHECK(q.text("SELECT end_state FROM process") == "exited");
    // No GPU activity and no false alarm: CUDA never initialised, so CUPTI was never loaded.
    CHECK(q.scalar("SELECT COUNT(*) FROM track WHERE kind = 'gpu_stream'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'cupti_unavailable'") == 0);
}
