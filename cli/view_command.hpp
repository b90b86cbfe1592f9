// SPDX-License-Identifier: MIT
// `hpcprof view TRACE [--window T0:T1] [--screenshot out.png]`: starts hpcprof-gui on the trace.
// The GUI is a separate process (found next to hpcprof, or through HPCPROF_GUI), so the CLI never
// links Qt and builds without it.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct ViewCommandOptions {
    std::string trace;
    std::string window;
    std::string screenshot;
};

CLI::App* addViewCommand(CLI::App& app, ViewCommandOptions& options);

/// Runs hpcprof-gui and returns its exit code (127 when it is not installed).
int viewCommand(const ViewCommandOptions& options);

} // namespace hpcprof::cli
