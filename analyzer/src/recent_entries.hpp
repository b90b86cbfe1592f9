// SPDX-License-Identifier: MIT
// The entries of a map found last, kept beside it: a rank's events cycle through a few names,
// so most look-ups by name need no hashing (the per-name totals' hash look-ups were 2.6 % of a
// report's samples). The entries point into the owner's own map: a copy, a move or an
// assignment of the owner starts without them, and the owner must not erase from the map.
#pragma once

#include <array>
#include <cstddef>

namespace hpcprof::analyzer {

template <class Map, size_t N = 4>
class RecentEntries {
public:
    RecentEntries() = default;
    RecentEntries(const RecentEntries&) {}
    RecentEntries& operator=(const RecentEntries&) {
        m_entries = {};
        return *this;
    }

    /// map[key], through the entries found last.
    typename Map::mapped_type& find(const typename Map::key_type& key, Map& map) {
        for (size_t i = 0; i < N; ++i)
            if (m_entries[i] && m_keys[i] == key) return *m_entries[i];
        auto& entry = map[key];
        m_keys[m_next] = key;
        m_entries[m_next] = &entry;
        m_next = (m_next + 1) % N;
        return entry;
    }

private:
    std::array<typename Map::key_type, N> m_keys{};
    std::array<typename Map::mapped_type*, N> m_entries{};
    size_t m_next = 0;
};

} // namespace hpcprof::analyzer
