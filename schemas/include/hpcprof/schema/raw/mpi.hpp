// SPDX-License-Identifier: MIT
// The communication family's record: a request an MPI wait or test completed.
#pragma once

#include "hpcprof/schema/raw/common.hpp"

namespace hpcprof::schema::raw {
/// One send or receive request completed by an MPI wait or test. Written by the completing call
/// just before its own EventRecord, on the same thread: the store attaches the completion
/// records that precede an MPI_Wait* / MPI_Test* event to it (see families/communication/communication_store.cpp).
struct MpiCompletionRecord {
    RecordKind kind;     ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    uint8_t isRecv;      ///< 1 = receive, 0 = send
    uint16_t reserved0;
    uint32_t request;    ///< request number of the posting event (EventRecord::seq, kFlagRequest)
    int32_t peer;        ///< partner world rank; receives: the actual source (-1 = unknown)
    int32_t tag;         ///< message tag; receives: the actual tag
    int64_t bytes;       ///< bytes sent / received, -1 = unknown
    uint8_t reserved[40];
};

static_assert(sizeof(MpiCompletionRecord) == kRecordSize);

} // namespace hpcprof::schema::raw
