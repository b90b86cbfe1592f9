// SPDX-License-Identifier: MIT
#include "models/format.hpp"

#include <cmath>
#include <cstdlib>

namespace hpcprof::gui {

QString formatDuration(int64_t ns) {
    const double a = std::fabs(double(ns));
    auto fmt = [](double v, const char* unit) {
        int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
        return QString::number(v, 'f', decimals) + QLatin1Char(' ') + QLatin1String(unit);
    };
    if (a < 1e3) return QString::number(ns) + QStringLiteral(" ns");
    if (a < 1e6) return fmt(double(ns) / 1e3, "us");
    if (a < 1e9) return fmt(double(ns) / 1e6, "ms");
    return fmt(double(ns) / 1e9, "s");
}

QString formatTick(int64_t ns, int64_t stepNs) {
    struct Unit { int64_t scale; const char* name; };
    static const Unit kUnits[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
    for (const Unit& u : kUnits) {
        if (stepNs >= u.scale || u.scale == 1) {
            // Decimals enough to show the step: step 250 us in ms unit -> 2 decimals.
            int decimals = 0;
            for (int64_t s = stepNs; s % u.scale != 0 && decimals < 6; s *= 10) ++decimals;
            return QString::number(double(ns) / double(u.scale), 'f', decimals) + QLatin1Char(' ') +
                   QLatin1String(u.name);
        }
    }
    return QString::number(ns);
}

QString formatBytes(int64_t bytes) {
    if (bytes < 1024) return QString::number(bytes) + QStringLiteral(" B");
    static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    return QString::number(v, 'f', v >= 100 || v == std::floor(v) ? 0 : 1) + QLatin1Char(' ') +
           QLatin1String(kUnits[u]);
}

} // namespace hpcprof::gui
