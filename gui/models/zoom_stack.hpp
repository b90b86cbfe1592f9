// SPDX-License-Identifier: MIT
// Navigation state of the timeline: the zoom history (back/forward, as in a browser) and the
// current search filter. One object owns both and tells everyone through signals (the idea of
// Hotspot's FilterAndZoomStack).
#pragma once

#include <QObject>
#include <QString>
#include <vector>

#include "models/time_axis.hpp"

namespace hpcprof::gui {

/// What the search bar asks for: name substring or regex, class mask, rank range.
struct Filter {
    QString text;
    bool regex = false;
    unsigned classMask = 0x7f; ///< bit per analyzer::EventClass (7 classes)
    int rankMin = 0, rankMax = -1; ///< rankMax < 0: no upper bound
    bool operator==(const Filter&) const = default;
    bool active() const { return !text.isEmpty() || classMask != 0x7f || rankMin > 0 || rankMax >= 0; }
};

class ZoomStack : public QObject {
    Q_OBJECT
public:
    /// Entries beyond this are dropped from the front.
    static constexpr size_t kMaxHistory = 100;

    explicit ZoomStack(QObject* parent = nullptr) : QObject(parent) {}

    /// Starts a new history at `w` (a freshly opened trace).
    void reset(TimeWindow w);
    /// Records `w` as a new history entry (rubber band, finding, search hit): forward is cleared.
    void push(TimeWindow w);
    /// Replaces the current entry (continuous wheel/key/drag navigation is one entry).
    void replace(TimeWindow w);
    bool canGoBack() const { return m_pos > 0; }
    bool canGoForward() const { return m_pos + 1 < m_entries.size(); }
    void back();
    void forward();
    TimeWindow current() const { return m_entries.empty() ? TimeWindow{} : m_entries[m_pos]; }
    size_t size() const { return m_entries.size(); }

    void setFilter(const Filter& f);
    const Filter& filter() const { return m_filter; }

signals:
    void zoomChanged(hpcprof::gui::TimeWindow window);
    void filterChanged(const hpcprof::gui::Filter& filter);

private:
    std::vector<TimeWindow> m_entries;
    size_t m_pos = 0;
    Filter m_filter;
};

} // namespace hpcprof::gui
