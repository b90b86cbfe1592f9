// SPDX-License-Identifier: MIT
// The trace writer's running totals of I/O events (schema/io_group.hpp): one hash lookup per
// event of class "io" while it is written, instead of a query over the finished trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hpcprof/schema/io_group.hpp"

namespace hpcprof::store {

class IoTotals {
public:
    IoTotals();

    /// Tracks map to processes: an event names its track only.
    void addTrack(int64_t trackId, int64_t processId);

    /// Counts one event if its category is of class "io" (categories of other classes cost one
    /// table look-up).
    void add(int64_t trackId, int64_t categoryId, int64_t nameId, int64_t objectId, int64_t dur,
             int64_t bytes, bool outermost) {
        if (categoryId < 0 || size_t(categoryId) >= m_isIo.size() || !m_isIo[size_t(categoryId)])
            return;
        Key key{trackProcess(trackId), nameId, objectId};
        if (!(key == m_lastKey) || !m_last) {
            m_last = &m_totals[key];
            m_lastKey = key;
        }
        m_last->calls++;
        m_last->dur += dur;
        m_last->bytes += bytes;
        if (outermost) m_last->outer += dur;
    }

    /// The totals as rows; `text` gives a string id's text, `object` an object id's name
    /// string id (0: unknown).
    std::vector<schema::IoGroup> groups(const std::function<std::string_view(int64_t)>& text,
                                        const std::function<int64_t(int64_t)>& objectName) const;

private:
    struct Key {
        int64_t process = 0, name = 0, object = 0;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const {
            return std::hash<int64_t>()(k.process * 1000003 ^ k.name * 7919 ^ k.object);
        }
    };
    struct Sums {
        int64_t calls = 0, dur = 0, bytes = 0, outer = 0;
    };
    int64_t trackProcess(int64_t trackId) const {
        return trackId >= 0 && size_t(trackId) < m_trackProcess.size() ? m_trackProcess[size_t(trackId)] : 0;
    }

    std::vector<bool> m_isIo;             ///< by category id
    std::vector<int64_t> m_trackProcess;  ///< by track id
    std::unordered_map<Key, Sums, KeyHash> m_totals;
    Key m_lastKey;
    Sums* m_last = nullptr; ///< the last key's sums (pointers into the map stay valid)
};

} // namespace hpcprof::store
