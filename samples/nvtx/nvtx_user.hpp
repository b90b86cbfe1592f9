// SPDX-License-Identifier: MIT
// The shared-library half of the NVTX sample.
#pragma once

/// Emits `n` ranges "lib_compute" (domain "libuser", category 7 named "libcat", int64 payload
/// 40 + i), each with a registered-string mark "lib_registered" inside.
extern "C" void nvtx_user_work(int n);
