// SPDX-License-Identifier: MIT
#include "process_strings.hpp"

#include "hpcprof/schema/object_kind.hpp"

namespace hpcprof::store {

void ProcessStrings::beginProcess(const schema::raw::ProcessHeader& h,
                                  std::vector<ThreadRecords>& threads, int64_t& incomplete) {
    m_objects.clear();
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
    const KnownString* s = find(id);
    return s ? &s->text : nullptr;
}

std::optional<int64_t> ProcessStrings::object(uint32_t localId, std::string_view& kind) {
    // A process uses few objects for many events: classify and intern each id once.
    if (auto it = m_objects.find(localId); it != m_objects.end()) {
        kind = it->second.kind;
        return it->second.objectId;
    }
    const KnownString* s = find(localId);
    if (!s) return std::nullopt;
    kind = schema::objectKindOf(s->text);
    int64_t objectId = m_w.internObject(s->id, s->text);
    m_objects.emplace(localId, ResolvedObject{objectId, kind});
    return objectId;
}

} // namespace hpcprof::store
