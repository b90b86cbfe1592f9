// SPDX-License-Identifier: MIT
#include "hpcprof/store/io_totals.hpp"

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/object_kind.hpp"

namespace hpcprof::store {

IoTotals::IoTotals() {
    for (const auto& c : schema::kCategories) {
        auto id = size_t(c.category);
        if (id >= m_isIo.size()) m_isIo.resize(id + 1, false);
        m_isIo[id] = c.className == "io";
    }
}

void IoTotals::addTrack(int64_t trackId, int64_t processId) {
    if (trackId < 0) return;
    if (size_t(trackId) >= m_trackProcess.size()) m_trackProcess.resize(size_t(trackId) + 1, 0);
    m_trackProcess[size_t(trackId)] = processId;
}

std::vector<schema::IoGroup>
IoTotals::groups(const std::function<std::string_view(int64_t)>& text,
                 const std::function<int64_t(int64_t)>& objectName) const {
    std::vector<schema::IoGroup> out;
    out.reserve(m_totals.size());
    for (const auto& [key, sums] : m_totals) {
        schema::IoGroup g;
        g.processId = key.process;
        g.function = std::string(text(key.name));
        if (int64_t nameId = key.object ? objectName(key.object) : 0) {
            g.path = std::string(text(nameId));
            g.kind = std::string(schema::objectKindOf(g.path));
        }
        g.calls = sums.calls;
        g.durNs = sums.dur;
        g.bytes = sums.bytes;
        g.outerNs = sums.outer;
        out.push_back(std::move(g));
    }
    return out;
}

} // namespace hpcprof::store
