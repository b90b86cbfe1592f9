// SPDX-License-Identifier: MIT
// The reports' registry of family sections: the list is generated from the families' folders
// (families/CMakeLists.txt writes hpcprof/report_families.inc), so adding a family changes
// nothing here.
#include "report_section.hpp"

#include "hpcprof/report/writers.hpp"

namespace hpcprof::report {

#define HPCPROF_FAMILY(Name) std::unique_ptr<ReportSection> make##Name##Report();
#include "hpcprof/report_families.inc"
#undef HPCPROF_FAMILY

const std::vector<std::unique_ptr<ReportSection>>& reportSections() {
    static const std::vector<std::unique_ptr<ReportSection>> kSections = [] {
        std::vector<std::unique_ptr<ReportSection>> all;
#define HPCPROF_FAMILY(Name) all.push_back(make##Name##Report());
#include "hpcprof/report_families.inc"
#undef HPCPROF_FAMILY
        return all;
    }();
    return kSections;
}

std::string sectionText(const analyzer::Analysis& a, std::string_view name) {
    for (const auto& s : reportSections())
        if (s->name() == name) return s->text(a);
    return {};
}

} // namespace hpcprof::report
