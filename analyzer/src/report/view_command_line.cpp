// SPDX-License-Identifier: MIT
// The `hpcprof view` command line that opens the GUI at a finding or an event of the report
// (docs/reports.md, "From the report to the timeline"): the reports print it next to each
// finding and example event so it can be copied into a shell.
#include <algorithm>
#include <cctype>

#include "writer_parts.hpp"

namespace hpcprof::report::detail {

namespace {

/// Characters a shell takes literally outside quotes.
bool shellSafe(unsigned char c) {
    return std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ':' ||
           c == '@' || c == '%' || c == ',' || c == '=';
}

} // namespace

std::string shellQuote(const std::string& word) {
    if (!word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return shellSafe(static_cast<unsigned char>(c)); }))
        return word;
    // Single quotes keep everything literal but a single quote, which closes, escapes and reopens.
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string viewCommandLine(const analyzer::Analysis& a, const std::string& option, const std::string& value) {
    return "hpcprof view " + shellQuote(a.tracePath) + " " + option + " " + shellQuote(value);
}

} // namespace hpcprof::report::detail
