// SPDX-License-Identifier: MIT
#include "process_strings.hpp"

#include "hpcprof/schema/object_kind.hpp"

namespace hpcprof::store {

void ProcessStrings::beginProcess(const schema::raw::ProcessHeader& h,
                                  std::vector<ThreadRecords>& threads, int64_t& incomplete) {
    m_objects.clear();
    m_lastId = 0;
    m_lastTextId = 0;
    StringMap& own = m_byProcess[ProcessKey{h.pid, h.start.monotonicNs}];
    for (auto& t : threads) {
        for (auto& s : t.strings) own[s.id] = {m_w.internString(s.text), std::move(s.text)};
        t.strings.clear();
        incomplete += t.incompleteStrings;
    }
    m_own = &own;
    m_parent = nullptr;
    if (h.parentStartValid)
        if (auto it = m_byProcess.find(ProcessKey{h.ppid, h.parentStartNs}); it != m_byProcess.end())
            m_parent = &it->second;
}

const ProcessStrings::KnownString* ProcessStrings::find(uint32_t id) const {
    if (m_own)
        if (auto it = m_own->find(id); it != m_own->end()) return &it->second;
    if (m_parent) // descriptors inherited through fork carry the parent's ids
        if (auto it = m_parent->find(id); it != m_parent->end()) return &it->second;
    return nullptr;
}

const std::string* ProcessStrings::text(uint32_t id) const {
    if (id != 0 && id == m_lastTextId) return m_lastText;
    const KnownString* s = find(id);
    if (!s) return nullptr; // not remembered: a later process may define it
    m_lastTextId = id;
    m_lastText = &s->text;
    return m_lastText;
}

std::optional<int64_t> ProcessStrings::object(uint32_t localId, std::string_view& kind) {
    // A process uses few objects for many events: classify and intern each id once.
    if (localId != m_lastId || localId == 0) {
        if (auto it = m_objects.find(localId); it != m_objects.end()) {
            m_last = it->second;
        } else {
            const KnownString* s = find(localId);
            if (!s) return std::nullopt;
            m_last = {m_w.internObject(s->id, s->text), schema::objectKindOf(s->text)};
            m_objects.emplace(localId, m_last);
        }
        m_lastId = localId;
    }
    kind = m_last.kind;
    return m_last.objectId;
}

} // namespace hpcprof::store
