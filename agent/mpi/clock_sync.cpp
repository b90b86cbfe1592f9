// SPDX-License-Identifier: MIT
#include "clock_sync.hpp"

#include <cstdint>
#include <cstdlib>

#include "mpi_abi.hpp"
#include "real_mpi.hpp"
#include "runtime/agent_abi.hpp"

namespace hpcprof::agent::mpi {

namespace {

constexpr int kPingPongs = 10;
constexpr int kTag = 31337;

RealMpi<int (*)(MPI_Comm, MPI_Comm*)> g_dup("PMPI_Comm_dup");
RealMpi<int (*)(MPI_Comm*)> g_free("PMPI_Comm_free");
RealMpi<int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm)> g_send("PMPI_Send");
RealMpi<int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*)> g_recv("PMPI_Recv");

} // namespace

void measureClockOffsets(int which, int worldRank, int worldSize) {
    auto dup = g_dup.get();
    auto freeComm = g_free.get();
    auto send = g_send.get();
    auto recv = g_recv.get();
    if (!dup || !freeComm || !send || !recv || worldSize < 1) return;
    if (worldSize == 1) {
        hpcprof_agent_clock_sync(which, hpcprof_agent_local_ns(), 0, 0);
        return;
    }
    MPI_Comm comm;
    if (dup(worldComm(), &comm) != MPI_SUCCESS) return;
    MPI_Datatype bytes = byteType();
    if (worldRank == 0) {
        hpcprof_agent_clock_sync(which, hpcprof_agent_local_ns(), 0, 0);
        for (int peer = 1; peer < worldSize; ++peer) {
            int64_t best[3] = {0, 0, INT64_MAX}; // remote local time, offset, round trip
            for (int k = 0; k < kPingPongs; ++k) {
                int64_t ping = 0, remote = 0;
                int64_t t0 = hpcprof_agent_local_ns();
                send(&ping, 8, bytes, peer, kTag, comm);
                recv(&remote, 8, bytes, peer, kTag, comm, statusIgnore());
                int64_t t1 = hpcprof_agent_local_ns();
                if (t1 - t0 < best[2]) {
                    best[0] = remote;
                    best[1] = remote - (t0 + (t1 - t0) / 2);
                    best[2] = t1 - t0;
                }
            }
            send(best, 24, bytes, peer, kTag, comm);
        }
    } else {
        for (int k = 0; k < kPingPongs; ++k) {
            int64_t ping = 0;
            recv(&ping, 8, bytes, 0, kTag, comm, statusIgnore());
            int64_t now = hpcprof_agent_local_ns();
            send(&now, 8, bytes, 0, kTag, comm);
        }
        int64_t best[3];
        recv(best, 24, bytes, 0, kTag, comm, statusIgnore());
        hpcprof_agent_clock_sync(which, best[0], best[1], best[2]);
    }
    freeComm(&comm);
}

} // namespace hpcprof::agent::mpi
