// SPDX-License-Identifier: MIT
#include "hpcprof/schema/event_categories.hpp"

#include <charconv>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::schema {

namespace {

std::optional<size_t> categoryId(std::string_view item) {
    for (const CategoryInfo& info : kCategories)
        if (info.name == item) return size_t(info.category);
    size_t id = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty() || id >= CategorySet().size())
        return std::nullopt;
    return id;
}

} // namespace

std::string eventCategoriesText(const CategorySet& categories) {
    std::string text;
    for (size_t id = 0; id < categories.size(); ++id) {
        if (!categories.test(id)) continue;
        if (!text.empty()) text += ',';
        const CategoryInfo* known = nullptr;
        for (const CategoryInfo& info : kCategories)
            if (size_t(info.category) == id) known = &info;
        text += known ? std::string(known->name) : std::to_string(id);
    }
    return text;
}

std::optional<CategorySet> parseEventCategories(std::string_view text) {
    CategorySet set;
    while (!text.empty()) {
        const size_t comma = text.find(',');
        const auto id = categoryId(text.substr(0, comma));
        if (!id) return std::nullopt;
        set.set(*id);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
        if (text.empty()) return std::nullopt; // a trailing comma: not what a writer writes
    }
    return set;
}

} // namespace hpcprof::schema
