// SPDX-License-Identifier: MIT
// Short kernel names for report tables; the rule is in kernel_names.hpp.
#include "hpcprof/report/kernel_names.hpp"

#include <map>
#include <vector>

namespace hpcprof::analyzer {

namespace {

bool opens(char c) { return c == '<' || c == '(' || c == '['; }
bool closes(char c) { return c == '>' || c == ')' || c == ']'; }
char closerOf(char c) { return c == '<' ? '>' : c == '(' ? ')' : ']'; }

/// True when every bracket of `s` closes the one opened last ("operator->" and a lone "<" in an
/// operator name fail this and keep the name as it is).
bool balanced(std::string_view s) {
    std::vector<char> open;
    for (char c : s) {
        if (opens(c)) open.push_back(closerOf(c));
        else if (closes(c)) {
            if (open.empty() || open.back() != c) return false;
            open.pop_back();
        }
    }
    return open.empty();
}

/// `s` without the parameter list that ends it: the top-level "(" whose ")" is the last character.
std::string_view withoutParameters(std::string_view s) {
    if (s.empty() || s.back() != ')') return s;
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
        if (closes(s[i])) ++depth;
        else if (opens(s[i]) && --depth == 0) return s[i] == '(' && i > 0 ? s.substr(0, i) : s;
    }
    return s;
}

/// `s` with the contents of each outermost "<...>" replaced by "..." (brackets balanced).
std::string foldTemplates(std::string_view s) {
    std::string out;
    int depth = 0; ///< brackets open inside the current outermost "<"
    for (char c : s) {
        if (depth == 0) {
            out += c;
            if (c == '<') {
                out += "...";
                depth = 1;
            }
            continue;
        }
        if (opens(c)) ++depth;
        else if (closes(c) && --depth == 0) out += '>';
    }
    return out;
}

} // namespace

std::string shortKernelName(std::string_view name, size_t max) {
    if (name.substr(0, 5) == "void ") name.remove_prefix(5);
    std::string s(name);
    if (balanced(name)) {
        s = std::string(withoutParameters(name));
        if (s.size() > max) s = foldTemplates(s);
    }
    if (s.size() > max && max > 3) { // the ends tell kernels apart: "..._cta_per_row_1<...>"
        const size_t tail = (max - 3) / 2;
        s = s.substr(0, max - 3 - tail) + "..." + s.substr(s.size() - tail);
    }
    return s;
}

namespace {

/// Indexes of the names whose short form in `out` another, different name also has.
std::vector<size_t> collisions(const std::vector<std::string_view>& names, const std::vector<std::string>& out) {
    std::map<std::string_view, std::string_view> firstFull; ///< short form -> a full name with it
    std::map<std::string_view, bool> clash;
    for (size_t i = 0; i < out.size(); ++i) {
        auto [it, fresh] = firstFull.emplace(out[i], names[i]);
        if (!fresh && it->second != names[i]) clash[out[i]] = true;
    }
    std::vector<size_t> idx;
    for (size_t i = 0; i < out.size(); ++i)
        if (clash.count(out[i])) idx.push_back(i);
    return idx;
}

} // namespace

std::vector<std::string> shortKernelNames(const std::vector<std::string_view>& names, size_t max) {
    std::vector<std::string> out;
    out.reserve(names.size());
    for (std::string_view n : names) out.push_back(shortKernelName(n, max));
    for (size_t room = max + 16; room <= 4 * max; room += 16) {
        const std::vector<size_t> idx = collisions(names, out);
        if (idx.empty()) return out;
        for (size_t i : idx) out[i] = shortKernelName(names[i], room);
    }
    std::map<std::string, int> seen; ///< short form -> how many names have had it
    const std::vector<size_t> idx = collisions(names, out);
    std::map<std::string_view, std::string> numbered; ///< full name -> its numbered short form
    for (size_t i : idx) {
        auto [it, fresh] = numbered.emplace(names[i], std::string());
        if (fresh) {
            const int k = ++seen[out[i]];
            it->second = k == 1 ? out[i] : out[i] + " #" + std::to_string(k);
        }
        out[i] = it->second;
    }
    return out;
}

} // namespace hpcprof::analyzer
