// SPDX-License-Identifier: MIT
// Counter lanes (default CPU-use set, units, rate cap) and the one severity colour mapping.
#include <catch2/catch.hpp>

#include <memory>

#include "models/analysis_models.hpp"
#include "models/counter_lanes.hpp"
#include "models/findings_model.hpp"
#include "models/lane_layout.hpp"
#include "models/severity_colors.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;

namespace {

CounterTrackInfo counter(int64_t id, const char* name, const char* unit, bool mainThread) {
    return {id, 1, QString::fromLatin1(name), QString::fromLatin1(unit), true, mainThread};
}

} // namespace

TEST_CASE("by default a rank shows its main thread's utilisation and wait, other counters on demand",
          "[gui][counters]") {
    std::vector<CounterTrackInfo> cs = {counter(1, "cpu_utilization", "ratio", true),
                                        counter(2, "cpu_wait_fraction", "ratio", true),
                                        counter(3, "cpu_utilization", "ratio", false),
                                        counter(4, "task_clock", "ns", true),
                                        counter(5, "PAPI_TOT_INS", "count", true)};
    cs.push_back(counter(6, "cpu_wait", "ns", true));
    cs.push_back(counter(7, "task_clock", "ns", false));
    QSet<QString> shown = defaultCounterNames(cs);
    std::vector<int64_t> drawn;
    for (const auto& c : cs)
        if (counterLaneShown(c, shown)) drawn.push_back(c.id);
    // The raw clocks of the main thread (their lanes keep a late-read wait), not the clamped ratios.
    CHECK(drawn == std::vector<int64_t>{4, 6});
    // Chosen from View > Counters: every lane of that name.
    shown.insert(QStringLiteral("PAPI_TOT_INS"));
    CHECK(counterLaneShown(cs[4], shown));
    // A trace with only the ratio tracks (no thread's task_clock) shows those.
    std::vector<CounterTrackInfo> ratios(cs.begin(), cs.begin() + 3);
    shown = defaultCounterNames(ratios);
    drawn.clear();
    for (const auto& c : ratios)
        if (counterLaneShown(c, shown)) drawn.push_back(c.id);
    CHECK(drawn == std::vector<int64_t>{1, 2});
    // A process without a rank in a trace with ranks (mpirun): no CPU-use lanes by default,
    // other chosen counters still.
    shown = defaultCounterNames(cs);
    shown.insert(QStringLiteral("PAPI_TOT_INS"));
    CHECK_FALSE(counterLaneShown(cs[3], shown, true));
    CHECK_FALSE(counterLaneShown(cs[5], shown, true));
    CHECK(counterLaneShown(cs[4], shown, true));
}

TEST_CASE("one CPU-use lane: the wait for a CPU stacked above the utilisation", "[gui][counters]") {
    CHECK(stackedCounterName(QStringLiteral("task_clock")) == QLatin1String("cpu_wait"));
    CHECK(stackedCounterName(QStringLiteral("cpu_utilization")) == QLatin1String("cpu_wait_fraction"));
    CHECK(stackedCounterName(QStringLiteral("cpu_wait")).isEmpty());
    // 24 px for one CPU: 50 % use (12 px) and 25 % wait (6 px above it).
    CHECK(cpuUseHeights(0.5e9, 0.25e9, 1e9, 24) == std::pair<int, int>{12, 6});
    CHECK(cpuUseHeights(0.25, 0.5, 1.0, 24) == std::pair<int, int>{6, 12});
    // Never above one CPU: the wait is cut at the top.
    CHECK(cpuUseHeights(0.75e9, 0.5e9, 1e9, 24) == std::pair<int, int>{18, 6});
    CHECK(cpuUseHeights(0, 0, 1e9, 24) == std::pair<int, int>{0, 0});
}

TEST_CASE("counter values read in % of one CPU, GB/s and /s and a thread's CPU time is capped at one CPU",
          "[gui][counters]") {
    auto clock = counter(1, "task_clock", "ns", true);
    CHECK(counterRateCap(clock) == 1e9);
    CHECK(formatCounterValue(clock, 0.85e9) == QStringLiteral("85 % CPU"));
    CHECK(formatCounterValue(counter(2, "cpu_utilization", "ratio", true), 0.5) == QStringLiteral("50 % CPU"));
    CHECK(formatCounterValue(counter(3, "read_bytes", "count", true), 2.5e9) == QStringLiteral("2.5 GB/s"));
    CHECK(formatCounterValue(counter(4, "context_switches", "count", true), 3400) == QStringLiteral("3.4 k/s"));
    CHECK(counterRateCap(counter(5, "PAPI_TOT_INS", "count", true)) == 0);
    CHECK(counterUnitLabel(clock) == QStringLiteral("% CPU"));
}

TEST_CASE("one severity colour mapping: info is not painted as a warning", "[gui][severity]") {
    QColor info = severityColor(analyzer::Severity::Info), warn = severityColor(analyzer::Severity::Warning),
           crit = severityColor(analyzer::Severity::Critical);
    CHECK(info != warn);
    CHECK(warn != crit);
    CHECK(info != crit);
    CHECK(info.red() < 0x80); // not red nor amber
    CHECK(warningSeverity({"counters_unavailable", 1, "info: requested counters not counted"}) ==
          analyzer::Severity::Info);
    CHECK(warningSeverity({"events_dropped", 3, "data_loss: events dropped"}) == analyzer::Severity::Warning);
    CHECK(warningSeverity({"store_failed", 1, "error: could not store"}) == analyzer::Severity::Critical);
    CHECK(statSeverity(QStringLiteral("info")) == analyzer::Severity::Info);
}

TEST_CASE("the data-quality and findings lists paint each row in its severity's colour", "[gui][severity]") {
    auto a = std::make_shared<analyzer::Analysis>();
    a->warnings = {{"counters_unavailable", 12, "info: requested CPU counters that could not be counted"},
                   {"records_dropped", 5, "data_loss: records dropped"},
                   {"store_failed", 1, "error: could not store"}};
    a->findings.resize(2);
    a->findings[0].id = "small-io";
    a->findings[0].severity = analyzer::Severity::Info;
    a->findings[1].id = "load-imbalance";
    a->findings[1].severity = analyzer::Severity::Critical;
    WarningsModel warnings;
    warnings.setAnalysis(a);
    REQUIRE(warnings.rowCount() == 3);
    // An info note reads in the info colour, not as a warning (the list had no colours, the status
    // bar painted every note red).
    CHECK(warnings.data(warnings.index(0, 0), Qt::ForegroundRole).value<QColor>() == severityColor(analyzer::Severity::Info));
    CHECK(warnings.data(warnings.index(1, 0), Qt::ForegroundRole).value<QColor>() == severityColor(analyzer::Severity::Warning));
    CHECK(warnings.data(warnings.index(2, 2), Qt::ForegroundRole).value<QColor>() == severityColor(analyzer::Severity::Critical));
    FindingsModel findings;
    findings.setAnalysis(a);
    REQUIRE(findings.rowCount() == 2);
    CHECK(findings.data(findings.index(0, FindingsModel::SeverityColumn), Qt::ForegroundRole).value<QColor>() ==
          severityColor(analyzer::Severity::Info));
    CHECK(findings.data(findings.index(1, FindingsModel::SeverityColumn), Qt::ForegroundRole).value<QColor>() ==
          severityColor(analyzer::Severity::Critical));
}
