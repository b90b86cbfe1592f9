// SPDX-License-Identifier: MIT
// Compile-time catalogs of categories, operations and data-quality stats, generated from the
// .def lists beside this header so the agent, the store, the docs and the DDL share one source.
#pragma once

#include <array>

#include <cstdint>
#include <optional>
#include <string_view>

namespace hpcprof::schema {

/// Fine event category; the numeric value is stored in traces.
enum class Category : uint8_t {
#define HPCPROF_CATEGORY(e, name, cls, id) e = id,
#include "hpcprof/schema/categories.def"
#undef HPCPROF_CATEGORY
};

/// Intercepted function; the numeric value travels in raw records.
enum class Op : uint16_t {
#define HPCPROF_OP(e, name, cat, id) e = id,
#include "hpcprof/schema/ops.def"
#undef HPCPROF_OP
};

enum class Severity : uint8_t { Info, DataLoss, Error };

/// Data-quality counter; the order is the stats table's row order.
enum class Stat : uint16_t {
#define HPCPROF_STAT(e, name, sev, src, desc) e,
#include "hpcprof/schema/stats.def"
#undef HPCPROF_STAT
    Count_
};

struct CategoryInfo {
    Category category;
    std::string_view name;
    std::string_view className;
};

struct OpInfo {
    Op op;
    std::string_view name;
    Category category;
};

struct StatInfo {
    Stat stat;
    std::string_view name;
    Severity severity;
    std::string_view source;
    std::string_view description;
};

inline constexpr CategoryInfo kCategories[] = {
#define HPCPROF_CATEGORY(e, name, cls, id) {Category::e, name, cls},
#include "hpcprof/schema/categories.def"
#undef HPCPROF_CATEGORY
};

inline constexpr OpInfo kOps[] = {
#define HPCPROF_OP(e, name, cat, id) {Op::e, name, Category::cat},
#include "hpcprof/schema/ops.def"
#undef HPCPROF_OP
};

namespace detail {
constexpr Severity severityOf(std::string_view s) {
    return s == "info" ? Severity::Info : s == "data_loss" ? Severity::DataLoss : Severity::Error;
}
} // namespace detail

inline constexpr StatInfo kStats[] = {
#define HPCPROF_STAT(e, name, sev, src, desc)                                                      \
    {Stat::e, name, detail::severityOf(#sev), #src, desc},
#include "hpcprof/schema/stats.def"
#undef HPCPROF_STAT
};

static_assert(std::size(kStats) == static_cast<size_t>(Stat::Count_));

/// Name of a severity as written in the stats table.
constexpr std::string_view severityName(Severity s) {
    switch (s) {
    case Severity::Info: return "info";
    case Severity::DataLoss: return "data_loss";
    case Severity::Error: return "error";
    }
    return "error";
}

namespace detail {
/// Op ids are small (ops.def): a direct index from id to kOps position, -1 = unknown. Built at
/// compile time; the store looks an op up for every event, so no linear search.
inline constexpr size_t kOpIdLimit = 2048;
constexpr std::array<int16_t, kOpIdLimit> makeOpIndex() {
    std::array<int16_t, kOpIdLimit> index{};
    for (auto& i : index) i = -1;
    for (size_t k = 0; k < std::size(kOps); ++k) index[static_cast<uint16_t>(kOps[k].op)] = int16_t(k);
    return index;
}
constexpr bool opIdsFitAndAreUnique() {
    std::array<bool, kOpIdLimit> seen{};
    for (const auto& info : kOps) {
        auto id = static_cast<uint16_t>(info.op);
        if (id >= kOpIdLimit || seen[id]) return false;
        seen[id] = true;
    }
    return true;
}
static_assert(opIdsFitAndAreUnique(), "ops.def ids must be unique and below detail::kOpIdLimit");
inline constexpr std::array<int16_t, kOpIdLimit> kOpIndex = makeOpIndex();
} // namespace detail

/// Looks up an op by its raw id; empty for ids this build does not know.
constexpr const OpInfo* findOp(uint16_t id) {
    if (id >= detail::kOpIdLimit) return nullptr;
    int16_t k = detail::kOpIndex[id];
    return k < 0 ? nullptr : &kOps[size_t(k)];
}

constexpr const CategoryInfo& categoryInfo(Category c) {
    for (const auto& info : kCategories)
        if (info.category == c) return info;
    return kCategories[0]; // unreachable for valid enumerators
}

constexpr const StatInfo& statInfo(Stat s) { return kStats[static_cast<size_t>(s)]; }

/// How the partner of a point-to-point call that has not returned is named: the peer its
/// in-flight record carries is the rank a send sends to ("to"), or the rank a receive, a probe or
/// a send-receive (its receive) waits to hear from ("from"). Any spelling of send: MPI_Ssend,
/// MPI_Bsend, ncclSend, ibv_post_send.
constexpr std::string_view inFlightPartnerWord(std::string_view call) {
    auto has = [call](std::string_view word) {
        for (size_t i = 0; i + word.size() <= call.size(); ++i) {
            size_t k = 0;
            while (k < word.size() && (call[i + k] | 0x20) == word[k]) ++k;
            if (k == word.size()) return true;
        }
        return false;
    };
    return has("send") && !has("sendrecv") ? "to" : "from";
}
static_assert(inFlightPartnerWord("MPI_Ssend") == "to" && inFlightPartnerWord("ncclSend") == "to" &&
              inFlightPartnerWord("MPI_Sendrecv_replace") == "from" && inFlightPartnerWord("MPI_Recv") == "from");

} // namespace hpcprof::schema
