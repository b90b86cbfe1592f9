// SPDX-License-Identifier: MIT
// Short kernel names for report tables; the rule is in kernel_names.hpp.
#include "hpcprof/report/kernel_names.hpp"

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

} // namespace hpcprof::analyzer
