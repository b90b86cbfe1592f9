// SPDX-License-Identifier: MIT
#include "counter_records.hpp"

#include <algorithm>
#include <cstring>

namespace hpcprof::store {

namespace raw = schema::raw;

namespace {

constexpr const char* kSamplerThreadName = "hpcprof-counter";
/// Derived rates are computed over at least this much time: boundary samples of short calls
/// are microseconds apart, and a rate over such a sliver is noise.
constexpr int64_t kMinRateIntervalNs = 1'000'000;

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out + "\"";
}

const char* unitName(raw::CounterUnit u) { return u == raw::CounterUnit::Ns ? "ns" : "count"; }

/// Rate of num over den per interval of at least kMinRateIntervalNs (den = elapsed ns when
/// denominator is null).
std::vector<std::pair<int64_t, double>> ratio(const std::vector<std::pair<int64_t, double>>& num,
                                              const std::vector<std::pair<int64_t, double>>* den,
                                              double clampAt = 0) {
    std::vector<std::pair<int64_t, double>> out;
    if (num.empty()) return out;
    std::map<int64_t, double> denAt;
    if (den)
        for (const auto& [ts, v] : *den) denAt[ts] = v;
    size_t base = 0;
    for (size_t i = 1; i < num.size(); ++i) {
        int64_t dt = num[i].first - num[base].first;
        if (dt < kMinRateIntervalNs) continue;
        double dn = num[i].second - num[base].second;
        double dd = double(dt);
        if (den) {
            auto a = denAt.find(num[base].first), b = denAt.find(num[i].first);
            if (a == denAt.end() || b == denAt.end()) continue; // not sampled together
            dd = b->second - a->second;
        }
        // Time fractions can exceed 1 over one interval: the kernel adds a thread's run-queue
        // wait when it next runs, not as it accrues. They are clamped; sums stay exact.
        if (dd > 0 && dn >= 0) out.push_back({num[i].first, clampAt > 0 ? std::min(clampAt, dn / dd) : dn / dd});
        base = i;
    }
    return out;
}

} // namespace

const char* counterSourceName(raw::CounterSource s) {
    switch (s) {
    case raw::CounterSource::Papi: return "papi";
    case raw::CounterSource::PerfSw: return "perf_sw";
    case raw::CounterSource::Rusage: return "rusage";
    case raw::CounterSource::Schedstat: return "schedstat";
    case raw::CounterSource::Test: return "test";
    case raw::CounterSource::None: break;
    }
    return "none";
}

void CounterSummary::noteHost(const std::string& host, int32_t onlineCpus, int32_t affinityCpus) {
    auto& h = m_hosts[host];
    h.first = std::max(h.first, onlineCpus);
    h.second = std::max(h.second, affinityCpus);
}

void CounterSummary::noteCounter(const std::string& name, const std::string& source,
                                 const std::string& note, bool available) {
    CounterInfo& c = m_counters[name];
    if (c.processes == 0 || (available && !c.available)) {
        c.source = source;
        c.note = note;
        c.available = available;
    }
    if (!available) c.reasons[note]++;
    c.processes++;
}

Status CounterSummary::finish(TraceWriter& w, std::vector<std::string>& warnings) const {
    if (m_counters.empty()) return {};
    std::string avail, unavail, hosts;
    std::map<std::string, std::vector<std::string>> byReason;
    for (const auto& [name, c] : m_counters) {
        std::string row = "{\"counter\":" + jsonString(name) + ",\"processes\":" +
                          std::to_string(c.processes);
        if (c.available) {
            row += ",\"source\":" + jsonString(c.source);
            if (!c.note.empty()) row += ",\"note\":" + jsonString(c.note);
            avail += (avail.empty() ? "" : ",") + row + "}";
        } else {
            // The reason most processes gave; every distinct one in "reasons" when they differ.
            auto most = std::max_element(c.reasons.begin(), c.reasons.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
            row += ",\"reason\":" + jsonString(most == c.reasons.end() ? c.note : most->first);
            if (c.reasons.size() > 1) {
                std::string list;
                for (const auto& [reason, n] : c.reasons)
                    list += (list.empty() ? "" : ",") + std::string("{\"reason\":") + jsonString(reason) +
                            ",\"processes\":" + std::to_string(n) + "}";
                row += ",\"reasons\":[" + list + "]";
            }
            unavail += (unavail.empty() ? "" : ",") + row + "}";
            for (const auto& [reason, n] : c.reasons) byReason[reason].push_back(name);
        }
    }
    for (const auto& [host, cpus] : m_hosts)
        hosts += (hosts.empty() ? "" : ",") + std::string("{\"host\":") + jsonString(host) +
                 ",\"online_cpus\":" + std::to_string(cpus.first) +
                 ",\"affinity_cpus\":" + std::to_string(cpus.second) + "}";
    std::string doc = "{\"period_ns\":" + std::to_string(m_periodNs) + ",\"available\":[" + avail +
                      "],\"unavailable\":[" + unavail + "],\"hosts\":[" + hosts + "]}";
    for (const auto& [reason, names] : byReason) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        warnings.push_back("counters not counted on this machine: " + list + " (" + reason + ")");
    }
    return w.setMetadata("counters", doc);
}

void CounterRecords::prepare(std::vector<ThreadRecords>& threads) {
    for (auto& t : threads) {
        auto& records = sectionRecords(t, m_slot);
        m_records.insert(m_records.end(), records.begin(), records.end());
        records.clear();
        records.shrink_to_fit();
    }
    // The sampler thread is hpcprof's own: its events are the tool's work (PAPI reading
    // /proc at start-up), not the program's, so the thread is not kept as a timeline (unless
    // another family's records are on it).
    std::erase_if(threads, [this](const ThreadRecords& t) {
        if (t.name != kSamplerThreadName) return false;
        for (size_t i = 0; i < t.sections.size(); ++i)
            if (int(i) != m_slot && !t.sections[i].records.empty()) return false;
        return true;
    });
}

int64_t CounterRecords::threadRow(int64_t processId, int32_t tid) {
    schema::Statement s(m_w.db(), "SELECT id FROM thread WHERE process_id = ? AND tid = ?");
    s.bind(1, processId);
    s.bind(2, int64_t(tid));
    if (s.step()) return s.int64(0);
    // A thread the sampler saw that never recorded an event of its own.
    return m_w.insertThread(processId, tid, "");
}

int64_t CounterRecords::insertTrack(int64_t processId, int64_t threadId, const std::string& name,
                                    const char* unit, const Series& series) {
    schema::Statement t(m_w.db(),
                        "INSERT INTO counter_track(process_id, thread_id, name, unit) VALUES(?,?,?,?)");
    t.bind(1, processId);
    t.bindOrNull(2, threadId, 0);
    t.bind(3, std::string_view(name));
    t.bind(4, std::string_view(unit));
    Status st = t.run();
    if (!st.ok()) return 0;
    int64_t id = sqlite3_last_insert_rowid(m_w.db());
    schema::Statement c(m_w.db(), "INSERT INTO counter(counter_track_id, ts, value) VALUES(?,?,?)");
    for (const auto& [ts, v] : series) {
        c.bind(1, id);
        c.bind(2, ts);
        c.bind(3, v);
        c.run();
        c.reset();
    }
    return id;
}

void CounterRecords::writeDerived(int64_t processId, int64_t threadId,
                                  const std::map<std::string, Series>& byName) {
    auto find = [&](const char* n) -> const Series* {
        auto it = byName.find(n);
        return it == byName.end() ? nullptr : &it->second;
    };
    if (const Series* tc = find("task_clock")) {
        Series u = ratio(*tc, nullptr, 1.0);
        if (!u.empty()) insertTrack(processId, threadId, kUtilization, "ratio", u);
    }
    if (const Series* w = find("cpu_wait")) {
        Series u = ratio(*w, nullptr, 1.0);
        if (!u.empty()) insertTrack(processId, threadId, kWaitFraction, "ratio", u);
    }
    const Series* ins = find("PAPI_TOT_INS");
    const Series* cyc = find("PAPI_TOT_CYC");
    if (ins && cyc) {
        Series u = ratio(*ins, cyc);
        if (!u.empty()) insertTrack(processId, threadId, kIpc, "ratio", u);
    }
}

Status CounterRecords::write(int64_t processId) {
    if (m_records.empty()) return {};
    std::map<uint8_t, Def> slots;
    int64_t unavailable = 0;
    for (const auto& rec : m_records) {
        if (recordKind(rec) != raw::RecordKind::CounterDef) continue;
        auto d = recordAs<raw::CounterDefRecord>(rec);
        const std::string* name = m_strings(d.nameId);
        const std::string* reason = d.reasonId ? m_strings(d.reasonId) : nullptr;
        if (!name) {
            m_addStat(schema::Stat::UnknownStringRefs, 1);
            continue;
        }
        m_summary.noteHost(m_host, d.onlineCpus, d.affinityCpus);
        m_summary.notePeriod(d.periodNs);
        bool available = d.slot != raw::kNoCounterSlot && d.source != raw::CounterSource::None;
        m_summary.noteCounter(*name, counterSourceName(d.source), reason ? *reason : "", available);
        if (available)
            slots[d.slot] = Def{*name, d.unit};
        else
            ++unavailable;
    }
    m_addStat(schema::Stat::CountersUnavailable, unavailable);

    // (tid, slot) -> samples; a later sample at the same instant wins.
    std::map<int32_t, std::map<uint8_t, std::map<int64_t, double>>> samples;
    for (const auto& rec : m_records) {
        if (recordKind(rec) != raw::RecordKind::Counter) continue;
        auto r = recordAs<raw::CounterRecord>(rec);
        int64_t ts = m_toTrace(r.ts);
        for (uint32_t i = 0; i < r.count && i < raw::kCounterValuesPerRecord; ++i) {
            if (r.values[i] == raw::kCounterMissing) continue;
            uint8_t slot = uint8_t(r.first + i);
            if (!slots.count(slot)) continue;
            samples[r.tid][slot][ts] = double(r.values[i]);
        }
    }
    m_records.clear();
    for (const auto& [tid, bySlot] : samples) {
        int64_t threadId = tid == 0 ? 0 : threadRow(processId, tid);
        std::map<std::string, Series> byName;
        for (const auto& [slot, points] : bySlot) {
            Series s(points.begin(), points.end());
            const Def& def = slots[slot];
            insertTrack(processId, threadId, def.name, unitName(def.unit), s);
            byName[def.name] = std::move(s);
        }
        if (tid != 0) writeDerived(processId, threadId, byName);
    }
    return m_w.error();
}

} // namespace hpcprof::store
