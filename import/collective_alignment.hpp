// SPDX-License-Identifier: MIT
// Clock alignment of imported ranks by NCCL collectives: a collective completes on every member
// at nearly the same moment (no member can finish before the last one has contributed), so the
// k-th instance of a collective on a communicator gives one offset sample per rank pair. The
// offset of a rank is the median of its samples against the reference rank, which is robust to
// the few instances where one rank's kernel ended late for local reasons.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hpcprof::import {

struct RankCollectiveEnds {
    /// Alignment key ("communicator:<key>" or "kernel:<collective>") -> end times (ns) in order.
    std::map<std::string, std::vector<int64_t>> ends;
};

struct AlignmentOffset {
    bool aligned = false;   ///< false: no collective shared with the reference (left as recorded)
    int64_t offsetNs = 0;   ///< added to this rank's times
    int64_t matches = 0;    ///< instances used
    int64_t spreadNs = 0;   ///< largest |sample - offset|: how well the instances agree
};

/// Offsets of every rank against `ranks[reference]` (whose own offset is 0, aligned).
std::vector<AlignmentOffset> alignByCollectives(const std::vector<RankCollectiveEnds>& ranks,
                                                size_t reference);

} // namespace hpcprof::import
