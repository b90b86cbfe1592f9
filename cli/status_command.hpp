// SPDX-License-Identifier: MIT
// `hpcprof status RAWDIR`: where every rank of a running (or ended) capture is right now: the
// call it is inside, since when, its last completed call, events recorded, drops; --watch
// refreshes like top, --json for scripts. Read-only: the job is not disturbed.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct StatusOptions {
    std::string path;           ///< the raw folder (TRACE.raw), or a trace (then: its .raw)
    bool json = false;
    bool watch = false;
    double intervalS = 1.0;     ///< --watch refresh period
    double stuckS = 10.0;       ///< no progress for longer: highlighted
};

CLI::App* addStatusCommand(CLI::App& app, StatusOptions& o);
int statusCommand(const StatusOptions& o);

} // namespace hpcprof::cli
