// SPDX-License-Identifier: MIT
#include "models/counter_lanes.hpp"

#include <algorithm>
#include <cmath>

namespace hpcprof::gui {

namespace {

bool isCpuTime(const CounterTrackInfo& c) { return c.perThread && c.unit == QLatin1String("ns"); }

bool isFraction(const CounterTrackInfo& c) {
    return c.name == QLatin1String("cpu_utilization") || c.name == QLatin1String("cpu_wait_fraction");
}

bool isBytes(const CounterTrackInfo& c) {
    return c.unit == QLatin1String("bytes") || c.name.contains(QLatin1String("bytes"), Qt::CaseInsensitive);
}

/// A count per second with a k/M/G prefix.
QString scaled(double v) {
    static const char* kPrefix[] = {"", " k", " M", " G"};
    int i = 0;
    while (i < 3 && std::abs(v) >= 1000) {
        v /= 1000;
        ++i;
    }
    return QString::number(v, 'g', 3) + QLatin1String(kPrefix[i]);
}

} // namespace

double counterRateCap(const CounterTrackInfo& c) { return isCpuTime(c) ? 1e9 : 0; }

QString counterUnitLabel(const CounterTrackInfo& c) {
    if (isCpuTime(c) || isFraction(c)) return QStringLiteral("% CPU");
    if (c.unit == QLatin1String("ratio")) return QStringLiteral("ratio");
    if (isBytes(c)) return QStringLiteral("GB/s");
    return QStringLiteral("/s");
}

QString formatCounterValue(const CounterTrackInfo& c, double value) {
    if (isCpuTime(c)) return QString::number(value / 1e7, 'f', 0) + QStringLiteral(" % CPU");
    if (isFraction(c)) return QString::number(value * 100, 'f', 0) + QStringLiteral(" % CPU");
    if (c.unit == QLatin1String("ratio")) return QString::number(value, 'g', 3);
    if (isBytes(c)) return QString::number(value / 1e9, 'g', 3) + QStringLiteral(" GB/s");
    return scaled(value) + QStringLiteral("/s");
}

QSet<QString> defaultCounterNames(const std::vector<CounterTrackInfo>& counters) {
    // The raw CPU clocks when the trace has them: their lanes move what an interval read late
    // back to where it belongs (chartFromSamples), while the stored ratios are clamped per
    // interval, which cuts a run-queue wait the kernel added when the thread next ran.
    bool raw = false;
    for (const auto& c : counters) raw |= c.name == QLatin1String("task_clock") && c.perThread;
    if (raw) return {QStringLiteral("task_clock"), QStringLiteral("cpu_wait")};
    return {QStringLiteral("cpu_utilization"), QStringLiteral("cpu_wait_fraction")};
}

bool counterLaneShown(const CounterTrackInfo& c, const QSet<QString>& shown, bool rankless) {
    if (!shown.contains(c.name)) return false;
    static const QSet<QString> kCpuUse = {QStringLiteral("cpu_utilization"), QStringLiteral("cpu_wait_fraction"),
                                          QStringLiteral("task_clock"), QStringLiteral("cpu_wait")};
    // One CPU-use lane per rank: its main thread; other threads' lanes stay folded away.
    if (!kCpuUse.contains(c.name)) return true;
    return !rankless && (c.mainThread || !c.perThread);
}

QString stackedCounterName(const QString& name) {
    if (name == QLatin1String("task_clock")) return QStringLiteral("cpu_wait");
    if (name == QLatin1String("cpu_utilization")) return QStringLiteral("cpu_wait_fraction");
    return {};
}

std::pair<int, int> cpuUseHeights(double use, double wait, double full, int h) {
    if (full <= 0 || h <= 0) return {0, 0};
    const auto px = [&](double v) { return int(std::clamp(v / full, 0.0, 1.0) * h + 0.5); };
    const int u = px(use);
    return {u, std::min(h - u, px(use + wait) - u)};
}

} // namespace hpcprof::gui
