// SPDX-License-Identifier: MIT
// jobgen: a synthetic MPI job of RANKS x EVENTS (per rank), deterministic from SEED
// (job_model.hpp), written as a trace or as the agent's raw capture, and the answers an analysis
// of it must find (JSON) for the benchmarks and tests to compare with.
//
//   jobgen trace OUT.hpcprof RANKS EVENTS_PER_RANK [SEED] [ANSWERS.json]
//   jobgen raw   OUT.raw     RANKS EVENTS_PER_RANK [SEED] [ANSWERS.json]
//   jobgen answers -         RANKS EVENTS_PER_RANK [SEED]          (the answers on stdout)
//
// JOBGEN_RANKS=FIRST:END writes only ranks FIRST to END - 1 of the job (one simulated node's
// share: bench/scale/pipeline.sh NODE_RAW=1 generates each node's raw capture just before it
// converts, so that a job bigger than the disk still runs).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "job_model.hpp"
#include "raw_sink.hpp"
#include "trace_sink.hpp"

using namespace hpcprof::bench::jobgen;

namespace {

int usage() {
    std::fprintf(stderr, "usage: jobgen trace|raw|answers OUT RANKS EVENTS_PER_RANK [SEED] [ANSWERS.json]\n");
    return 2;
}

bool writeAnswers(const JobSpec& spec, const char* path) {
    const std::string text = expected(spec).json();
    if (std::string(path) == "-") return std::fputs(text.c_str(), stdout) >= 0;
    std::FILE* f = std::fopen(path, "w");
    if (!f) return false;
    const bool ok = std::fputs(text.c_str(), f) >= 0;
    return std::fclose(f) == 0 && ok;
}

/// JOBGEN_RANKS=FIRST:END into spec; false (said) for a value that is not a range of its ranks.
bool onlyRanks(JobSpec& spec) {
    const char* only = std::getenv("JOBGEN_RANKS");
    if (!only || !*only) return true;
    long long first = 0, end = 0;
    if (std::sscanf(only, "%lld:%lld", &first, &end) != 2 || first < 0 || end <= first || end > spec.ranks) {
        std::fprintf(stderr, "jobgen: JOBGEN_RANKS=%s is not FIRST:END within the %lld ranks\n", only,
                     (long long)spec.ranks);
        return false;
    }
    spec.firstRank = first;
    spec.endRank = end;
    return true;
}

/// The job's size checked, and JOBGEN_RANKS taken in; false (said) for a job it cannot write.
bool validSpec(JobSpec& spec) {
    if (spec.ranks < 2 || spec.eventsPerRank < 7) {
        std::fprintf(stderr, "jobgen: needs at least 2 ranks and 7 events per rank\n");
        return false;
    }
    return onlyRanks(spec);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 5 || argc > 7) return usage();
    const std::string mode = argv[1], out = argv[2];
    JobSpec spec;
    spec.ranks = std::atoll(argv[3]);
    spec.eventsPerRank = std::atoll(argv[4]);
    if (argc > 5) spec.seed = std::strtoull(argv[5], nullptr, 10);
    if (!validSpec(spec)) return 2;
    if (mode == "answers") return writeAnswers(spec, "-") ? 0 : 1;
    const auto t0 = std::chrono::steady_clock::now();
    hpcprof::Result<int64_t> written = mode == "trace" ? writeTrace(spec, out)
                                       : mode == "raw" ? writeRaw(spec, out)
                                                       : hpcprof::Status::error("unknown mode " + mode);
    if (!written) {
        std::fprintf(stderr, "%s\n", written.status().message().c_str());
        return mode == "trace" || mode == "raw" ? 1 : usage();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "jobgen: %s %lld ranks x %lld iterations = %lld events in %.1f s (straggler rank %lld)\n",
                 mode.c_str(), (long long)spec.ranks, (long long)spec.iterations(), (long long)*written, s,
                 (long long)spec.stragglerRank());
    if (argc > 6 && !writeAnswers(spec, argv[6])) {
        std::fprintf(stderr, "jobgen: cannot write %s\n", argv[6]);
        return 1;
    }
    return 0;
}
