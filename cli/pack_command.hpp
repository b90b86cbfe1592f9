// SPDX-License-Identifier: MIT
// `hpcprof pack TRACE`: writes the packed form of a trace (docs/trace-schema.md "Packed
// traces"), which every hpcprof command and the GUI open like the plain one.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct PackOptions {
    std::string trace;
    std::string output; ///< default: TRACE.zst
    int level = 3;
    int threads = 0;
    bool force = false;
    bool whole = false;  ///< the whole-file form (one zstd frame of the SQLite file)
    bool unpack = false; ///< write the plain trace of a packed one instead
};

CLI::App* addPackCommand(CLI::App& app, PackOptions& o);
int packCommand(const PackOptions& o);

} // namespace hpcprof::cli
