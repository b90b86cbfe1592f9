// SPDX-License-Identifier: MIT
#include "settings_check.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "hpcprof/launch/config.hpp"

namespace hpcprof::cli {

using agent::SettingKind;
using agent::SettingSpec;

namespace {

std::string number(double v) { return fmt::format("{}", v); }

std::string wordsText(const char* accepted) {
    std::string out;
    for (const char* p = accepted; *p; ++p) out += *p == ',' ? std::string(", ") : std::string(1, *p);
    return out;
}

CLI::Validator validatorFor(const SettingSpec& spec) {
    return CLI::Validator(
        [spec](std::string& value) -> std::string {
            if (agent::settingValueValid(spec, value.c_str())) return {};
            return fmt::format("'{}' is not accepted (accepted: {})", value, describeRule(spec));
        },
        describeRule(spec));
}

} // namespace

std::string describeRule(const SettingSpec& spec) {
    std::string unit = *spec.unit ? fmt::format(" ({})", spec.unit) : std::string();
    switch (spec.kind) {
    case SettingKind::Integer:
        return fmt::format("an integer from {} to {}{}", number(spec.min), number(spec.max), unit);
    case SettingKind::Decimal:
        return fmt::format("a number from {} to {}{}", number(spec.min), number(spec.max), unit);
    case SettingKind::Word: return "one of " + wordsText(spec.accepted);
    case SettingKind::List: return "a comma list of " + wordsText(spec.accepted);
    case SettingKind::Text:
        return spec.max > 0 ? fmt::format("at most {} characters", number(spec.max))
                            : std::string("any text");
    case SettingKind::File: return "the path of an existing file";
    }
    return {};
}

std::vector<std::string> environmentWarnings() {
    std::vector<std::string> out;
    for (const SettingSpec& spec : agent::kSettings) {
        // A file setting names a program or library to use: the command that uses it refuses
        // a path without a file (there is no default to fall back on silently).
        if (spec.kind == SettingKind::File) continue;
        const char* value = std::getenv(spec.variable);
        if (!value || !*value || agent::settingValueValid(spec, value)) continue;
        std::string fallback = spec.kind == SettingKind::Integer || spec.kind == SettingKind::Decimal
                                   ? "the default " + number(spec.fallback)
                                   : std::string("the default");
        out.push_back(fmt::format("{}={} is not valid (accepted: {}); using {}", spec.variable,
                                  value, describeRule(spec), fallback));
    }
    return out;
}

CLI::Validator acceptedBy(agent::Setting setting) {
    return validatorFor(agent::settingSpec(setting));
}

CLI::Validator numberFrom(double min, double max, const std::string& unit, bool integer) {
    // The unit outlives the validator: keep it in the spec through a shared string.
    auto unitText = std::make_shared<std::string>(unit);
    SettingSpec spec{"", integer ? SettingKind::Integer : SettingKind::Decimal, min, max, 0, "",
                     unitText->c_str()};
    return CLI::Validator(
        [spec, unitText](std::string& value) -> std::string {
            if (agent::settingValueValid(spec, value.c_str())) return {};
            return fmt::format("'{}' is not accepted (accepted: {})", value, describeRule(spec));
        },
        describeRule(spec));
}

std::string sourceNamesText() { return wordsText(agent::kSourceWords); }

std::string checkSourceList(const std::string& list) {
    size_t len = 0;
    if (const char* bad = agent::firstUnknownSource(list.c_str(), &len))
        return fmt::format("--sources names an unknown source '{}' (known: {})",
                           std::string(bad, len), sourceNamesText());
    if (agent::parseSources(list.c_str()) == 0)
        return fmt::format("--sources '{}' names no source (known: {})", list, sourceNamesText());
    return {};
}

} // namespace hpcprof::cli
