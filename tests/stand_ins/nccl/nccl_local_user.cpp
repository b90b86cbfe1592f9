// SPDX-License-Identifier: MIT
// TEST-ONLY: the "framework extension" half of nccl_local.cpp.
#include <nccl.h>

extern "C" int nccl_local_run() {
    ncclUniqueId id;
    ncclComm_t comm;
    if (ncclGetUniqueId(&id) != ncclSuccess) return 10;
    if (ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 11;
    int in = 21, out = 0;
    if (ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, nullptr) != ncclSuccess) return 12;
    if (ncclCommDestroy(comm) != ncclSuccess) return 13;
    return out == 21 ? 0 : 14;
}
