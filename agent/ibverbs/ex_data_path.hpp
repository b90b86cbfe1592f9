// SPDX-License-Identifier: MIT
// The wrappers hpcprof installs in each ibv_qp_ex / ibv_cq_ex it holds (ex_objects.hpp), and
// in the context's extended entries that create them. A batch (ibv_wr_start .. ibv_wr_complete)
// is recorded as one call plus one record per work request, a poll (ibv_start_poll ..
// ibv_end_poll) as one call plus one record per completion: the same records as ibv_post_send
// and ibv_poll_cq write (raw_format.hpp, RDMA section), so both APIs give the same trace rows.
#pragma once

#include <infiniband/verbs.h>

namespace hpcprof::agent::ibverbs {

// Per-QP entries.
void exWrStart(ibv_qp_ex* qp);
int exWrComplete(ibv_qp_ex* qp);
void exWrAbort(ibv_qp_ex* qp);
void exWrSend(ibv_qp_ex* qp);
void exWrSendImm(ibv_qp_ex* qp, __be32 imm);
void exWrSendInv(ibv_qp_ex* qp, uint32_t invalidateRkey);
void exWrSendTso(ibv_qp_ex* qp, void* hdr, uint16_t hdrSz, uint16_t mss);
void exWrRdmaWrite(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr);
void exWrRdmaWriteImm(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, __be32 imm);
void exWrRdmaRead(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr);
void exWrAtomicCmpSwp(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, uint64_t compare,
                      uint64_t swap);
void exWrAtomicFetchAdd(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, uint64_t add);
void exWrAtomicWrite(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, const void* value);
void exWrLocalInv(ibv_qp_ex* qp, uint32_t invalidateRkey);
void exWrBindMw(ibv_qp_ex* qp, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info);
void exWrSetSge(ibv_qp_ex* qp, uint32_t lkey, uint64_t addr, uint32_t length);
void exWrSetSgeList(ibv_qp_ex* qp, size_t n, const ibv_sge* list);
void exWrSetInlineData(ibv_qp_ex* qp, void* addr, size_t length);
void exWrSetInlineDataList(ibv_qp_ex* qp, size_t n, const ibv_data_buf* list);

// Per-CQ entries.
int exStartPoll(ibv_cq_ex* cq, ibv_poll_cq_attr* attr);
int exNextPoll(ibv_cq_ex* cq);
void exEndPoll(ibv_cq_ex* cq);

// Context entries (verbs_context::create_qp_ex / create_cq_ex; defined in verbs_hooks.cpp).
ibv_qp* wrappedCreateQpEx(ibv_context* ctx, ibv_qp_init_attr_ex* attr);
ibv_cq_ex* wrappedCreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr);

} // namespace hpcprof::agent::ibverbs
