// SPDX-License-Identifier: MIT
// The store step's registry of data families: the list is generated from the families'
// folders (families/CMakeLists.txt writes hpcprof/store_families.inc), so adding a family
// changes nothing here.
#include <algorithm>

#include "family.hpp"

namespace hpcprof::store {

#define HPCPROF_FAMILY(Name) std::unique_ptr<StoreFamily> make##Name##Store();
#include "hpcprof/store_families.inc"
#undef HPCPROF_FAMILY

namespace {

using FamilyList = std::vector<std::unique_ptr<StoreFamily>>;

/// Registration order, moved only as far as prepareAfter() requires (stable).
Result<FamilyList> ordered(FamilyList all) {
    for (const auto& f : all)
        for (std::string_view dep : f->prepareAfter())
            if (std::none_of(all.begin(), all.end(), [&](const auto& g) { return g->name() == dep; }))
                return Status::error("store family " + std::string(f->name()) + " prepares after " +
                                     std::string(dep) + ", which is not registered");
    FamilyList out;
    while (!all.empty()) {
        auto ready = std::find_if(all.begin(), all.end(), [&](const auto& f) {
            auto deps = f->prepareAfter();
            return std::all_of(deps.begin(), deps.end(), [&](std::string_view dep) {
                return std::any_of(out.begin(), out.end(), [&](const auto& g) { return g->name() == dep; });
            });
        });
        if (ready == all.end())
            return Status::error("store families " + std::string(all.front()->name()) +
                                 " and others wait for each other (prepareAfter cycle)");
        out.push_back(std::move(*ready));
        all.erase(ready);
    }
    return out;
}

} // namespace

Result<std::vector<std::unique_ptr<StoreFamily>>> storeFamilies() {
    FamilyList all;
#define HPCPROF_FAMILY(Name) all.push_back(make##Name##Store());
#include "hpcprof/store_families.inc"
#undef HPCPROF_FAMILY
    return ordered(std::move(all));
}

RecordRouting recordRouting(const std::vector<std::unique_ptr<StoreFamily>>& families) {
    RecordRouting routing;
    routing.fill(-1);
    for (size_t slot = 0; slot < families.size(); ++slot)
        for (schema::raw::RecordKind kind : families[slot]->recordKinds())
            routing[uint8_t(kind)] = int8_t(slot);
    return routing;
}

const RecordRouting& registeredRecordRouting() {
    static const RecordRouting kRouting = [] {
        auto families = storeFamilies();
        if (!families) {
            RecordRouting none;
            none.fill(-1);
            return none;
        }
        return recordRouting(*families);
    }();
    return kRouting;
}

} // namespace hpcprof::store
