// SPDX-License-Identifier: MIT
#include "models/zoom_stack.hpp"

namespace hpcprof::gui {

void ZoomStack::reset(TimeWindow w) {
    m_entries = {w};
    m_pos = 0;
    emit zoomChanged(w);
}

void ZoomStack::push(TimeWindow w) {
    if (!m_entries.empty() && m_entries[m_pos] == w) return;
    if (!m_entries.empty()) m_entries.resize(m_pos + 1);
    m_entries.push_back(w);
    if (m_entries.size() > kMaxHistory) m_entries.erase(m_entries.begin());
    m_pos = m_entries.size() - 1;
    emit zoomChanged(w);
}

void ZoomStack::replace(TimeWindow w) {
    if (m_entries.empty()) {
        reset(w);
        return;
    }
    if (m_entries[m_pos] == w) return;
    m_entries[m_pos] = w;
    emit zoomChanged(w);
}

void ZoomStack::back() {
    if (!canGoBack()) return;
    --m_pos;
    emit zoomChanged(m_entries[m_pos]);
}

void ZoomStack::forward() {
    if (!canGoForward()) return;
    ++m_pos;
    emit zoomChanged(m_entries[m_pos]);
}

void ZoomStack::setFilter(const Filter& f) {
    if (f == m_filter) return;
    m_filter = f;
    emit filterChanged(m_filter);
}

} // namespace hpcprof::gui
