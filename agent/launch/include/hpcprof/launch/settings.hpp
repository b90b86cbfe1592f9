// SPDX-License-Identifier: MIT
// The HPCPROF_* environment variables (settings.def) and the one rule that decides whether a
// value is valid. The agent reads through numberSetting()/textSetting(), which give the
// fallback for a bad value; the CLI uses the same rule to warn about bad values and to check
// options that set them (--counter-period), so both always agree.
//
// Everything here is allocation-free, exception-free and async-signal-safe: the agent calls it
// from its constructor inside the profiled program.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sources.hpp"

namespace hpcprof::agent {

enum class SettingKind : uint8_t { Integer, Decimal, Word, List, Text, File };

struct SettingSpec {
    const char* variable;  ///< "HPCPROF_CHUNK_KB"
    SettingKind kind;
    double min;            ///< numbers: least accepted value
    double max;            ///< numbers: greatest accepted value; text: longest length (0: any)
    double fallback;       ///< numbers: value used when unset or invalid
    const char* accepted;  ///< words and lists: the accepted words, comma-separated
    const char* unit;      ///< numbers: unit for messages ("MB"), may be empty
};

enum class Setting : uint8_t {
#define HPCPROF_SETTING(id, var, kind, min, max, fallback, accepted, unit) id,
#include "settings.def"
#undef HPCPROF_SETTING
};

namespace detail {
constexpr SettingKind settingKind(const char* k) {
    // The .def file names kinds in lower case; this maps them without a second table.
    return k[0] == 'i'                  ? SettingKind::Integer
           : k[0] == 'd'                ? SettingKind::Decimal
           : k[0] == 'w'                ? SettingKind::Word
           : k[0] == 'l'                ? SettingKind::List
           : k[0] == 't'                ? SettingKind::Text
                                        : SettingKind::File;
}
} // namespace detail

inline constexpr SettingSpec kSettings[] = {
#define HPCPROF_SETTING(id, var, kind, min, max, fallback, accepted, unit)                          \
    {var, detail::settingKind(#kind), double(min), double(max), double(fallback), accepted, unit},
#include "settings.def"
#undef HPCPROF_SETTING
};
inline constexpr size_t kSettingCount = sizeof(kSettings) / sizeof(kSettings[0]);

constexpr const SettingSpec& settingSpec(Setting s) { return kSettings[size_t(s)]; }

/// Whether `text` is a valid value under `spec`'s rule (File: only checks it is not empty; the
/// CLI checks that the file exists). For numbers, *number receives the value when valid.
bool settingValueValid(const SettingSpec& spec, const char* text, double* number = nullptr);

/// Whether `word` (of `len` characters) is one of the comma-separated `accepted` words.
bool acceptedWord(const char* accepted, const char* word, size_t len);

/// The environment variable's number when it is set and valid, else the spec's fallback.
double numberSetting(Setting s);

/// The environment variable's text when it is set, not empty and valid, else nullptr.
const char* textSetting(Setting s);

} // namespace hpcprof::agent
