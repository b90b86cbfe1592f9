// SPDX-License-Identifier: MIT
// The reports' side of the data-family seam (internal to the report writers; the families'
// report facets are compiled into them, families/<name>/<name>_report.cpp). A family with a
// result of its own writes its section in every format; the writers call every registered
// section at the same places and never name one:
//
//   json          its object in the JSON report (under its own key)
//   text          after the top lists of the text report
//   markdown      after the top lists of the markdown report
//   htmlTimeline  under the HTML report's timeline overview (per-rank strips)
//   html          after the HTML report's top lists
//
// A section writes nothing when the analysis holds no data of its family.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::report {

class ReportSection {
public:
    virtual ~ReportSection() = default;
    virtual std::string_view name() const = 0;
    virtual void json(const analyzer::Analysis& a, nlohmann::json& doc) const {
        (void)a;
        (void)doc;
    }
    virtual std::string text(const analyzer::Analysis& a) const {
        (void)a;
        return {};
    }
    virtual std::string markdown(const analyzer::Analysis& a) const {
        (void)a;
        return {};
    }
    virtual std::string htmlTimeline(const analyzer::Analysis& a) const {
        (void)a;
        return {};
    }
    virtual std::string html(const analyzer::Analysis& a) const {
        (void)a;
        return {};
    }
};

/// The registered families' sections (families/), in registration order.
const std::vector<std::unique_ptr<ReportSection>>& reportSections();

} // namespace hpcprof::report
