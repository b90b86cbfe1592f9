// SPDX-License-Identifier: MIT
// The display form of names (printable.hpp): a UTF-8 decoder that passes valid, printable
// characters through and writes every other byte as \xNN.
#include "hpcprof/report/printable.hpp"

namespace hpcprof::report {

namespace {

/// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the byte there does not start
/// one (stray continuation byte, overlong form, surrogate, beyond U+10FFFF, cut short).
size_t sequenceLength(std::string_view s, size_t i, uint32_t& codePoint) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = byte(0);
    if (c < 0x80) {
        codePoint = c;
        return 1;
    }
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || i + len > s.size())
        return 0;
    for (size_t k = 1; k < len; ++k)
        if ((byte(k) & 0xC0) != 0x80)
            return 0;
    const unsigned char c1 = byte(1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || // overlong, surrogate
        (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))   // overlong, > U+10FFFF
        return 0;
    codePoint = len == 2   ? (c & 0x1Fu) << 6 | (c1 & 0x3Fu)
                : len == 3 ? (c & 0x0Fu) << 12 | (c1 & 0x3Fu) << 6 | (byte(2) & 0x3Fu)
                           : (c & 0x07u) << 18 | (c1 & 0x3Fu) << 12 | (byte(2) & 0x3Fu) << 6 |
                                 (byte(3) & 0x3Fu);
    return len;
}

bool displayable(uint32_t cp, bool keepNewlines) {
    if (cp == '\n')
        return keepNewlines;
    return !(cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF);
}

/// Calls keep(i, len) for each displayable character and escape(i) for each other byte.
template <typename Keep, typename Escape>
void walk(std::string_view s, bool keepNewlines, Keep&& keep, Escape&& escape) {
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        size_t len = sequenceLength(s, i, cp);
        if (len > 0 && displayable(cp, keepNewlines)) {
            keep(i, len);
            i += len;
        } else {
            // A control character's bytes are all escaped; a broken sequence only its first
            // byte, so that what follows it is read again on its own.
            for (size_t k = 0; k < (len ? len : 1); ++k)
                escape(i + k);
            i += len ? len : 1;
        }
    }
}

} // namespace

std::string printable(std::string_view s, bool keepNewlines) {
    if (isPrintable(s, keepNewlines))
        return std::string(s);
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size() + 16);
    walk(
        s, keepNewlines, [&](size_t i, size_t len) { out.append(s.substr(i, len)); },
        [&](size_t i) {
            const auto b = static_cast<unsigned char>(s[i]);
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 0xF];
        });
    return out;
}

bool isPrintable(std::string_view s, bool keepNewlines) {
    bool ok = true;
    // The fast path for the usual name: printable ASCII only.
    for (char c : s) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b >= 0x7F) {
            ok = false;
            break;
        }
    }
    if (ok)
        return true;
    ok = true;
    walk(
        s, keepNewlines, [](size_t, size_t) {}, [&](size_t) { ok = false; });
    return ok;
}

void makePrintable(nlohmann::json& doc) {
    if (doc.is_string()) {
        auto& s = doc.get_ref<std::string&>();
        if (!isPrintable(s, true))
            s = printable(s, true);
    } else if (doc.is_array()) {
        for (auto& v : doc)
            makePrintable(v);
    } else if (doc.is_object()) {
        // Keys cannot be changed in place: an object with an unprintable key is rebuilt.
        bool keysOk = true;
        for (auto it = doc.begin(); it != doc.end(); ++it) {
            keysOk = keysOk && isPrintable(it.key(), true);
            makePrintable(it.value());
        }
        if (!keysOk) {
            nlohmann::json rebuilt = nlohmann::json::object();
            for (auto it = doc.begin(); it != doc.end(); ++it)
                rebuilt[printable(it.key(), true)] = std::move(it.value());
            doc = std::move(rebuilt);
        }
    }
}

} // namespace hpcprof::report
