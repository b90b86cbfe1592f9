// SPDX-License-Identifier: MIT
#include "hpcprof/launch/settings.hpp"

#include <cstdlib>
#include <cstring>

namespace hpcprof::agent {

namespace {

// A plain decimal number: optional sign, digits, and (decimal kind only) one fraction. No
// exponent, hex, inf or nan, no spaces: strtod/strtoull accept all of those, and strtoull
// turns "-1" into 2^64-1, which is how a bad HPCPROF_THREAD_BUFFER_MB used to wrap.
bool parseNumber(const char* s, bool allowFraction, double* out) {
    bool negative = false;
    if (*s == '-' || *s == '+') negative = *s++ == '-';
    double value = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; ++s, ++digits) {
        if (digits >= 18) return false; // beyond every range in settings.def, and exact below
        value = value * 10 + (*s - '0');
    }
    if (allowFraction && *s == '.') {
        double scale = 0.1;
        ++s;
        for (int fraction = 0; *s >= '0' && *s <= '9'; ++s, ++digits, ++fraction, scale /= 10)
            if (fraction < 9) value += (*s - '0') * scale;
    }
    if (digits == 0 || *s != 0) return false;
    *out = negative ? -value : value;
    return true;
}

} // namespace

bool acceptedWord(const char* accepted, const char* word, size_t len) {
    for (const char* p = accepted; p && *p;) {
        const char* comma = std::strchr(p, ',');
        size_t n = comma ? size_t(comma - p) : std::strlen(p);
        if (n == len && std::strncmp(p, word, len) == 0) return true;
        p = comma ? comma + 1 : nullptr;
    }
    return false;
}

bool settingValueValid(const SettingSpec& spec, const char* text, double* number) {
    if (!text) return false;
    switch (spec.kind) {
    case SettingKind::Integer:
    case SettingKind::Decimal: {
        double v = 0;
        if (!parseNumber(text, spec.kind == SettingKind::Decimal, &v)) return false;
        if (v < spec.min || v > spec.max) return false;
        if (number) *number = v;
        return true;
    }
    case SettingKind::Word:
        return acceptedWord(spec.accepted, text, std::strlen(text));
    case SettingKind::List: {
        // Empty items ("io,,mpi", a trailing comma) are skipped; at least one word is needed.
        bool any = false;
        for (const char* p = text; p;) {
            const char* comma = std::strchr(p, ',');
            size_t n = comma ? size_t(comma - p) : std::strlen(p);
            if (n > 0 && !acceptedWord(spec.accepted, p, n)) return false;
            any = any || n > 0;
            p = comma ? comma + 1 : nullptr;
        }
        return any;
    }
    case SettingKind::Text:
        return spec.max <= 0 || double(std::strlen(text)) <= spec.max;
    case SettingKind::File:
        return *text != 0;
    }
    return false;
}

double numberSetting(Setting s) {
    const SettingSpec& spec = settingSpec(s);
    double v = spec.fallback;
    const char* text = std::getenv(spec.variable);
    if (text && *text && settingValueValid(spec, text, &v)) return v;
    return spec.fallback;
}

const char* textSetting(Setting s) {
    const SettingSpec& spec = settingSpec(s);
    const char* text = std::getenv(spec.variable);
    return text && *text && settingValueValid(spec, text) ? text : nullptr;
}

} // namespace hpcprof::agent
