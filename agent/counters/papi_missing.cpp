// SPDX-License-Identifier: MIT
// Stands in for papi_backend.cpp when hpcprof was built without PAPI (HPCPROF_WITH_PAPI=OFF or
// papi.h not found): every PAPI event is unavailable with that reason.
#include "papi_backend.hpp"

namespace hpcprof::agent::counters {

std::unique_ptr<Backend> makePapiBackend(char* whyNot) {
    setReason(whyNot, "hpcprof was built without PAPI (HPCPROF_WITH_PAPI=OFF or papi.h not found)");
    return nullptr;
}

} // namespace hpcprof::agent::counters
