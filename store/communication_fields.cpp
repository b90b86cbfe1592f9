// SPDX-License-Identifier: MIT
#include "communication_fields.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Category;

namespace {
std::string_view communicatorKind(Category c) {
    switch (c) {
    case Category::NcclCollective:
    case Category::NcclP2p:
    case Category::NcclSetup: return "nccl";
    default: return "mpi";
    }
}

/// The tag's meaning by category: a message tag, or how many requests a call started or completed.
void addTagFields(const RawEvent& e, const schema::OpInfo& op, EventDetail& detail,
                  std::vector<PendingArg>& args) {
    switch (op.category) {
    case Category::MpiP2p:
        // MPI_Startall posts several requests and has no tag: tag = how many it started.
        if (op.op == schema::Op::MpiStartall) args.push_back({"requests", e.tag, {}});
        else if (!(e.flags & raw::kFlagTagIsCommSize)) detail.tag = e.tag;
        break;
    case Category::MpiWait:
        // Waits and tests carry how many requests they completed in tag; an unfinished wait
        // carries the tag of the request it waits for (InFlightCall: peer and tag of its first
        // pending receive, else send).
        if (e.unfinished) detail.tag = e.tag;
        else if (!(e.flags & raw::kFlagFolded)) args.push_back({"requests", e.tag, {}});
        break;
    default: break;
    }
}

} // namespace

bool applyCommunicationFields(const RawEvent& e, const schema::OpInfo& op, const StringLookup& strings,
                              TraceWriter& writer, EventRow& row, EventDetail& detail,
                              std::vector<PendingArg>& args) {
    bool known = true;
    // A wait for a child carries the child's pid, not a rank: an argument, never peer.
    if (e.peer >= 0 && op.category == Category::ProcessWait) args.push_back({"child_pid", e.peer, {}});
    else if (e.peer >= 0) row.peer = e.peer;
    if (e.flags & raw::kFlagFolded) row.count = e.aux;
    if (e.commId) {
        if (const std::string* key = strings(e.commId)) {
            std::optional<int64_t> size;
            if (e.flags & raw::kFlagTagIsCommSize) size = e.tag;
            row.communicatorId = writer.internCommunicator(*key, size, communicatorKind(op.category));
        } else {
            known = false;
        }
    }
    if (e.flags & raw::kFlagSeqValid) row.seq = e.seq;
    if ((e.flags & raw::kFlagFolded) && !(e.flags & raw::kFlagSeqValid) && e.seq) {
        // A polling loop that alternated functions: name the others.
        std::string also;
        for (uint32_t id : {e.seq & 0xffffu, e.seq >> 16})
            if (const schema::OpInfo* other = id ? schema::findOp(uint16_t(id)) : nullptr)
                also += (also.empty() ? "" : ",") + std::string(other->name);
        if (!also.empty()) args.push_back({"also_polled", 0, also});
    }
    addTagFields(e, op, detail, args);
    return known;
}

Category effectiveCategory(const schema::OpInfo& op, std::string_view objectKind) {
    if (op.category == Category::PosixIo && objectKind == "socket")
        return Category::Socket;
    return op.category;
}

} // namespace hpcprof::store
