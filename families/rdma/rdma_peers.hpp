// SPDX-License-Identifier: MIT
// After every process of a run is in the trace: the rank at the other end of each RDMA queue
// pair. A connected QP records the remote QP number it was moved to RTR with; two QPs that name
// each other (A's remote is B, B's remote is A) are the two ends of one connection, so the
// events of A get B's process rank as their peer.
#pragma once

#include <sqlite3.h>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

/// Fills event.peer of RDMA events (the data-path calls carrying a qp_num, and the work requests
/// on the QP's nic_queue lane) where exactly one QP in the trace pairs with theirs. Returns how
/// many queue pairs got a peer.
Result<int64_t> deriveRdmaPeers(sqlite3* db);

} // namespace hpcprof::store
