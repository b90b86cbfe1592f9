// SPDX-License-Identifier: MIT
// TEST-ONLY driver: `nccl_ranks N` starts N rank processes (re-executing itself with RANK set),
// which run a fixed sequence of NCCL calls on one communicator, check the results, split it and
// tear down. Exit status: 0 when every rank saw correct results. Used with the stand-in libnccl
// by tests/integration/gpu_nccl_test.cpp; the expected trace is spelled out there.
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
    for (size_t i = 0; i < sizeof(id.internal) && s[2 * i] && s[2 * i + 1]; ++i) {
        auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
        id.internal[i] = char(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
    }
    return id;
}

int g_failures = 0;
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "rank check failed: %s (line %d)\n", #cond, __LINE__);            \
            ++g_failures;                                                                          \
        }                                                                                          \
    } while (0)
#define CALL(expr) EXPECT((expr) == ncclSuccess)

int runRank(int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm = nullptr;
    CALL(ncclCommInitRank(&comm, n, id, rank));
    cudaStream_t stream = nullptr;

    std::vector<float> f(1024, float(rank + 1)), fr(1024, 0.f);
    CALL(ncclAllReduce(f.data(), fr.data(), 1024, ncclFloat32, ncclSum, comm, stream));
    EXPECT(fr[0] == float(n * (n + 1) / 2) && fr[1023] == fr[0]);

    std::vector<float> b(256, rank == 0 ? 7.f : 0.f), br(256, 0.f);
    CALL(ncclBroadcast(b.data(), br.data(), 256, ncclFloat32, 0, comm, stream));
    EXPECT(br[255] == 7.f);

    std::vector<float> g(128, float(rank)), gr(128 * size_t(n), -1.f);
    CALL(ncclAllGather(g.data(), gr.data(), 128, ncclFloat32, comm, stream));
    EXPECT(gr[128 * size_t(n - 1)] == float(n - 1));

    std::vector<float> rs(64 * size_t(n), 1.f), rsr(64, 0.f);
    CALL(ncclReduceScatter(rs.data(), rsr.data(), 64, ncclFloat32, ncclSum, comm, stream));
    EXPECT(rsr[63] == float(n));

    std::vector<int32_t> ri(100, rank * 10), rir(100, 0);
    CALL(ncclReduce(ri.data(), rir.data(), 100, ncclInt32, ncclMax, 1, comm, stream));
    if (rank == 1) EXPECT(rir[99] == (n - 1) * 10);

    std::vector<double> a(32 * size_t(n)), ar(32 * size_t(n), -1.0);
    for (int p = 0; p < n; ++p)
        for (int i = 0; i < 32; ++i) a[size_t(p) * 32 + size_t(i)] = rank * 100 + p;
    CALL(ncclAlltoAll(a.data(), ar.data(), 32, ncclFloat64, comm, stream));
    EXPECT(ar[32 * size_t(n - 1)] == double((n - 1) * 100 + rank));

    std::vector<int64_t> s(16, rank), sr(16, -1);
    CALL(ncclGroupStart());
    CALL(ncclSend(s.data(), 16, ncclInt64, (rank + 1) % n, comm, stream));
    CALL(ncclRecv(sr.data(), 16, ncclInt64, (rank + n - 1) % n, comm, stream));
    CALL(ncclGroupEnd());
    EXPECT(sr[15] == (rank + n - 1) % n);

    CALL(ncclAllReduce(f.data(), fr.data(), 1024, ncclFloat32, ncclSum, comm, stream));

    // The last rank alone in one sub-communicator, the others together in another.
    ncclComm_t sub = nullptr;
    CALL(ncclCommSplit(comm, rank == n - 1 ? 1 : 0, rank, &sub, nullptr));
    int subSize = 0;
    CALL(ncclCommCount(sub, &subSize));
    EXPECT(subSize == (rank == n - 1 ? 1 : n - 1));
    std::vector<int32_t> one(8, 1), sum(8, 0);
    CALL(ncclAllReduce(one.data(), sum.data(), 8, ncclInt32, ncclSum, sub, stream));
    EXPECT(sum[7] == subSize);
    CALL(ncclCommDestroy(sub));
    CALL(ncclCommDestroy(comm));
    return g_failures == 0 ? 0 : 3;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::strcmp(argv[1], "--rank") == 0)
        return runRank(std::atoi(argv[2]), std::atoi(argv[3]), fromHex(argv[4]));
    int n = argc > 1 ? std::atoi(argv[1]) : 2;
    if (n < 2 || n > 4) {
        std::fprintf(stderr, "usage: nccl_ranks N (2..4)\n");
        return 2;
    }
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) return 4;
    std::string hex = toHex(id), size = std::to_string(n);
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        pid_t pid = fork();
        if (pid == 0) {
            std::string rank = std::to_string(r);
            setenv("RANK", rank.c_str(), 1);
            setenv("WORLD_SIZE", size.c_str(), 1);
            execl("/proc/self/exe", argv[0], "--rank", rank.c_str(), size.c_str(), hex.c_str(),
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        pids.push_back(pid);
    }
    return waitForRanks(pids);
}
