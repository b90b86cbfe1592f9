// SPDX-License-Identifier: MIT
// The TSC's frequency, measured once by `hpcprof run` and passed to every agent in
// HPCPROF_TSC_HZ, so that no process spends its start measuring it.
#pragma once

#include <cstdint>

namespace hpcprof::agent {

/// Measures the TSC frequency against CLOCK_MONOTONIC over `sampleNs`; 0 where there is no TSC.
uint64_t measureTscHz(int64_t sampleNs);

} // namespace hpcprof::agent
