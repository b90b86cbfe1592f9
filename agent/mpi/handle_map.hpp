// SPDX-License-Identifier: MIT
// A small fixed-size map from an MPI handle (window, file) to a 64-bit value: open addressing,
// lock-free reads, inserts and erases with one CAS each. Handles of these kinds are few and long
// lived, so a full table simply stops remembering (the events then lack that detail).
#pragma once

#include <cstdint>
#include <cstring>

namespace hpcprof::agent::mpi {

/// The bits of a handle, whatever its type in this MPI ABI (pointer or integer).
template <typename Handle> uint64_t handleBits(Handle h) {
    uint64_t bits = 0;
    std::memcpy(&bits, &h, sizeof(h) < sizeof(bits) ? sizeof(h) : sizeof(bits));
    return bits;
}

template <size_t kSlots> class HandleMap {
public:
    void put(uint64_t key, uint64_t value) {
        if (!key) return;
        for (size_t n = 0, i = start(key); n < kSlots; ++n, i = (i + 1) % kSlots) {
            uint64_t cur = __atomic_load_n(&m_keys[i], __ATOMIC_ACQUIRE);
            if (cur == key || (cur == 0 && __atomic_compare_exchange_n(&m_keys[i], &cur, key, false,
                                                                      __ATOMIC_ACQ_REL,
                                                                      __ATOMIC_ACQUIRE))) {
                __atomic_store_n(&m_values[i], value, __ATOMIC_RELEASE);
                return;
            }
        }
    }
    bool get(uint64_t key, uint64_t& value) const {
        for (size_t n = 0, i = start(key); n < kSlots; ++n, i = (i + 1) % kSlots) {
            uint64_t cur = __atomic_load_n(&m_keys[i], __ATOMIC_ACQUIRE);
            if (cur == 0) return false;
            if (cur == key) {
                value = __atomic_load_n(&m_values[i], __ATOMIC_ACQUIRE);
                return true;
            }
        }
        return false;
    }
    /// Erasing keeps the slot's key (a probe chain must not break) and clears the value.
    void erase(uint64_t key) {
        for (size_t n = 0, i = start(key); n < kSlots; ++n, i = (i + 1) % kSlots) {
            uint64_t cur = __atomic_load_n(&m_keys[i], __ATOMIC_ACQUIRE);
            if (cur == 0) return;
            if (cur == key) {
                __atomic_store_n(&m_values[i], uint64_t(0), __ATOMIC_RELEASE);
                return;
            }
        }
    }

private:
    static size_t start(uint64_t key) { return size_t((key * 0x9E3779B97F4A7C15ull) >> 40) % kSlots; }
    uint64_t m_keys[kSlots] = {};
    uint64_t m_values[kSlots] = {};
};

} // namespace hpcprof::agent::mpi
