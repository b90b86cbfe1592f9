// SPDX-License-Identifier: MIT
// `hpcprof export TRACE --format chrome -o FILE.json[.gz] [--window START:END]`: writes a trace
// in the Chrome trace format that Perfetto's UI and chrome://tracing open.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct ExportCommandOptions {
    std::string trace;
    std::string format = "chrome";
    std::string output;
    std::string window; ///< "START:END", either side may be empty; units ns (default), us, ms, s
    bool force = false;
};

CLI::App* addExportCommand(CLI::App& app, ExportCommandOptions& options);

int exportCommand(const ExportCommandOptions& options);

} // namespace hpcprof::cli
