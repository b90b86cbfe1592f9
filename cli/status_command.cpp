// SPDX-License-Identifier: MIT
#include "status_command.hpp"

#include <time.h>
#include <unistd.h>

#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/store/live_status.hpp"
#include "messages.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

int64_t realtimeNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// How a call names its partner: a wait waits "for" the peer of the request it waits on.
std::string_view peerWord(const store::LiveCall& c) {
    if (c.requests) return "for";
    const std::string_view word = schema::inFlightPartnerWord(c.name);
    return word == "from" && c.instance ? "root" : word;
}

/// A thread that polls (kInFlightPolling): what it polls, with no success since `since`.
std::string pollingText(const store::LiveCall& c) {
    if (c.name.rfind("ibv_", 0) == 0) return "polling a CQ (" + c.name + "), no completion";
    if (c.name.rfind("nccl", 0) == 0)
        return "polling " + c.name + (c.communicator.empty() ? "" : " on " + c.communicator) +
               ", in progress";
    return "polling " + c.name + ", not ready"; // cudaStreamQuery, cudaEventQuery, cu*Query
}

std::string callText(const store::LiveCall& c) {
    if (c.polling) return pollingText(c);
    std::string s = c.name;
    if (c.requests && *c.requests > 1) s += fmt::format(" ({} requests)", *c.requests);
    if (c.instance) s += fmt::format(" #{}", *c.instance);
    if (c.peer) s += fmt::format(" {} {}", peerWord(c), *c.peer);
    if (c.tag) s += fmt::format(" tag {}", *c.tag);
    if (!c.communicator.empty()) s += " on " + c.communicator;
    if (!c.object.empty()) s += " of " + c.object;
    if (c.requestedBytes && (*c.requestedBytes > 0 || !c.object.empty()))
        s += fmt::format(" ({} B)", *c.requestedBytes);
    return s;
}

std::string who(const store::LiveProcess& p) {
    return p.rank ? fmt::format("rank {}", *p.rank) : fmt::format("pid {}", p.pid);
}

nlohmann::json callJson(const store::LiveCall& c, int64_t now) {
    auto opt = [](const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"tid", c.tid}, {"call", c.name},
            {"communicator", c.communicator.empty() ? nlohmann::json(nullptr) : nlohmann::json(report::printable(c.communicator))},
            {"instance", opt(c.instance)}, {"peer", opt(c.peer)}, {"tag", opt(c.tag)},
            {"object", c.object.empty() ? nlohmann::json(nullptr) : nlohmann::json(report::printable(c.object))},
            {"requested_bytes", opt(c.requestedBytes)}, {"requests", opt(c.requests)},
            {"polling", c.polling}, {"since_s", double(now - c.sinceRealtimeNs) * 1e-9}};
}

std::string renderJson(const std::vector<store::LiveProcess>& procs, const StatusOptions& o, int64_t now) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : procs) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& c : p.calls) calls.push_back(callJson(c, now));
        const double idle = double(now - p.lastProgressRealtimeNs) * 1e-9;
        out.push_back({{"rank", p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr)},
                       {"pid", p.pid}, {"host", p.host}, {"ended", p.ended}, {"calls", std::move(calls)},
                       {"last_call", p.lastCall}, {"events", p.events}, {"dropped", p.dropped},
                       {"no_progress_s", idle}, {"stuck", !p.ended && idle > o.stuckS}});
    }
    report::makePrintable(out); // any other text too (dump() throws on bytes that are not UTF-8)
    return out.dump(2) + "\n";
}

/// One process's line: what it is in now, since when (or since its last call, computing).
std::string processLine(const store::LiveProcess& p, const StatusOptions& o, int64_t now, bool tty) {
    const double idle = double(now - p.lastProgressRealtimeNs) * 1e-9;
    const bool stuck = !p.ended && idle > o.stuckS;
    std::string nowIn = p.ended ? "(ended)" : p.calls.empty() ? "computing" : callText(p.calls.front());
    const int64_t from = p.calls.empty() ? p.lastCallEndRealtimeNs : p.calls.front().sinceRealtimeNs;
    std::string since = p.ended || from == 0 ? "" : fmt::format("{:.1f}s", double(now - from) * 1e-9);
    std::string line = fmt::format("{:<9} {:>8} {:<48} {:>9} {:<16} {:>9} {:>6}{}", who(p), p.pid,
                                   report::printable(nowIn), since, report::printable(p.lastCall), p.events, p.dropped,
                                   stuck ? fmt::format("  STUCK {:.0f}s", idle) : "");
    return (stuck && tty ? "\033[1;31m" + line + "\033[0m" : line) + "\n";
}

std::string render(const std::vector<store::LiveProcess>& procs, const StatusOptions& o, bool tty) {
    const int64_t now = realtimeNs();
    if (o.json) return renderJson(procs, o, now);
    std::string s = fmt::format("{:<9} {:>8} {:<48} {:>9} {:<16} {:>9} {:>6}\n", "RANK", "PID", "NOW IN",
                                "SINCE", "LAST CALL", "EVENTS", "DROPS");
    for (const auto& p : procs) s += processLine(p, o, now, tty);
    return s;
}

} // namespace

CLI::App* addStatusCommand(CLI::App& app, StatusOptions& o) {
    auto* cmd = app.add_subcommand("status", "Where every rank of a running capture is now (read-only)");
    cmd->add_option("path", o.path,
                    "The raw folder of the run (TRACE.raw), or TRACE (its raw folder while it "
                    "exists; else where each rank was when the job was last seen)")
        ->required();
    cmd->add_flag("--json", o.json, "One JSON object per process");
    cmd->add_flag("--watch", o.watch, "Refresh like top until interrupted");
    cmd->add_option("--interval", o.intervalS, "Seconds between --watch refreshes")->capture_default_str();
    cmd->add_option("--stuck", o.stuckS, "Highlight ranks without progress for longer (seconds)")
        ->capture_default_str();
    return cmd;
}

/// A finished trace (its raw folder gone): where each rank was when the job was last seen, i.e.
/// the report's hang section (text) or its `hang` object (--json).
int traceStatus(const StatusOptions& o) {
    auto trace = analyzer::Trace::open(o.path);
    auto analysis = trace ? analyzer::analyzeTrace(*trace) : Result<analyzer::Analysis>(trace.status());
    if (!analysis) {
        printMessage("status", analysis.status().message());
        return 2;
    }
    if (o.json) {
        nlohmann::json doc = report::reportJson(*analysis);
        report::makePrintable(doc);
        fmt::print("{}\n", doc.contains("hang") ? doc["hang"].dump(2) : "null");
        return 0;
    }
    std::string text = report::sectionText(*analysis, "hang");
    fmt::print("{}", text.empty() ? "every rank's calls had returned when the job was last seen\n" : text);
    return 0;
}

int statusCommand(const StatusOptions& o) {
    fs::path dir = o.path;
    if (fs::is_regular_file(dir) && !fs::is_directory(o.path + ".raw")) return traceStatus(o);
    if (fs::is_regular_file(dir)) dir = o.path + ".raw";
    const bool tty = isatty(STDOUT_FILENO) != 0;
    while (true) {
        auto procs = store::readLiveStatus(dir);
        if (!procs) {
            printMessage("status", procs.status().message());
            return 2;
        }
        if (o.watch && tty) fmt::print("\033[H\033[2J");
        fmt::print("{}", render(*procs, o, tty));
        std::fflush(stdout);
        if (!o.watch) return 0;
        usleep(useconds_t(std::max(0.1, o.intervalS) * 1e6));
    }
}

} // namespace hpcprof::cli
