// SPDX-License-Identifier: MIT
#include "view_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "messages.hpp"
#include <vector>

#include "agent_locator.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "run_command.hpp"

namespace hpcprof::cli {

CLI::App* addViewCommand(CLI::App& app, ViewCommandOptions& o) {
    auto* cmd = app.add_subcommand("view", "Open a trace in the timeline GUI (hpcprof-gui)");
    cmd->add_option("trace", o.trace, "Trace file to open")->required();
    auto* window = cmd->add_option("--window", o.window, "Show only START:END (units ns, us, ms, s), e.g. 1.5s:2s");
    auto* event = cmd->add_option("--event", o.event, "Zoom around event ID and select it (the report's example events)")
                      ->check(CLI::NonNegativeNumber);
    auto* finding = cmd->add_option("--finding", o.finding, "Open at finding ID of the report (its events and ranks)");
    window->excludes(event)->excludes(finding);
    event->excludes(finding);
    cmd->add_option("--screenshot", o.screenshot, "Render the window offscreen to this PNG and exit");
    return cmd;
}

namespace {

/// hpcprof-gui's command line: the options given to `hpcprof view`, then the trace.
std::vector<std::string> guiArguments(const std::string& gui, const ViewCommandOptions& o) {
    std::vector<std::string> args{gui};
    if (!o.window.empty()) args.insert(args.end(), {"--window", o.window});
    if (o.event >= 0) args.insert(args.end(), {"--event", std::to_string(o.event)});
    if (!o.finding.empty()) args.insert(args.end(), {"--finding", o.finding});
    if (!o.screenshot.empty()) args.insert(args.end(), {"--screenshot", o.screenshot});
    args.push_back(o.trace);
    return args;
}

} // namespace

int viewCommand(const ViewCommandOptions& o) {
    std::string gui;
    if (const char* env = std::getenv("HPCPROF_GUI"); env && *env) gui = env;
    if (gui.empty()) gui = locateSiblingExecutable("hpcprof-gui");
    if (gui.empty()) {
        fmt::print(stderr, "hpcprof view: hpcprof-gui is not installed next to hpcprof (this build has no "
                           "Qt 6: install qt6-base-dev and reconfigure, or set HPCPROF_GUI)\n");
        return 127;
    }
    if (!o.screenshot.empty()) {
        if (Status s = schema::checkOutputPath(o.screenshot, /*replace=*/true); !s.ok()) {
            printMessage("view", s.message());
            return kExitUsage;
        }
    }
    std::vector<std::string> args = guiArguments(gui, o);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_t pid = fork();
    if (pid < 0) {
        fmt::print(stderr, "hpcprof view: fork: {}\n", std::strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execv(gui.c_str(), argv.data());
        printMessage("view", "cannot start " + gui + ": " + std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

} // namespace hpcprof::cli
