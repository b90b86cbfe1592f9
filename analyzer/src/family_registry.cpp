// SPDX-License-Identifier: MIT
// The analysis's registry of data families: the list is generated from the families' folders
// (families/CMakeLists.txt writes hpcprof/analysis_families.inc), so adding a family changes
// nothing here.
#include "family_analysis.hpp"

namespace hpcprof::analyzer {

#define HPCPROF_FAMILY(Name) std::unique_ptr<AnalysisFamily> make##Name##Analysis();
#include "hpcprof/analysis_families.inc"
#undef HPCPROF_FAMILY

const std::vector<std::unique_ptr<AnalysisFamily>>& analysisFamilies() {
    static const std::vector<std::unique_ptr<AnalysisFamily>> kFamilies = [] {
        std::vector<std::unique_ptr<AnalysisFamily>> all;
#define HPCPROF_FAMILY(Name) all.push_back(make##Name##Analysis());
#include "hpcprof/analysis_families.inc"
#undef HPCPROF_FAMILY
        return all;
    }();
    return kFamilies;
}

std::vector<schema::Category> categoriesOfClass(std::string_view cls) {
    std::vector<schema::Category> out;
    for (const auto& c : schema::kCategories)
        if (c.className == cls) out.push_back(c.category);
    return out;
}

const IntervalSet* AnalysisContext::windowOf(int64_t rank) const {
    auto it = std::lower_bound(windows.begin(), windows.end(), rank,
                               [](const auto& w, int64_t r) { return w.first < r; });
    return it != windows.end() && it->first == rank ? &it->second : nullptr;
}

} // namespace hpcprof::analyzer
