// SPDX-License-Identifier: MIT
// Progress of a long step (converting a capture, importing, analysing) on one line of stderr,
// for a person watching a terminal. Never in a pipe, a file or a CI log: it is drawn only when
// stderr is a terminal (isatty), only once the step has taken HPCPROF_PROGRESS_DELAY_MS
// (default 500 ms, so quick commands print nothing), and erased when the step ends, so the
// messages and reports after it start on a clean line. HPCPROF_PROGRESS=0 turns it off.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace hpcprof::cli {

class Progress {
  public:
    /// Starts showing "hpcprof: WHAT ... 1.2 s" when enabled(); a no-op object otherwise.
    explicit Progress(std::string what);
    /// Erases the line (when it was drawn) before returning.
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    /// What is being done now, e.g. ("process", 3, 8) shows "process 3/8" (total 0: no count).
    /// Thread-safe; cheap enough to call per item.
    void update(std::string step, int64_t done = 0, int64_t total = 0);
    /// Erases the line now (before printing a result); later updates draw nothing.
    void finish();

    /// Whether progress is shown at all: stderr is a terminal and HPCPROF_PROGRESS is not 0.
    static bool enabled();

  private:
    void tick();
    void draw(double seconds);

    std::string m_what;
    std::string m_step;
    int64_t m_done = 0, m_total = 0;
    bool m_drawn = false;
    bool m_stop = false;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::thread m_thread;
};

} // namespace hpcprof::cli
