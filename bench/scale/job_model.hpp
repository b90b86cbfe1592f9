// SPDX-License-Identifier: MIT
// A synthetic MPI job of R ranks x E events for the benchmarks and the scale tests (issue 22):
// every rank iterates
//
//   read (I/O) [+ write every 4th iteration] -> compute gap -> MPI_Send to rank+1 ->
//   MPI_Recv from rank-1 -> short gap -> MPI_Allreduce on the world communicator
//
// with durations drawn from a counter-based hash of (seed, rank, iteration, draw), so any rank's
// timeline can be written without the others' state and the job is the same whatever order the
// sinks write it in. One rank (the straggler, chosen by the seed) computes longer every iteration:
// the others wait for it in every Allreduce and its right neighbour waits for its sends. The
// collectives end together (at the last entry plus the reduction's cost), so iterations stay in
// step across ranks as in a real bulk-synchronous code.
//
// The model also computes the answers an analysis must find (expected()): per rank the wait at
// N x N, late sender and late receiver as docs/analysis.md defines them, the straggler and what it
// inflicted, events and bytes. Those are computed here from the model's own times, independently
// of the analyzer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::bench::jobgen {

struct JobSpec {
    int64_t ranks = 64;
    int64_t eventsPerRank = 10'000; ///< approximate: whole iterations, plus MPI_Init and _Finalize
    uint64_t seed = 1;
    int64_t stragglerExtraNs = 150'000; ///< the straggler's extra compute per iteration
    /// The ranks generate() writes, [firstRank, endRank) (endRank < 0: to the last): one
    /// node's share of a job too big for the disk at once. The job and its answers stay the
    /// whole job's.
    int64_t firstRank = 0, endRank = -1;
    /// Iterations per rank for eventsPerRank (4 events each, a write every 4th: 4.25 on average).
    int64_t iterations() const;
    /// The straggler's rank (from the seed).
    int64_t stragglerRank() const;
};

/// One event of a rank's main thread, as the agent would record it.
struct JobEvent {
    schema::Op op;
    int64_t ts = 0, end = 0;
    int64_t bytes = -1;
    int64_t peer = -1, tag = -1;
    int64_t seq = -1;      ///< collectives: the instance number on the world communicator
    bool file = false;     ///< I/O on the rank's data file (jobgen::dataFile)
};

/// The path of `rank`'s data file.
std::string dataFile(int64_t rank);

/// Receives a job rank by rank, each rank's events in time order.
class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void beginRank(int64_t rank, int64_t beginTs, int64_t endTs) = 0;
    virtual void event(const JobEvent& e) = 0;
    virtual void endRank() = 0;
};

struct RankAnswer {
    int64_t rank = 0;
    int64_t events = 0;
    int64_t bytesRead = 0, bytesWritten = 0;
    int64_t ioNs = 0; ///< time in reads and writes (they never overlap another call)
    int64_t collectiveWaitNs = 0, lateSenderNs = 0, lateReceiverNs = 0;
    int64_t inflictedNs = 0; ///< others' wait attributed to this rank
    int64_t timesLast = 0;   ///< collective instances it entered last (others waited)
};

/// What an analysis of the job must find.
struct Answers {
    int64_t ranks = 0, iterations = 0, events = 0;
    int64_t straggler = -1;           ///< the rank that inflicted most wait
    int64_t collectiveInstances = 0, matchedMessages = 0;
    int64_t collectiveWaitNs = 0, lateSenderNs = 0, lateReceiverNs = 0;
    int64_t beginTs = 0, endTs = 0;   ///< the job's first and last instant
    std::vector<RankAnswer> perRank;
    std::string json() const;
};

/// Writes every rank's events to `sink`, rank 0 first.
void generate(const JobSpec& spec, EventSink& sink);

/// The expected analysis results of the job.
Answers expected(const JobSpec& spec);

} // namespace hpcprof::bench::jobgen
