// SPDX-License-Identifier: MIT
#include "counter_plan.hpp"

#include <algorithm>
#include <cstring>

namespace hpcprof::agent::counters {

namespace raw = schema::raw;

namespace {

// Calls fn(name, len, fromGroup) for each comma-separated item, expanding "default" and
// "software" (their members come with fromGroup = true).
template <typename Fn> void forEachItem(const char* list, Fn&& fn, bool fromGroup = false) {
    const char* p = list;
    while (p && *p) {
        const char* comma = std::strchr(p, ',');
        size_t len = comma ? size_t(comma - p) : std::strlen(p);
        if (len == 7 && std::strncmp(p, "default", 7) == 0)
            forEachItem(kDefaultCounters, fn, true);
        else if (len == 8 && std::strncmp(p, "software", 8) == 0)
            forEachItem(kSoftwareCounters, fn, true);
        else if (len > 0 && !(len == 4 && std::strncmp(p, "none", 4) == 0))
            fn(p, len, fromGroup);
        p = comma ? comma + 1 : nullptr;
    }
}

bool alreadyPlanned(const CounterPlan& plan, const char* name) {
    for (int i = 0; i < plan.count; ++i)
        if (std::strcmp(plan.counters[i].name, name) == 0) return true;
    return false;
}

// Plans one name; true if some backend took it.
bool planOne(const char* name, Backend* const* backends, int n, const char* papiWhyNot,
             PlannedCounter& c, CounterPlan& plan) {
    size_t len = std::strlen(name);
    if (len >= sizeof(c.name)) len = sizeof(c.name) - 1;
    std::memcpy(c.name, name, len);
    c.name[len] = 0;
    bool refused = false;
    bool known = false;
    if (isPapiEventName(name)) {
        bool havePapi = false;
        for (int i = 0; i < n; ++i) havePapi |= backends[i] && backends[i]->source() == raw::CounterSource::Papi;
        if (!havePapi) {
            setReason(c.reason, papiWhyNot);
            return false;
        }
    }
    for (int i = 0; i < n; ++i) {
        Backend* b = backends[i];
        if (!b) continue;
        Offer o = b->offer(name);
        if (o.ok) {
            if (plan.slots >= kMaxCounters) {
                setReason(c.reason, "too many counters (at most 24 values)");
                return false;
            }
            c.slot = uint8_t(plan.slots++);
            c.source = b->source();
            c.unit = o.unit;
            if (o.processWide) c.flags |= raw::kCounterProcessWide;
            if (refused) c.flags |= raw::kCounterFallback;
            b->add(o, c.slot);
            return true;
        }
        if (o.reason[0]) {
            if (refused) appendReason(c.reason, "; ");
            appendReason(c.reason, b->name());
            appendReason(c.reason, ": ");
            appendReason(c.reason, o.reason);
            refused = true;
            known = true;
        }
    }
    if (!known) setReason(c.reason, "unknown counter name");
    return false;
}

// Removes the entries a group refused (refusedInGroup) for the names in "A|B" `item`.
void dropGroupRefusals(CounterPlan& plan, const char* item) {
    char names[256] = {};
    std::memcpy(names, item, std::min(std::strlen(item), sizeof(names) - 1));
    char* save = nullptr;
    for (char* name = strtok_r(names, "|", &save); name; name = strtok_r(nullptr, "|", &save)) {
        for (int i = 0; i < plan.count; ++i) {
            if (!plan.counters[i].refusedInGroup || std::strcmp(plan.counters[i].name, name) != 0) continue;
            for (int j = i + 1; j < plan.count; ++j) plan.counters[j - 1] = plan.counters[j];
            --plan.count;
            break;
        }
    }
}

} // namespace

bool isPapiEventName(const char* name) {
    return std::strncmp(name, "PAPI_", 5) == 0 || std::strstr(name, "::") != nullptr;
}

bool wantsPapi(const char* list, bool groupPapiRefused) {
    bool any = false;
    forEachItem(list, [&](const char* p, size_t len, bool fromGroup) {
        char item[128] = {};
        std::memcpy(item, p, len < sizeof(item) - 1 ? len : sizeof(item) - 1);
        any |= isPapiEventName(item) && !(fromGroup && groupPapiRefused);
    });
    return any;
}

void buildPlan(const char* list, Backend* const* backends, int n, const char* papiWhyNot,
               CounterPlan& plan, const char* groupPapiRefusal) {
    forEachItem(list, [&](const char* p, size_t len, bool fromGroup) {
        if (plan.count >= kMaxCounters) return;
        char item[256] = {};
        std::memcpy(item, p, len < sizeof(item) - 1 ? len : sizeof(item) - 1);
        if (fromGroup && groupPapiRefusal && isPapiEventName(item)) {
            // A group's hardware counter, on a host where it would cost every context switch:
            // kept as unavailable with the reason (its alternatives are PAPI events too).
            if (char* bar = std::strchr(item, '|')) *bar = 0;
            if (alreadyPlanned(plan, item)) return;
            PlannedCounter c;
            std::memcpy(c.name, item, std::min(std::strlen(item), sizeof(c.name) - 1));
            setReason(c.reason, groupPapiRefusal);
            c.refusedInGroup = true;
            plan.counters[plan.count++] = c;
            return;
        }
        if (!fromGroup) dropGroupRefusals(plan, item); // named by the user: counted after all
        // "A|B": the first alternative that can be counted; if none, A with every reason.
        PlannedCounter first;
        bool haveFirst = false;
        char* alt = item;
        while (alt && *alt) {
            char* bar = std::strchr(alt, '|');
            if (bar) *bar = 0;
            if (!alreadyPlanned(plan, alt)) {
                PlannedCounter c;
                if (planOne(alt, backends, n, papiWhyNot, c, plan)) {
                    plan.counters[plan.count++] = c;
                    return;
                }
                if (!haveFirst) {
                    first = c;
                    haveFirst = true;
                } else if (std::strcmp(first.reason, c.reason) != 0) {
                    // Alternatives usually fail for the same reason (no PMU): say it once.
                    appendReason(first.reason, "; ");
                    appendReason(first.reason, c.name);
                    appendReason(first.reason, ": ");
                    appendReason(first.reason, c.reason);
                }
            } else {
                return;
            }
            alt = bar ? bar + 1 : nullptr;
        }
        if (haveFirst) plan.counters[plan.count++] = first;
    });
}

} // namespace hpcprof::agent::counters
