// SPDX-License-Identifier: MIT
// The string ids of the processes of a run. Each process numbers its strings itself; a forked
// child continues its parent's numbering, so an id it inherited (a descriptor's file name) is
// found among the parent's strings. Every text is interned into the trace once, and each
// object (the file or socket an I/O call names) is classified and interned once per process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "communication_fields.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

class ProcessStrings {
public:
    explicit ProcessStrings(TraceWriter& w) : m_w(w) {}

    /// Starts the process with header `h`: takes the strings of its threads (and counts those
    /// whose last piece is missing in `incomplete`). Its parent's strings, when converted earlier,
    /// answer ids it does not define.
    void beginProcess(const schema::raw::ProcessHeader& h, std::vector<ThreadRecords>& threads,
                      int64_t& incomplete);

    /// Text of a string id of the current process (or its parent); nullptr if unknown.
    const std::string* text(uint32_t id) const;
    /// text() as a StringLookup for the families.
    StringLookup lookup() const {
        return [this](uint32_t id) { return text(id); };
    }

    /// The trace object an I/O call's string id names, interned once per process, and its kind
    /// (schema::objectKindOf: file, socket, ...); nullopt when the id is unknown.
    std::optional<int64_t> object(uint32_t localId, std::string_view& kind);

private:
    struct KnownString {
        int64_t id; ///< in the trace's string table
        std::string text;
    };
    using StringMap = std::unordered_map<uint32_t, KnownString>;
    using ProcessKey = std::pair<int32_t, int64_t>; ///< pid, start monotonic ns
    struct ResolvedObject {
        int64_t objectId;
        std::string_view kind; ///< a literal from schema::objectKindOf
    };

    const KnownString* find(uint32_t id) const;

    TraceWriter& m_w;
    std::map<ProcessKey, StringMap> m_byProcess;
    const StringMap* m_own = nullptr;
    const StringMap* m_parent = nullptr;
    /// object()'s answers for the current process (its string ids are its own).
    std::unordered_map<uint32_t, ResolvedObject> m_objects;
    /// The last answer: runs of calls on one descriptor name one object (a hash look-up per
    /// event was 6 % of a 1 M pwrite conversion). Id 0 names no object.
    uint32_t m_lastId = 0;
    ResolvedObject m_last{};
    /// text()'s last answer: an MPI call's communicator is the one of the calls before it (the
    /// hash look-up per event was 4 % of a node's conversion). Id 0: none yet.
    mutable uint32_t m_lastTextId = 0;
    mutable const std::string* m_lastText = nullptr;
};

} // namespace hpcprof::store
