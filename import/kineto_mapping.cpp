// SPDX-License-Identifier: MIT
#include "kineto_mapping.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace hpcprof::import {

using schema::Category;

namespace {

/// ASCII lower case: what std::tolower does in the "C" locale, without its per-call cost
/// (this runs for every imported event).
inline char asciiLower(char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (asciiLower(a[i]) != asciiLower(b[i])) return false;
    return true;
}

bool istartsWith(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && iequals(s.substr(0, p.size()), p);
}

bool mulOverflows(int64_t a, int64_t b, int64_t& out) { return __builtin_mul_overflow(a, b, &out); }
bool addOverflows(int64_t a, int64_t b, int64_t& out) { return __builtin_add_overflow(a, b, &out); }

} // namespace

namespace {

/// The usual shape, "[-]int[.frac]" with no more fraction digits than the unit has zeros
/// (Kineto's "1700000000000000.250" in microseconds): exact without rounding, so it is
/// computed directly. Empty when the text has another shape; the general path decides then.
std::optional<int64_t> simpleDecimalToNs(std::string_view text, int64_t nsPerUnit) {
    int zeros = 0;
    int64_t unit = nsPerUnit;
    while (unit >= 10 && unit % 10 == 0) {
        unit /= 10;
        ++zeros;
    }
    if (unit != 1) return std::nullopt;
    size_t i = 0, n = text.size();
    bool negative = n > 0 && text[0] == '-';
    if (negative) ++i;
    size_t intStart = i;
    uint64_t value = 0;
    while (i < n && unsigned(text[i] - '0') < 10) value = value * 10 + unsigned(text[i++] - '0');
    size_t intDigits = i - intStart;
    if (intDigits == 0 || intDigits + size_t(zeros) > 19) return std::nullopt; // < 2^64
    int frac = 0;
    if (i < n && text[i] == '.') {
        ++i;
        while (i < n && unsigned(text[i] - '0') < 10 && frac <= zeros) {
            value = value * 10 + unsigned(text[i++] - '0');
            ++frac;
        }
    }
    if (i != n || frac > zeros) return std::nullopt;
    for (int k = frac; k < zeros; ++k) value *= 10;
    if (value > uint64_t(INT64_MAX)) return std::nullopt; // the general path says why
    return negative ? -int64_t(value) : int64_t(value);
}

/// The significant digits of a number. Timestamps have about 20; the buffer only grows for
/// absurdly long numbers.
struct Digits {
    char local[48];
    std::string more;
    size_t n = 0;
    bool empty() const { return n == 0; }
    size_t size() const { return n; }
    void operator+=(char c) {
        if (n < sizeof local) {
            local[n++] = c;
            return;
        }
        if (more.empty()) more.assign(local, sizeof local);
        more += c;
        ++n;
    }
    char operator[](size_t i) const { return n <= sizeof local ? local[i] : more[i]; }
};

/// A decimal number as digits * 10^exp10, its sign apart.
struct Decimal {
    bool negative = false;
    Digits digits;
    int64_t exp10 = 0;
};

/// Reads "digits[.digits]" from text[i]; false when it holds no digit.
bool readMantissa(std::string_view text, size_t& i, Decimal& d) {
    bool any = false, dot = false;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (c >= '0' && c <= '9') {
            any = true;
            if (d.digits.empty() && c == '0') { // leading zeros carry no value
                if (dot) --d.exp10;
                continue;
            }
            d.digits += c;
            if (dot) --d.exp10;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    return any;
}

/// Reads "e[+-]digits" from text[i] to the end of the text into `exp10`; false when malformed.
bool readExponent(std::string_view text, size_t& i, int64_t& exp10) {
    if (text[i] != 'e' && text[i] != 'E') return false;
    ++i;
    bool expNeg = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) expNeg = text[i++] == '-';
    int64_t e = 0;
    bool expDigits = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        expDigits = true;
        if (e < 100000) e = e * 10 + (text[i] - '0');
    }
    if (!expDigits || i != text.size()) return false;
    exp10 += expNeg ? -e : e;
    return true;
}

/// The integer part of `d` (digits present), rounded on the first dropped digit, times
/// `scale`; empty on overflow.
std::optional<int64_t> roundedValue(const Decimal& d, int64_t scale) {
    // Integer part = digits[0 .. digits.size()+exp10), rounding on the first dropped digit.
    const Digits& digits = d.digits;
    int64_t intDigits = int64_t(digits.size()) + d.exp10;
    if (intDigits > 19) return std::nullopt;
    int64_t value = 0;
    for (int64_t k = 0; k < intDigits; ++k) {
        int d = k < int64_t(digits.size()) ? digits[size_t(k)] - '0' : 0;
        if (mulOverflows(value, 10, value) || addOverflows(value, d, value)) return std::nullopt;
    }
    if (intDigits >= 0 && intDigits < int64_t(digits.size()) && digits[size_t(intDigits)] >= '5')
        if (addOverflows(value, 1, value)) return std::nullopt;
    if (scale != 1 && mulOverflows(value, scale, value)) return std::nullopt;
    return d.negative ? -value : value;
}

} // namespace

std::optional<int64_t> decimalToNs(std::string_view text, int64_t nsPerUnit) {
    if (auto fast = simpleDecimalToNs(text, nsPerUnit)) return fast;
    Decimal d;
    size_t i = 0;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
    if (!readMantissa(text, i, d)) return std::nullopt;
    if (i < text.size() && !readExponent(text, i, d.exp10)) return std::nullopt;
    // Fold nsPerUnit (a power of ten: 1, 1000, ...) into the exponent.
    int64_t scale = nsPerUnit;
    while (scale >= 10 && scale % 10 == 0) {
        scale /= 10;
        ++d.exp10;
    }
    if (d.digits.empty()) return 0;
    return roundedValue(d, scale);
}

bool isNcclKernelName(std::string_view name) {
    if (istartsWith(name, "void ")) name.remove_prefix(5);
    return istartsWith(name, "nccl");
}

std::string ncclCollectiveFromName(std::string_view name) {
    if (istartsWith(name, "void ")) name.remove_prefix(5);
    // ncclKernel_<Coll>_..., ncclDevKernel_<Coll>_..., ncclDevKernel_<Coll>(args)
    size_t start = name.find('_');
    if (start == std::string_view::npos) return {};
    ++start;
    size_t end = start;
    while (end < name.size() && (std::isalnum(static_cast<unsigned char>(name[end])))) ++end;
    return std::string(name.substr(start, end - start));
}

bool isPointToPoint(std::string_view c) {
    while (!c.empty() && c.front() == '_') c.remove_prefix(1); // PyTorch writes "_send"
    return iequals(c, "SendRecv") || iequals(c, "Send") || iequals(c, "Recv") ||
           iequals(c, "send_recv");
}

int64_t dtypeSize(std::string_view t) {
    struct Entry {
        std::string_view name;
        int64_t size;
    };
    static constexpr Entry kTable[] = {
        {"float", 4},    {"float32", 4},  {"f32", 4},     {"double", 8},    {"float64", 8},
        {"f64", 8},      {"half", 2},     {"float16", 2}, {"f16", 2},       {"bfloat16", 2},
        {"bf16", 2},     {"long", 8},     {"int64", 8},   {"int", 4},       {"int32", 4},
        {"short", 2},    {"int16", 2},    {"char", 1},    {"int8", 1},      {"byte", 1},
        {"uint8", 1},    {"bool", 1},     {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
        {"complexfloat", 8}, {"complexdouble", 16}};
    for (const auto& e : kTable)
        if (iequals(t, e.name)) return e.size;
    return 0;
}

namespace {

/// Kineto's categories, old and new spellings (compared without case); "kernel" is apart, as
/// the event decides whether it is an NCCL kernel.
struct KinetoCategory {
    std::string_view cat;
    Category category;
    Lane lane;
};
constexpr KinetoCategory kKinetoCategories[] = {
    {"gpu_memcpy", Category::GpuMemcpy, Lane::Gpu},
    {"memcpy", Category::GpuMemcpy, Lane::Gpu},
    {"gpu_memset", Category::GpuMemset, Lane::Gpu},
    {"memset", Category::GpuMemset, Lane::Gpu},
    {"gpu_user_annotation", Category::UserRange, Lane::Gpu},
    {"cuda_sync", Category::GpuSync, Lane::Gpu},
    {"cuda_runtime", Category::CudaApi, Lane::Cpu},
    {"runtime", Category::CudaApi, Lane::Cpu},
    {"cuda_driver", Category::CudaApi, Lane::Cpu},
    {"cpu_op", Category::CpuOp, Lane::Cpu},
    {"operator", Category::CpuOp, Lane::Cpu},
    {"python_function", Category::CpuOp, Lane::Cpu},
    {"python", Category::CpuOp, Lane::Cpu},
    {"cpu_instant_event", Category::CpuOp, Lane::Cpu},
    {"user_annotation", Category::UserRange, Lane::Cpu},
    {"trace", Category::UserRange, Lane::Cpu},
    {"cuda_profiler_range", Category::UserRange, Lane::Cpu},
    // Other accelerators (Kineto's ActivityType names): runtime calls on the host, syncs.
    {"hpu_op", Category::CudaApi, Lane::Cpu}, // Gaudi: "HPU host side runtime event"
    {"xpu_sync", Category::GpuSync, Lane::Gpu},
};

/// Kineto categories that are not timed work of the program on a host thread or a device
/// queue: profiler overhead, CUDA event records, MTIA's insight and counter streams, scope
/// profiler ranges, correlation records. Stored as CPU ranges they would lengthen the run and
/// count as host computation, so they are counted by name instead of imported.
constexpr std::string_view kNotAnalysed[] = {
    "overhead",     "cuda_event",         "mtia_insight",         "mtia_counters",
    "mtia_workloadd", "gpu_pm_counter",   "xpu_scope_profiler",   "external_correlation",
    "collective_comm",
};

bool iendsWith(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && iequals(s.substr(s.size() - p.size()), p);
}

/// Accelerator categories Kineto writes besides CUDA's, or empty.
std::optional<CategoryMapping> acceleratorCategory(std::string_view cat, std::string_view name,
                                                   bool hasCollectiveArgs) {
    if (iequals(cat, "mtia_ccp_events")) { // MTIA's on-device events: Kineto's kernel alias
        bool comm = hasCollectiveArgs || isNcclKernelName(name);
        return CategoryMapping{comm ? Category::GpuCommKernel : Category::GpuKernel, Lane::Gpu,
                               true, false, "MTIA"};
    }
    for (auto skipped : kNotAnalysed)
        if (iequals(cat, skipped)) return CategoryMapping{Category::CpuOp, Lane::Cpu, true, true};
    // xpu_runtime, xpu_driver, mtia_runtime, privateuse1_runtime/_driver, glow_runtime,
    // and the accelerator-agnostic "driver": runtime API calls on the host.
    if (iequals(cat, "driver") || iendsWith(cat, "_runtime") || iendsWith(cat, "_driver"))
        return CategoryMapping{Category::CudaApi, Lane::Cpu, true};
    return std::nullopt;
}

/// The lane of an hpcprof category: GPU kernels, copies and sets run on a stream.
Lane laneOf(Category c) {
    bool gpu = c == Category::GpuKernel || c == Category::GpuCommKernel ||
               c == Category::GpuMemcpy || c == Category::GpuMemset;
    return gpu ? Lane::Gpu : Lane::Cpu;
}

} // namespace

CategoryMapping mapCategory(std::string_view cat, std::string_view name, bool hasCollectiveArgs) {
    if (cat.empty()) return {Category::CpuOp, Lane::Cpu, true}; // plain Chrome traces have none
    if (iequals(cat, "kernel")) {
        bool comm = hasCollectiveArgs || isNcclKernelName(name);
        return {comm ? Category::GpuCommKernel : Category::GpuKernel, Lane::Gpu, true};
    }
    for (const auto& k : kKinetoCategories)
        if (iequals(cat, k.cat)) return {k.category, k.lane, true};
    if (auto accel = acceleratorCategory(cat, name, hasCollectiveArgs)) return *accel;
    // hpcprof's own category names (an exported trace, or a hand-written one).
    for (const auto& info : schema::kCategories)
        if (iequals(cat, info.name)) return {info.category, laneOf(info.category), true};
    return {Category::CpuOp, Lane::Cpu, false};
}

MemcpyKinds parseMemcpyName(std::string_view name) {
    MemcpyKinds k;
    if (!istartsWith(name, "Memcpy ")) return k;
    std::string_view rest = name.substr(7);
    size_t sp = rest.find(' ');
    std::string_view kind = rest.substr(0, sp);
    static constexpr std::string_view kKinds[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
    for (auto kk : kKinds)
        if (iequals(kind, kk)) k.copyKind = std::string(kk);
    size_t open = name.find('('), arrow = name.find("->"), close = name.rfind(')');
    if (open == std::string_view::npos || arrow == std::string_view::npos ||
        close == std::string_view::npos || !(open < arrow && arrow < close))
        return k;
    auto memoryKind = [](std::string_view s) -> std::string {
        while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
        while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
        static constexpr std::string_view kMem[] = {"pageable", "pinned", "device", "managed"};
        for (auto m : kMem)
            if (iequals(s, m)) return std::string(m);
        return {};
    };
    k.srcKind = memoryKind(name.substr(open + 1, arrow - open - 1));
    k.dstKind = memoryKind(name.substr(arrow + 2, close - arrow - 2));
    return k;
}

std::optional<int64_t> rankFromFileName(std::string_view fileName) {
    for (size_t pos = 0; pos + 4 < fileName.size(); ++pos) {
        if (!iequals(fileName.substr(pos, 4), "rank")) continue;
        size_t i = pos + 4;
        if (i < fileName.size() && (fileName[i] == '-' || fileName[i] == '_' || fileName[i] == '.'))
            ++i;
        int64_t v = 0;
        size_t start = i;
        while (i < fileName.size() && std::isdigit(static_cast<unsigned char>(fileName[i])) &&
               i - start < 9)
            v = v * 10 + (fileName[i++] - '0');
        if (i > start) return v;
    }
    return std::nullopt;
}

} // namespace hpcprof::import
