// SPDX-License-Identifier: MIT
#include "cupti_api.hpp"

#include <dlfcn.h>

namespace hpcprof::agent::cupti {

namespace {
CuptiApi g_api;

template <typename Fn> bool resolve(void* lib, const char* name, Fn& out) {
    out = reinterpret_cast<Fn>(dlsym(lib, name));
    return out != nullptr;
}
} // namespace

const CuptiApi* loadCuptiApi(const char** why) {
    void* lib = nullptr;
#ifdef HPCPROF_CUPTI_LIBRARY_PATH
    lib = dlopen(HPCPROF_CUPTI_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        *why = "libcupti could not be loaded (install CUPTI or add its folder to LD_LIBRARY_PATH)";
        return nullptr;
    }
    CuptiApi& a = g_api;
    bool ok = resolve(lib, "cuptiGetVersion", a.getVersion) &&
              resolve(lib, "cuptiGetResultString", a.getResultString) &&
              resolve(lib, "cuptiSubscribe", a.subscribe) &&
              resolve(lib, "cuptiEnableCallback", a.enableCallback) &&
              resolve(lib, "cuptiGetCallbackName", a.getCallbackName) &&
              resolve(lib, "cuptiSetThreadIdType", a.setThreadIdType) &&
              resolve(lib, "cuptiActivityRegisterTimestampCallback", a.registerTimestampCallback) &&
              resolve(lib, "cuptiActivityRegisterCallbacks", a.registerCallbacks) &&
              resolve(lib, "cuptiActivityEnable", a.enable) &&
              resolve(lib, "cuptiActivityEnableRuntimeApi", a.enableRuntimeApi) &&
              resolve(lib, "cuptiActivityEnableDriverApi", a.enableDriverApi) &&
              resolve(lib, "cuptiActivityFlushAll", a.flushAll) &&
              resolve(lib, "cuptiActivityFlushPeriod", a.flushPeriod) &&
              resolve(lib, "cuptiActivityGetNextRecord", a.getNextRecord) &&
              resolve(lib, "cuptiActivityGetNumDroppedRecords", a.getNumDroppedRecords) &&
              resolve(lib, "cuptiActivityPushExternalCorrelationId", a.pushExternalCorrelationId) &&
              resolve(lib, "cuptiActivityPopExternalCorrelationId", a.popExternalCorrelationId);
    if (!ok) {
        *why = "libcupti is too old (a CUPTI function hpcprof needs is missing)";
        return nullptr;
    }
    return &a;
}

} // namespace hpcprof::agent::cupti
