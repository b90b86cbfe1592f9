// SPDX-License-Identifier: MIT
#include "gemm_kernels.hpp"

#include <string>

namespace hpcprof::analyzer {

namespace {

bool has(std::string_view s, std::string_view needle) { return s.find(needle) != s.npos; }
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool isIdentChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string lower(std::string_view s) {
    std::string l(s);
    for (auto& c : l)
        if (c >= 'A' && c <= 'Z') c = char(c + ('a' - 'A'));
    return l;
}

/// An MMA shape before "gemm" (`h884gemm`, `s1688gemm`, `i8816gemm`, `d884gemm`): the letter is
/// the accumulator (s), input (h, i) or FP64 (d) type; 0 when the token has none.
char mmaShapeLetter(std::string_view t) {
    for (size_t g = t.find("gemm"); g != t.npos; g = t.find("gemm", g + 1)) {
        size_t d = g;
        while (d > 0 && isDigit(t[d - 1])) --d;
        if (g - d >= 3 && d > 0) return t[d - 1];
    }
    return 0;
}

/// "sgemm" as a word of the token (`ampere_sgemm_`, `simt_sgemm`, `magmablas_sgemm`), not the
/// end of another word.
bool hasSgemmWord(std::string_view t) {
    for (size_t p = t.find("sgemm"); p != t.npos; p = t.find("sgemm", p + 1))
        if (p == 0 || t[p - 1] == '_') return true;
    return false;
}

bool hasTensorCoreMarker(std::string_view t) {
    static constexpr std::string_view kMarkers[] = {"tensorop", "wmma", "hmma", "imma", "gmma",
                                                    "tf32", "bf16", "f16", "fp8", "e4m3",
                                                    "e5m2", "int8", "i8i8"};
    for (auto m : kMarkers)
        if (has(t, m)) return true;
    char shape = mmaShapeLetter(t);
    return shape == 'h' || shape == 's' || shape == 'i';
}

/// A tile kernel of cuBLAS, CUTLASS or MAGMA, whose name spells its types.
GemmKind tileKernelKind(std::string_view t) {
    if (has(t, "xmma")) { // sm80_xmma_gemm_<A><B>_<math><acc>_<C>_..., ffma = CUDA-core FMAs
        if (has(t, "ffma") || has(t, "_f32f32_f32f32_")) return GemmKind::Fp32Simt;
        return has(t, "f64") ? GemmKind::Other : GemmKind::TensorCore;
    }
    if (has(t, "dgemm") || has(t, "f64") || mmaShapeLetter(t) == 'd') return GemmKind::Other;
    if (hasTensorCoreMarker(t)) return GemmKind::TensorCore;
    return hasSgemmWord(t) ? GemmKind::Fp32Simt : GemmKind::Other; // cgemm, zgemm, hgemm, ...
}

bool hasArchPrefix(std::string_view t) {
    static constexpr std::string_view kArch[] = {"maxwell_", "pascal_", "volta_", "turing_",
                                                 "ampere_", "ada_", "hopper_", "blackwell_"};
    for (auto a : kArch)
        if (startsWith(t, a)) return true;
    size_t i = 2; // sm80_, sm90a_
    if (!startsWith(t, "sm")) return false;
    while (i < t.size() && isDigit(t[i])) ++i;
    while (i < t.size() && t[i] >= 'a' && t[i] <= 'z') ++i;
    return i > 2 && i < t.size() && t[i] == '_';
}

/// The first template argument after name[pos] == '<', trimmed and lower case.
std::string firstTemplateArg(std::string_view name, size_t pos) {
    size_t end = pos + 1;
    int depth = 0;
    for (; end < name.size(); ++end) {
        char c = name[end];
        if (c == '<') ++depth;
        else if (c == '>' && depth-- == 0) break;
        else if (c == ',' && depth == 0) break;
    }
    std::string_view a = name.substr(pos + 1, end - pos - 1);
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
    return lower(a);
}

/// A cuBLAS/cublasLt routine kernel (`sgemm_largek_lds64`, `gemmSN_TN_kernel<float, ...>`,
/// `gemv2T_kernel_val<...>`, `gemmk1_kernel<...>`); `next` is where the token ends in `name`.
GemmKind routineKind(std::string_view t, std::string_view name, size_t next) {
    if (startsWith(t, "sgemm")) return GemmKind::Fp32Simt;
    static constexpr std::string_view kOther[] = {"dgemm", "cgemm", "zgemm", "hgemm", "gemv",
                                                  "gemmk1"};
    for (auto o : kOther)
        if (startsWith(t, o)) return GemmKind::Other; // gemv and k=1: memory bound
    if (!startsWith(t, "gemm")) return GemmKind::None;
    bool templ = next < name.size() && name[next] == '<';
    if (!templ) // `cutlass::gemm::...` is a namespace, not the routine
        return next + 1 < name.size() && name[next] == ':' ? GemmKind::None : GemmKind::Other;
    return firstTemplateArg(name, next) == "float" ? GemmKind::Fp32Simt : GemmKind::Other;
}

GemmKind tokenKind(std::string_view name, size_t begin, size_t end) {
    std::string t = lower(name.substr(begin, end - begin));
    if (startsWith(t, "nvjet")) return GemmKind::TensorCore; // Hopper+ cuBLAS: warpgroup MMA
    bool library = hasArchPrefix(t) || startsWith(t, "cutlass") || startsWith(t, "magma");
    if (library && has(t, "gemm")) return tileKernelKind(t);
    if (library) return GemmKind::None;
    return routineKind(t, name, end);
}

} // namespace

GemmKind gemmKindOf(std::string_view name) {
    // The first token of a GEMM family decides: the kernel's routine comes before its template
    // arguments, or is the first of them (`cutlass::Kernel<cutlass_80_...>`). The parameter
    // list (after the first '(' outside template arguments) names types, not the kernel.
    int depth = 0;
    for (size_t i = 0; i < name.size();) {
        char c = name[i];
        if (c == '<') ++depth;
        if (c == '>' && depth > 0) --depth;
        if (c == '(' && depth == 0) break;
        if (!isIdentChar(c)) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < name.size() && isIdentChar(name[end])) ++end;
        GemmKind k = tokenKind(name, i, end);
        if (k != GemmKind::None) return k;
        i = end;
    }
    return GemmKind::None;
}

} // namespace hpcprof::analyzer
