// SPDX-License-Identifier: MIT
// One real run's trace in its three forms (plain, packed column-wise, packed whole), for the
// tests that check every reader gives the same on each (pack_test.cpp, pack_gui_test.cpp).
#pragma once

#include <string>

#include "process_runner.hpp"

namespace hpcprof::test {

struct PackTwins {
    std::string plain, columns, whole; ///< DIR/{plain,columns,whole}/NAME.hpcprof
};

/// Runs a real program under `hpcprof run` into DIR/plain/NAME.hpcprof and packs it into
/// DIR/columns/NAME.hpcprof (the default, column-wise) and DIR/whole/NAME.hpcprof (--whole):
/// one file name in three folders, so that what shows only the name is the same. The program is
/// mpi_demo on 3 ranks (MPI collectives, a straggler, synchronous checkpoint writes) when it
/// was built and mpirun is on the PATH, else io_sample. Requires every step to succeed.
PackTwins makePackTwins(const TempDir& dir, const std::string& name);

} // namespace hpcprof::test
