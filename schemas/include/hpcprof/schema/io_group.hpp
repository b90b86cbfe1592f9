// SPDX-License-Identifier: MIT
// What the run summary needs of a trace's I/O: per process, I/O function and file, the calls,
// time and bytes of the trace's events of class "io". The trace writer sums these while it
// writes the events (store::IoTotals), so `hpcprof run` prints its summary without a second
// pass over the trace; the analyzer computes the same rows from a trace file (io_summary).
#pragma once

#include <cstdint>
#include <string>

namespace hpcprof::schema {

struct IoGroup {
    int64_t processId = 0;
    std::string function;        ///< the event's name (pwrite64, read, ...)
    std::string path = "(unknown)"; ///< the object's name; "(unknown)" for no object
    std::string kind = "unknown";   ///< the object's kind (file, pipe, ...)
    int64_t calls = 0;
    int64_t durNs = 0;   ///< all calls' time
    int64_t bytes = 0;   ///< bytes of all calls (a NULL counts 0)
    int64_t outerNs = 0; ///< time of the calls at nesting depth 0
};

} // namespace hpcprof::schema
