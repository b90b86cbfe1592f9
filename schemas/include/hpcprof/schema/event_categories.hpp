// SPDX-License-Identifier: MIT
// The metadata row `event_categories`: which categories a trace's events are of, written by every
// writer of events (the trace writer, the shard merge). A reader may skip a scan for categories
// the row says are absent (the report's step ranges: one full read of a big trace). The row may
// name categories no event is of (rows deleted since); it never leaves out one that is there, as
// far as hpcprof's own writers go. A reader that relies on it still checks what it reads.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

namespace hpcprof::schema {

inline constexpr std::string_view kEventCategoriesKey = "event_categories";

/// Category ids the row can hold (the trace's category ids are one byte).
using CategorySet = std::bitset<256>;

/// The row's text: the categories' names in id order, comma-separated ("" for no events); an id
/// this build does not know is written as its number.
std::string eventCategoriesText(const CategorySet& categories);

/// The set the row's text names; empty (unknown) for text this build cannot read whole: a name
/// it does not know, a number out of range, an empty item.
std::optional<CategorySet> parseEventCategories(std::string_view text);

} // namespace hpcprof::schema
