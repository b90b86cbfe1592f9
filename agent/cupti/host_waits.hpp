// SPDX-License-Identifier: MIT
// Host calls that wait for the GPU (stream, event, context and device synchronisation), published
// in flight (runtime/in_flight.hpp) from CUPTI's entry and exit callbacks: a rank whose NCCL
// collective never completes because a peer never enqueued its part is blocked in one of them,
// and `hpcprof status` and the hang diagnosis show which, since when.
//
// Only these few functions get callbacks (each costs CUPTI's dispatch); they block anyway, or,
// for the queries a program polls in a loop, cost a few stores at the first "not ready" answer
// and a thread-local compare at the next ones.
#pragma once

#include <cupti.h>

namespace hpcprof::agent::cupti {

struct CuptiApi;

/// Enables the entry/exit callbacks of the waiting and polling functions on `subscriber`.
void enableHostWaitCallbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber);

/// Handles a callback if it is one of a waiting function: publishes the call at its entry (the
/// line kept in the call's correlation data), clears it at its exit. False for other callbacks.
bool onHostWait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info);

/// Handles a callback if it is one of a polling function (cudaStreamQuery, cudaEventQuery, their
/// driver forms): at its exit, a "not ready" answer shows the thread polling since the first
/// such answer (runtime/polling_state.hpp), any other answer ends that. The driver query a
/// runtime query makes is left to the runtime's. False for other callbacks.
bool onHostPoll(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info);

} // namespace hpcprof::agent::cupti
