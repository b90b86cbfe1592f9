// SPDX-License-Identifier: MIT
// The query planner's statistics (sqlite_stat1) of a finished trace. ANALYZE counts a table
// without an index by reading every page of it; the conversion and the shard merge already
// counted the rows of their big tables as they wrote them, so those tables get the row ANALYZE
// would have written, and only the others are analysed.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <sqlite3.h>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

/// ANALYZE of every table of `db` but those of `counted` (table -> its rows, counted by the
/// caller; each must have no index), which get ANALYZE's one row: their row count.
Status writeStatistics(sqlite3* db, const std::map<std::string, int64_t>& counted);

} // namespace hpcprof::store
