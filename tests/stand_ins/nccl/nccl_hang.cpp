// SPDX-License-Identifier: MIT
// TEST-ONLY: `nccl_hang MODE` starts 4 rank processes (re-executing itself with RANK set) on one
// NCCL communicator of the stand-in libnccl, made to hang in a known way; each rank prints
// "rank R ready" just before it hangs. Ended by `hpcprof run --timeout` in
// tests/integration/nccl_hang_test.cpp, which asserts the hang diagnosis.
//
//   skip   16 ncclAllReduce calls on every rank (instances 0..15); then ranks 0, 1 and 2 enqueue
//          ncclAllReduce #16, which rank 3 never does: it computes (a sleep loop) instead.
//   split  the communicator is split into {0,1} and {2,3}; 3 ncclAllReduce calls on each half
//          (instances 0..2); then on {2,3} rank 2 enqueues ncclBroadcast #3, which rank 3 never
//          does; ranks 0, 1 and 3 compute (a sleep loop).
//   poll   the communicator is created as non-blocking work that never completes on ranks 0, 1
//          and 2 (the stand-in's HPCPROF_STAND_IN_NCCL_IN_PROGRESS=-1) and completes after 1000
//          polls on rank 3; 4 ncclAllReduce calls, then every rank polls ncclCommGetAsyncError
//          until it stops answering ncclInProgress: ranks 0-2 poll for ever, rank 3 computes
//          (a sleep loop) once its poll has ended.
#include <nccl.h>

#include "rank_children.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kRanks = 4;
constexpr int kWarmup = 16;

std::string toHex(const ncclUniqueId& id) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (unsigned char c : id.internal) {
        s += d[c >> 4];
        s += d[c & 15];
    }
    return s;
}

ncclUniqueId fromHex(const char* s) {
    ncclUniqueId id{};
    auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (size_t i = 0; i < sizeof(id.internal) && s[2 * i] && s[2 * i + 1]; ++i)
        id.internal[i] = char(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
    return id;
}

[[noreturn]] void computeForever() {
    for (;;) usleep(10'000);
}

void ready(int rank) {
    std::printf("rank %d ready\n", rank);
    std::fflush(stdout);
}

int allReduce(ncclComm_t comm, int times) {
    std::vector<float> in(256, 1.f), out(256, 0.f);
    for (int i = 0; i < times; ++i)
        if (ncclAllReduce(in.data(), out.data(), 256, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess)
            return 3;
    return 0;
}

int skip(int rank, ncclComm_t comm) {
    if (int rc = allReduce(comm, kWarmup)) return rc;
    ready(rank);
    if (rank == kRanks - 1) computeForever();
    return allReduce(comm, 1); // never returns: rank 3 is missing
}

int split(int rank, ncclComm_t comm) {
    ncclComm_t half = nullptr;
    if (ncclCommSplit(comm, rank / 2, rank, &half, nullptr) != ncclSuccess) return 3;
    if (int rc = allReduce(half, 3)) return rc;
    ready(rank);
    if (rank != 2) computeForever();
    std::vector<float> b(64, 1.f);
    ncclBroadcast(b.data(), b.data(), 64, ncclFloat32, 0, half, nullptr);
    return 3;
}

int poll(int rank, ncclComm_t comm) {
    if (int rc = allReduce(comm, 4)) return rc;
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress)
        if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return 3;
    ready(rank); // rank 3 only: the others never get here
    computeForever();
}

int runRank(const char* mode, int rank, const ncclUniqueId& id) {
    if (std::strcmp(mode, "poll") == 0)
        setenv("HPCPROF_STAND_IN_NCCL_IN_PROGRESS", rank == kRanks - 1 ? "1000" : "-1", 1);
    ncclComm_t comm = nullptr;
    if (ncclCommInitRank(&comm, kRanks, id, rank) != ncclSuccess) return 3;
    if (std::strcmp(mode, "skip") == 0) return skip(rank, comm);
    if (std::strcmp(mode, "split") == 0) return split(rank, comm);
    if (std::strcmp(mode, "poll") == 0) return poll(rank, comm);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::strcmp(argv[1], "--rank") == 0)
        return runRank(argv[2], std::atoi(argv[3]), fromHex(argv[4]));
    if (argc != 2) {
        std::fprintf(stderr, "usage: nccl_hang skip|split|poll\n");
        return 2;
    }
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) return 4;
    std::string hex = toHex(id);
    std::vector<pid_t> pids;
    for (int r = 0; r < kRanks; ++r) {
        pid_t pid = fork();
        if (pid == 0) {
            std::string rank = std::to_string(r);
            setenv("RANK", rank.c_str(), 1);
            setenv("WORLD_SIZE", std::to_string(kRanks).c_str(), 1);
            execl("/proc/self/exe", argv[0], "--rank", argv[1], rank.c_str(), hex.c_str(),
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        pids.push_back(pid);
    }
    return waitForRanks(pids);
}
