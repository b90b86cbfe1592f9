// SPDX-License-Identifier: MIT
// Store step for the counter section of the raw format (CounterDefRecord, CounterRecord): one
// counter_track per (thread, counter) with its samples as running totals, derived rate tracks
// (cpu_utilization, cpu_wait_fraction, ipc), and the trace-level account of which counters were
// counted, from which source, and why the others were not (metadata key `counters`, stat
// counters_unavailable, one warning per reason).
//
// The counters family's converter (families/counters/counters_store.cpp) drives it: prepare()
// before the merge loop, write() once the loop made the thread rows, and once at the end of the
// run summary.finish(writer, warnings).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "hpcprof/store/trace_writer.hpp"
#include "raw_reader.hpp"

namespace hpcprof::store {

/// What every process said about its counters, gathered over the whole run.
class CounterSummary {
public:
    void noteHost(const std::string& host, int32_t onlineCpus, int32_t affinityCpus);
    void noteCounter(const std::string& name, const std::string& source, const std::string& note,
                     bool available);
    void notePeriod(uint64_t periodNs) { m_periodNs = periodNs; }
    /// Writes metadata `counters` (JSON) and adds one warning per distinct reason.
    Status finish(TraceWriter& w, std::vector<std::string>& warnings) const;
    bool empty() const { return m_counters.empty(); }

private:
    struct CounterInfo {
        std::string source, note;
        bool available = false;
        int64_t processes = 0;
        /// Unavailable: processes per reason (processes of one run can differ: an
        /// oversubscribed host leaves hardware counters out of the default list, mpirun
        /// itself is not a rank).
        std::map<std::string, int64_t> reasons;
    };
    std::map<std::string, CounterInfo> m_counters;
    std::map<std::string, std::pair<int32_t, int32_t>> m_hosts;
    uint64_t m_periodNs = 0;
};

class CounterRecords {
public:
    using StringLookup = std::function<const std::string*(uint32_t)>;
    using AddStat = std::function<void(schema::Stat, int64_t)>;
    /// Raw ticks -> trace ns (the same mapping the process's events use).
    using ToTrace = std::function<int64_t(uint64_t)>;

    CounterRecords(TraceWriter& w, ToTrace toTrace, StringLookup strings, AddStat addStat,
                   CounterSummary& summary, std::string host)
        : m_w(w), m_toTrace(std::move(toTrace)), m_strings(std::move(strings)),
          m_addStat(std::move(addStat)), m_summary(summary), m_host(std::move(host)) {}

    /// Reads section `slot` of each thread (family.hpp).
    void bindSection(int slot) { m_slot = slot; }
    /// Takes the counter records out of every thread; drops the sampler's own thread when it
    /// carried nothing else.
    void prepare(std::vector<ThreadRecords>& threads);
    /// Writes the counter tracks of process `processId` (after its thread rows exist).
    Status write(int64_t processId);

    /// Name of the derived tracks, for documentation and tests.
    static constexpr const char* kUtilization = "cpu_utilization";
    static constexpr const char* kWaitFraction = "cpu_wait_fraction";
    static constexpr const char* kIpc = "ipc";

private:
    struct Def {
        std::string name;
        schema::raw::CounterUnit unit;
    };
    using Series = std::vector<std::pair<int64_t, double>>; ///< (ts, value), by ts

    int64_t threadRow(int64_t processId, int32_t tid);
    int64_t insertTrack(int64_t processId, int64_t threadId, const std::string& name,
                        const char* unit, const Series& s);
    void writeDerived(int64_t processId, int64_t threadId, const std::map<std::string, Series>& byName);

    TraceWriter& m_w;
    ToTrace m_toTrace;
    StringLookup m_strings;
    AddStat m_addStat;
    CounterSummary& m_summary;
    std::string m_host;
    std::vector<std::array<char, 64>> m_records;
    int m_slot = 0;
};

/// Text of a CounterSource ("papi", "perf_sw", ...).
const char* counterSourceName(schema::raw::CounterSource s);

} // namespace hpcprof::store
