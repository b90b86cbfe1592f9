// SPDX-License-Identifier: MIT
#include "models/severity_colors.hpp"

namespace hpcprof::gui {

QColor severityColor(analyzer::Severity s) {
    switch (s) {
    case analyzer::Severity::Critical: return {0xc6, 0x28, 0x28};
    case analyzer::Severity::Warning: return {0xb2, 0x6a, 0x00};
    default: return {0x45, 0x5a, 0x64};
    }
}

QColor severityTint(analyzer::Severity s) {
    const QColor c = severityColor(s);
    const auto mix = [](int v) { return int(0.35 * v + 0.65 * 255 + 0.5); };
    return {mix(c.red()), mix(c.green()), mix(c.blue())};
}

analyzer::Severity statSeverity(const QString& text) {
    if (text == QLatin1String("info")) return analyzer::Severity::Info;
    if (text == QLatin1String("error")) return analyzer::Severity::Critical;
    return analyzer::Severity::Warning;
}

analyzer::Severity warningSeverity(const analyzer::DataWarning& w) {
    auto colon = w.message.find(':');
    if (colon == std::string::npos) return analyzer::Severity::Warning;
    return statSeverity(QString::fromStdString(w.message.substr(0, colon)));
}

} // namespace hpcprof::gui
