// SPDX-License-Identifier: MIT
// The CUPTI functions the collector uses, resolved from libcupti with dlopen at injection time,
// so libhpcprof.so never depends on libcupti at load time (most preloaded processes never touch
// CUDA) and a missing or broken CUPTI becomes "CUDA activity unavailable", not a failed start.
#pragma once

#include <cupti.h>

namespace hpcprof::agent::cupti {

struct CuptiApi {
    decltype(&cuptiGetVersion) getVersion = nullptr;
    decltype(&cuptiGetResultString) getResultString = nullptr;
    decltype(&cuptiSubscribe) subscribe = nullptr;
    decltype(&cuptiEnableCallback) enableCallback = nullptr;
    decltype(&cuptiGetCallbackName) getCallbackName = nullptr;
    decltype(&cuptiSetThreadIdType) setThreadIdType = nullptr;
    decltype(&cuptiActivityRegisterTimestampCallback) registerTimestampCallback = nullptr;
    decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityEnableRuntimeApi) enableRuntimeApi = nullptr;
    decltype(&cuptiActivityEnableDriverApi) enableDriverApi = nullptr;
    decltype(&cuptiActivityFlushAll) flushAll = nullptr;
    decltype(&cuptiActivityFlushPeriod) flushPeriod = nullptr;
    decltype(&cuptiActivityGetNextRecord) getNextRecord = nullptr;
    decltype(&cuptiActivityGetNumDroppedRecords) getNumDroppedRecords = nullptr;
    decltype(&cuptiActivityPushExternalCorrelationId) pushExternalCorrelationId = nullptr;
    decltype(&cuptiActivityPopExternalCorrelationId) popExternalCorrelationId = nullptr;
};

/// Loads libcupti (the build's copy first, then the loader's search path). Returns nullptr and
/// sets `why` when it cannot be loaded or lacks a function. Called once, from InitializeInjection.
const CuptiApi* loadCuptiApi(const char** why);

} // namespace hpcprof::agent::cupti
