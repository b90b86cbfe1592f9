// SPDX-License-Identifier: MIT
#include "activity_buffers.hpp"

#include <cstdlib>

namespace hpcprof::agent::cupti {

void ActivityBuffers::requested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *maxNumRecords = 0; // fill the buffer completely
    *buffer = nullptr;
    *size = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_free.empty()) {
            *buffer = m_free.back();
            m_free.pop_back();
        } else if (m_allocated < kMaxBuffers) {
            ++m_allocated;
        } else {
            return; // pool exhausted: CUPTI drops records and counts them for us
        }
    }
    if (!*buffer) *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    if (*buffer) *size = kBufferBytes;
}

void ActivityBuffers::completed(uint8_t* buffer, size_t validSize) {
    if (!buffer) return;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_full.emplace_back(buffer, validSize);
    }
    m_ready.notify_one();
}

void ActivityBuffers::parse(uint8_t* buffer, size_t validSize) {
    std::lock_guard<std::mutex> parseLock(m_parseMutex);
    CUpti_Activity* record = nullptr;
    while (validSize > 0 &&
           m_api.getNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS)
        m_translator.translate(record);
    // Always, not only when verbose: the count resets on each call.
    size_t dropped = 0;
    if (m_api.getNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
        m_translator.dropped(dropped);
}

void ActivityBuffers::drainLoop() {
    for (;;) {
        std::pair<uint8_t*, size_t> item;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_ready.wait(lock, [&] { return m_stop || !m_full.empty(); });
            if (m_full.empty()) return; // stopping and nothing left
            item = m_full.front();
            m_full.pop_front();
        }
        parse(item.first, item.second); // outside m_mutex: CUPTI may be completing another
        std::lock_guard<std::mutex> lock(m_mutex);
        m_free.push_back(item.first);
    }
}

void ActivityBuffers::startDrainThread() {
    m_drain = std::thread([this] {
        pthread_setname_np(pthread_self(), "hpcprof-cupti");
        drainLoop();
    });
}

void ActivityBuffers::finish() {
    // Not under m_mutex: the flush calls completed() synchronously.
    m_api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_ready.notify_all();
    if (m_drain.joinable()) m_drain.join();
    std::deque<std::pair<uint8_t*, size_t>> rest;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        rest.swap(m_full);
    }
    for (auto& [buffer, size] : rest) parse(buffer, size);
}

} // namespace hpcprof::agent::cupti
