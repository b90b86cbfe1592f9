// SPDX-License-Identifier: MIT
// Short kernel names for report tables (the JSON report keeps the full name). Kernel names are
// demangled C++ signatures, some of them thousands of characters of template arguments. The
// rule, in order, each step only while the name is still longer than `max` characters (the
// first two always):
//   1. a leading "void " (the return type CUDA kernels all share) is dropped;
//   2. the parameter list, the "(...)" that closes the name, is dropped;
//   3. the contents of each outermost template argument list become "...": "f<...>";
//   4. the middle of the name becomes "...": its first max - 3 - (max - 3) / 2 and last
//      (max - 3) / 2 characters are kept (kernels that differ in a suffix stay apart).
// A name whose brackets do not balance skips steps 2 and 3.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hpcprof::analyzer {

inline constexpr size_t kShortKernelNameMax = 64;

std::string shortKernelName(std::string_view name, size_t max = kShortKernelNameMax);

/// The short names of the kernels one table lists, each distinct when the full names are: a
/// table where two rows read the same name misleads (FBGEMM's "..._weighted_kernel_cta_per_row_1"
/// and "..._unweighted_..." both became "split_embedding_backward_codege...hted_kernel_cta_per_
/// row_1<...>" at 64 characters). Names whose short forms collide are shortened again with room
/// for 16 more characters at a time (up to 4 x max), which keeps more of their middle and of
/// their template arguments; those still alike (kernels that differ only deep inside a long
/// template argument) get " #2", " #3", ... in the order given.
std::vector<std::string> shortKernelNames(const std::vector<std::string_view>& names,
                                          size_t max = kShortKernelNameMax);

} // namespace hpcprof::analyzer
