// SPDX-License-Identifier: MIT
#include "progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace hpcprof::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds firstDrawDelay() {
    const char* env = std::getenv("HPCPROF_PROGRESS_DELAY_MS");
    if (env && *env) {
        char* end = nullptr;
        long ms = std::strtol(env, &end, 10);
        if (end && *end == '\0' && ms >= 0)
            return std::chrono::milliseconds(ms);
    }
    return std::chrono::milliseconds(500);
}

// One write per redraw: stdio's buffering could split the line across other stderr output.
void writeStderr(std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
        if (n <= 0)
            return; // a closed terminal: nothing to show progress on
        text.remove_prefix(size_t(n));
    }
}

constexpr std::string_view kEraseLine = "\r\033[K";

} // namespace

bool Progress::enabled() {
    const char* env = std::getenv("HPCPROF_PROGRESS");
    if (env && std::string_view(env) == "0")
        return false;
    return isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string what) : m_what(std::move(what)) {
    if (!enabled()) return;
    // Delay 0: drawn before the step starts, however short it is (what the tests rely on).
    if (firstDrawDelay().count() == 0) draw(0.0);
    m_thread = std::thread([this] { tick(); });
}

Progress::~Progress() {
    finish();
}

void Progress::update(std::string step, int64_t done, int64_t total) {
    std::lock_guard lock(m_mutex);
    m_step = std::move(step);
    m_done = done;
    m_total = total;
}

void Progress::finish() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
    if (m_drawn)
        writeStderr(kEraseLine);
    m_drawn = false;
}

void Progress::tick() {
    const auto start = Clock::now();
    const auto firstDraw = start + firstDrawDelay();
    std::unique_lock lock(m_mutex);
    if (m_wake.wait_until(lock, firstDraw, [this] { return m_stop; }))
        return;
    // A few redraws a second: the elapsed time moves, a terminal is not flooded.
    do {
        draw(std::chrono::duration<double>(Clock::now() - start).count());
    } while (!m_wake.wait_for(lock, std::chrono::milliseconds(200), [this] { return m_stop; }));
}

void Progress::draw(double seconds) {
    std::string line = fmt::format("{}hpcprof: {}", kEraseLine, m_what);
    if (!m_step.empty()) {
        line += ": " + m_step;
        if (m_total > 0)
            line += fmt::format(" {}/{}", m_done, m_total);
    }
    line += fmt::format(" ... {:.1f} s", seconds);
    writeStderr(line);
    m_drawn = true;
}

} // namespace hpcprof::cli
