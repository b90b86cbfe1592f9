// SPDX-License-Identifier: MIT
// `hpcprof view TRACE [--window T0:T1 | --event ID | --finding ID] [--screenshot out.png]`:
// starts hpcprof-gui on the trace, opened at that evidence (the reports print these commands).
// The GUI is a separate process (found next to hpcprof, or through HPCPROF_GUI), so the CLI never
// links Qt and builds without it.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct ViewCommandOptions {
    std::string trace;
    std::string window;
    int64_t event = -1;  ///< an event id (-1: none): the GUI zooms around it and selects it
    std::string finding; ///< a finding id of the report: its events, ranks and details
    std::string screenshot;
};

CLI::App* addViewCommand(CLI::App& app, ViewCommandOptions& options);

/// Runs hpcprof-gui and returns its exit code (127 when it is not installed).
int viewCommand(const ViewCommandOptions& options);

} // namespace hpcprof::cli
