// SPDX-License-Identifier: MIT
// CUPTI activity buffers, Kineto's protocol: a capped pool of fixed-size buffers; CUPTI's
// request/complete callbacks only move buffers between "free" and "ready" under m_mutex; a drain
// thread parses ready buffers outside that lock. No CUPTI function is ever called while m_mutex is
// held: cuptiActivityFlushAll calls our completion callback synchronously, which takes m_mutex,
// so a flush issued under the lock would deadlock.
//
//   CUPTI worker ──requested()──> free list ──(CUPTI fills)──> completed() ──> ready queue
//                                     ^                                          │
//                                     └──────── drain thread: parse, give back <─┘
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "activity_translator.hpp"
#include "cupti_api.hpp"

namespace hpcprof::agent::cupti {

class ActivityBuffers {
public:
    static constexpr size_t kBufferBytes = size_t(4) << 20;
    static constexpr size_t kMaxBuffers = 32; ///< 128 MiB; beyond it CUPTI drops (and counts)

    ActivityBuffers(const CuptiApi& api, ActivityTranslator& translator)
        : m_api(api), m_translator(translator) {}

    /// CUPTI callbacks (via trampolines). Thread-safe.
    void requested(uint8_t** buffer, size_t* size, size_t* maxNumRecords);
    void completed(uint8_t* buffer, size_t validSize);

    void startDrainThread();
    /// Flushes CUPTI (forced), stops the drain thread and parses what is left on this thread.
    void finish();

private:
    void drainLoop();
    void parse(uint8_t* buffer, size_t validSize);

    const CuptiApi& m_api;
    ActivityTranslator& m_translator;
    std::mutex m_mutex; // guards the lists below only
    std::condition_variable m_ready;
    std::vector<uint8_t*> m_free;
    std::deque<std::pair<uint8_t*, size_t>> m_full;
    size_t m_allocated = 0;
    bool m_stop = false;
    std::mutex m_parseMutex; // one parser at a time (drain thread or finish())
    std::thread m_drain;
};

} // namespace hpcprof::agent::cupti
