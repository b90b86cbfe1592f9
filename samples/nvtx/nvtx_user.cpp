// SPDX-License-Identifier: MIT
// The shared-library half of the NVTX sample: a domain, a named category, a registered string.
#include "nvtx_user.hpp"

#include <nvToolsExt.h>

extern "C" void nvtx_user_work(int n) {
    static nvtxDomainHandle_t domain = nvtxDomainCreateA("libuser");
    nvtxDomainNameCategoryA(domain, 7, "libcat");
    nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "lib_registered");
    for (int i = 0; i < n; ++i) {
        nvtxEventAttributes_t a = {};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.category = 7;
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = 40 + i;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "lib_compute";
        nvtxDomainRangePushEx(domain, &a);

        nvtxEventAttributes_t m = {};
        m.version = NVTX_VERSION;
        m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        m.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        m.message.registered = registered;
        nvtxDomainMarkEx(domain, &m);
        nvtxDomainRangePop(domain);
    }
}
