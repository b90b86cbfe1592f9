// SPDX-License-Identifier: MIT
#include "hpcprof/report/report_json.hpp"

#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report {

using namespace hpcprof::analyzer;
using nlohmann::json;

namespace {
double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0; }

json topJson(const std::vector<TopItem>& items) {
    json a = json::array();
    for (const auto& t : items) {
        json item = {{"name", t.name}, {"count", t.count}, {"total_ns", t.totalNs}, {"max_ns", t.maxNs},
                     {"bytes", t.bytes}};
        if (t.fileClass) item["class"] = fileClassName(*t.fileClass);
        a.push_back(std::move(item));
    }
    return a;
}

json fileClassesJson(const std::vector<FileClassIo>& byClass) {
    json a = json::array();
    for (const auto& c : byClass)
        a.push_back({{"class", fileClassName(c.fileClass)}, {"files", c.files}, {"calls", c.calls},
                     {"total_ns", c.ns}, {"bytes", c.bytes}});
    return a;
}

json classJson(int64_t exposed, int64_t overlapped, int64_t total, int64_t rankTime) {
    return {{"exposed_pct", pct(exposed, rankTime)}, {"exposed_ns", exposed},
            {"overlapped_pct", pct(overlapped, total)}, {"overlapped_ns", overlapped}, {"total_ns", total}};
}
json summaryJson(const Analysis& a) {
    const JobSummary& s = a.summary;
    int64_t crit = 0, warn = 0, info = 0, wait = 0;
    for (const auto& f : a.findings)
        (f.severity == Severity::Critical ? crit : f.severity == Severity::Warning ? warn : info)++;
    for (const auto& r : a.ranks) wait += r.waitNs;
    return {
        {"wall_ns", s.wallNs},
        {"ranks", s.rankCount},
        {"gpu_ranks", s.gpuRankCount},
        {"events", s.events},
        {"rank_time_ns", s.totalNs},
        {"compute_pct", s.pct(TimeClass::Compute)},
        {"compute_ns", s.exclusive[int(TimeClass::Compute)]},
        {"idle_pct", s.pct(TimeClass::Idle)},
        {"idle_ns", s.exclusive[int(TimeClass::Idle)]},
        {"comm", classJson(s.exclusive[int(TimeClass::Communication)], s.commOverlappedNs, s.commTotalNs, s.totalNs)},
        {"io", classJson(s.exclusive[int(TimeClass::Io)], s.ioOverlappedNs, s.ioTotalNs, s.totalNs)},
        {"memory", {{"pct", s.pct(TimeClass::Memory)}, {"ns", s.exclusive[int(TimeClass::Memory)]}}},
        {"sync", {{"pct", s.pct(TimeClass::Sync)}, {"ns", s.exclusive[int(TimeClass::Sync)]}}},
        {"setup", {{"pct", s.pct(TimeClass::Setup)}, {"ns", s.exclusive[int(TimeClass::Setup)]},
                   {"total_ns", s.setupTotalNs}}},
        {"wait_ns", wait},
        {"findings", {{"count", int64_t(a.findings.size())}, {"critical", crit}, {"warning", warn}, {"info", info}}},
        {"findings_gain_ns", a.findingsGainNs},
        {"program_kind", a.programKind},
        {"data_quality_warnings", int64_t(a.warnings.size())},
        {"unused_rows", {{"negative_duration", a.unusedRows.negativeDuration},
                         {"outside_run", a.unusedRows.outsideRun},
                         {"unknown_track", a.unusedRows.unknownTrack},
                         {"time_out_of_range", a.unusedRows.timeOutOfRange},
                         {"total", a.unusedRows.total()}}},
    };
}

json popJson(const PopMetrics& p) {
    return {{"region", p.region},
            {"load_balance", p.loadBalance},
            {"communication_efficiency", p.communicationEfficiency},
            {"serialisation_efficiency", p.serialisationEfficiency},
            {"transfer_efficiency", p.transferEfficiency},
            {"parallel_efficiency", p.parallelEfficiency},
            {"runtime_ns", p.runtimeNs},
            {"ideal_runtime_ns", p.idealRuntimeNs},
            {"avg_useful_ns", p.avgUsefulNs},
            {"max_useful_ns", p.maxUsefulNs}};
}

json rankJson(const RankBreakdown& r) {
    json j = {{"rank", r.rank}, {"pid", r.pid}, {"host", r.host}, {"gpu", r.gpu},
              {"window_ns", r.windowNs}, {"active_ns", r.activeNs}};
    for (int c = 0; c < kTimeClassCount; ++c)
        j[std::string(timeClassName(TimeClass(c))) + "_ns"] = r.exclusive[c];
    j["comm_total_ns"] = r.commTotalNs;
    j["comm_overlapped_ns"] = r.commOverlappedNs;
    j["io_total_ns"] = r.ioTotalNs;
    j["io_overlapped_ns"] = r.ioOverlappedNs;
    j["memory_total_ns"] = r.memoryTotalNs;
    j["sync_total_ns"] = r.syncTotalNs;
    j["setup_total_ns"] = r.setupTotalNs;
    json region = {{"begin_ns", r.regionBegin}, {"end_ns", r.regionEnd}, {"window_ns", r.regionNs}};
    for (int c = 0; c < kTimeClassCount; ++c)
        region[std::string(timeClassName(TimeClass(c))) + "_ns"] = r.regionExclusive[c];
    j["region"] = std::move(region);
    j["gpu_idle_ns"] = r.gpuIdleNs;
    j["wait_ns"] = r.waitNs;
    j["worker_wait_ns"] = r.workerWaitNs;
    j["transfer_ns"] = r.transferNs;
    j["events"] = r.events;
    if (r.recordingStoppedTs) {
        j["recording_stopped_ns"] = *r.recordingStoppedTs;
        j["stop_reason"] = r.stopReason;
    }
    return j;
}

/// Every process with its role; workers and others with their own breakdown.
json processesJson(const std::vector<ProcessEntry>& list) {
    json a = json::array();
    for (const auto& p : list) {
        json j = {{"pid", p.pid}, {"host", p.host}, {"role", processRoleName(p.role)}, {"command", p.command}};
        j["ppid"] = p.ppid ? json(*p.ppid) : json(nullptr);
        j["parent"] = p.parentPid ? json(*p.parentPid) : json(nullptr);
        j["unit"] = p.unit ? json(*p.unit) : json(nullptr);
        if (p.breakdown) j["breakdown"] = rankJson(*p.breakdown);
        if (p.role == ProcessRole::Worker)
            j["waited_for"] = {{"ns", p.waitedForNs}, {"calls", p.waitedForCalls}};
        a.push_back(std::move(j));
    }
    return a;
}

json waitStatesJson(const WaitStates& w) {
    return {{"collective_wait_ns", w.collectiveWaitNs}, {"late_sender_ns", w.lateSenderNs},
            {"late_receiver_ns", w.lateReceiverNs}, {"polling_ns", w.pollingNs},
            {"complete_instances", w.completeInstances},
            {"incomplete_instances", w.incompleteInstances},
            {"matched_messages", w.matchedMessages}, {"unmatched_messages", w.unmatchedMessages}};
}

json stragglersJson(const std::vector<Straggler>& stragglers) {
    json strag = json::array();
    for (const auto& st : stragglers)
        strag.push_back({{"rank", st.rank}, {"times_last", st.timesLast}, {"instances", st.instances},
                         {"inflicted_wait_ns", st.inflictedWaitNs},
                         {"inflicted_in_collectives_ns", st.inflictedInCollectivesNs},
                         {"max_instance_wait_ns", st.maxInflictedNs},
                         {"example_event_id", st.exampleEventId}});
    return strag;
}

json rankStepsJson(const std::vector<RankSteps>& ranks, bool stepItems) {
    json out = json::array();
    for (size_t k = 0; k < ranks.size(); ++k) {
        const RankSteps& r = ranks[k];
        json items = json::array();
        for (size_t i = 0; i < r.steps.size() && stepItems; ++i) items.push_back(detail::rankStepJson(r.steps[i]));
        if (!stepItems) items = detail::stepItemsPlaceholder(k);
        out.push_back({{"rank", r.rank}, {"count", r.count}, {"mean_ns", r.meanNs},
                       {"stddev_ns", r.stddevNs}, {"min_ns", r.minNs}, {"max_ns", r.maxNs},
                       {"items", std::move(items)}});
    }
    return out;
}

json stepsJson(const StepStats& s, bool stepItems) {
    json steps = json::array();
    for (const auto& st : s.steps)
        steps.push_back({{"index", st.index}, {"begin_ns", st.begin}, {"end_ns", st.end}, {"dur_ns", st.durNs},
                         {"spread_ns", st.spreadNs},
                         {"straggler_rank", st.stragglerRank >= 0 ? json(st.stragglerRank) : json(nullptr)},
                         {"straggler_wait_ns", st.stragglerWaitNs}});
    json out = {{"source", s.source}, {"basis", s.basis}, {"reason", s.reason}, {"tiling", s.tiling},
                {"count", int64_t(s.steps.size())},
                {"mean_ns", s.meanNs}, {"min_ns", s.minNs}, {"max_ns", s.maxNs},
                {"stddev_ns", s.stddevNs}, {"cv", s.cv}, {"items", std::move(steps)},
                {"ranks", rankStepsJson(s.ranks, stepItems)}};
    if (s.slowestPerRank > 0) // each rank lists only its slowest steps
        out["rank_items"] = {{"kept", "slowest"}, {"per_rank", s.slowestPerRank}, {"rank_steps", s.rankSteps},
                             {"limit", int64_t(s.rankStepLimit)}};
    return out;
}

json windowJson(const Analysis& a) {
    const WindowChoice& w = a.windowChoice;
    json out = {{"spec", a.window.text.empty() ? "whole" : a.window.text},
                {"begin_ns", a.summary.windowBegin}, {"end_ns", a.summary.windowEnd},
                {"basis", w.basis}, {"reason", w.reason},
                {"recorded_begin_ns", w.recordedBegin}, {"recorded_end_ns", w.recordedEnd}};
    if (w.basis == "steps") {
        out["first_step"] = w.firstStep;
        out["last_step"] = w.lastStep;
    }
    return out;
}

json findingsJson(const std::vector<Finding>& list) {
    json findings = json::array();
    for (const auto& f : list) {
        json ev = json::array();
        for (const auto& e : f.evidence) ev.push_back({{"name", e.key}, {"value", e.value}, {"unit", e.unit}});
        findings.push_back({{"id", f.id}, {"title", f.title}, {"severity", severityName(f.severity)},
                            {"ranks", f.ranks}, {"evidence", std::move(ev)}, {"event_ids", f.eventIds},
                            {"estimated_gain_ns", f.estimatedGainNs}, {"exclusive_gain_ns", f.exclusiveGainNs},
                            {"suggestion", f.suggestion}});
    }
    return findings;
}

json dataQualityJson(const std::vector<DataWarning>& warnings) {
    json dq = json::array();
    for (const auto& d : warnings) dq.push_back({{"name", d.name}, {"count", d.count}, {"message", d.message}});
    return dq;
}
} // namespace

json reportJson(const Analysis& a) { return detail::reportJson(a, true); }

json detail::rankStepJson(const RankStep& st) {
    json one = {{"index", st.index}, {"begin_ns", st.begin}, {"end_ns", st.end}, {"dur_ns", st.durNs()}};
    if (st.hasBreakdown) { // the exclusive classes inside the step, as in ranks[]
        for (int c = 0; c < kTimeClassCount; ++c) one[std::string(timeClassName(TimeClass(c))) + "_ns"] = st.exclusive[c];
        one["gpu_idle_ns"] = st.gpuIdleNs;
    }
    if (st.commStartFraction >= 0) one["comm_start_fraction"] = st.commStartFraction;
    return one;
}

std::string detail::stepItemsPlaceholder(size_t k) { return "@@hpcprof-step-items-" + std::to_string(k) + "@@"; }

json detail::reportJson(const Analysis& a, bool stepItems) {
    json doc;
    doc["schema"] = "hpcprof-report";
    doc["schema_version"] = kReportSchemaVersion;
    doc["trace"] = a.tracePath;
    doc["window"] = windowJson(a);
    doc["summary"] = summaryJson(a);
    doc["pop"] = popJson(a.pop);
    json ranks = json::array();
    for (const auto& r : a.ranks) ranks.push_back(rankJson(r));
    doc["ranks"] = std::move(ranks);
    doc["cross_rank"] = a.crossRank;
    doc["processes"] = processesJson(a.processes);
    doc["wait_states"] = waitStatesJson(a.waits);
    doc["stragglers"] = stragglersJson(a.waits.stragglers);
    doc["steps"] = stepsJson(a.steps, stepItems);
    doc["top"] = {{"kernels", topJson(a.topKernels)}, {"collectives", topJson(a.topCollectives)},
                  {"communication", topJson(a.topCommunication)},
                  {"files", topJson(a.topFiles)}, {"file_classes", fileClassesJson(a.ioByClass)}};
    doc["findings"] = findingsJson(a.findings);
    doc["data_quality"] = dataQualityJson(a.warnings);
    for (const auto& section : reportSections()) section->json(a, doc);
    doc["gates"] = json::array();
    return doc;
}

void addGates(json& doc, const std::vector<GateResult>& gates) {
    json g = json::array();
    for (const auto& r : gates)
        g.push_back({{"expr", r.gate.text}, {"metric", r.gate.metric}, {"op", gateOpText(r.gate.op)},
                     {"threshold", r.gate.threshold}, {"value", r.value}, {"failed", r.failed}});
    doc["gates"] = std::move(g);
}

json diffJson(const AnalysisDiff& d) {
    json doc;
    doc["schema"] = "hpcprof-diff";
    doc["schema_version"] = kReportSchemaVersion;
    doc["base"] = d.basePath;
    doc["new"] = d.newPath;
    const analyzer::DiffOptions& o = d.options;
    doc["summary"] = {{"regressions", d.regressions},
                      {"improvements", d.improvements},
                      {"wall_delta_pct", d.wallDeltaPct},
                      {"per_step", d.perStep},
                      {"steps", {{"base", d.baseSteps}, {"new", d.newSteps}}},
                      {"noise_floor",
                       {{"ns", d.noiseFloorNs},
                        {"min_change_ns", o.minChangeNs},
                        {"min_change_window_pct", o.minChangeWindowPct},
                        {"min_change_pct", o.minChangePct},
                        {"min_efficiency_change", o.minEfficiencyChange}}}};
    json rows = json::array();
    for (const auto& r : d.rows) {
        // A row from or to zero has no percentage: "change" says new or gone instead.
        rows.push_back({{"scope", r.scope}, {"name", r.name}, {"base", r.base}, {"new", r.next},
                        {"delta", r.delta},
                        {"delta_pct", r.deltaPct ? json(*r.deltaPct) : json(nullptr)},
                        {"change", detail::diffChangeText(r)},
                        {"verdict", *verdictName(r.verdict) ? verdictName(r.verdict) : "same"},
                        {"regression", r.regression()}});
    }
    doc["rows"] = std::move(rows);
    doc["gates"] = json::array();
    return doc;
}

} // namespace hpcprof::report
