// SPDX-License-Identifier: MIT
// Human formatting of times and sizes for the GUI ("1.25 ms", "8 MiB").
#pragma once

#include <QString>
#include <cstdint>

namespace hpcprof::gui {

/// A duration in ns with a unit chosen for 3 significant digits: "850 ns", "1.25 ms", "3.40 s".
QString formatDuration(int64_t ns);
/// A time-ruler label at tick spacing `stepNs` (enough decimals to tell ticks apart).
QString formatTick(int64_t ns, int64_t stepNs);
/// Bytes with binary units: "512 B", "64 KiB", "8.0 MiB".
QString formatBytes(int64_t bytes);

} // namespace hpcprof::gui
