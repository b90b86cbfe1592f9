// SPDX-License-Identifier: MIT
#include "trace_sink.hpp"

#include <map>

#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::bench::jobgen {

namespace {

class TraceSink final : public EventSink {
public:
    TraceSink(store::TraceWriter& w, const JobSpec& spec) : m_w(w), m_spec(spec) {
        m_world = w.internCommunicator("world", spec.ranks, "mpi");
    }

    void beginRank(int64_t rank, int64_t beginTs, int64_t endTs) override {
        store::ProcessRow p;
        p.id = rank + 1;
        p.rank = rank;
        p.worldSize = m_spec.ranks;
        p.rankSource = "MPI";
        p.host = "node" + std::to_string(rank / 64);
        p.pid = 10'000 + rank;
        p.command = p.exe = "jobgen_app";
        p.startTs = beginTs;
        p.endTs = endTs;
        p.endState = "exited";
        p.exitCode = 0;
        p.clockMethod = "monotonic";
        if (!m_w.insertProcess(p).ok()) m_failed = true;
        const int64_t thread = m_w.insertThread(p.id, p.pid, "main");
        m_track = m_w.insertTrack(p.id, thread, "cpu_thread", "main", std::nullopt, std::nullopt);
        m_file = m_w.internObject(m_w.internString(dataFile(rank)), dataFile(rank));
        m_first = m_last = m_count = 0;
    }

    void event(const JobEvent& e) override {
        const schema::OpInfo* op = schema::findOp(uint16_t(e.op));
        store::EventRow row;
        row.trackId = m_track;
        row.ts = e.ts;
        row.dur = e.end - e.ts;
        row.categoryId = int64_t(op->category);
        row.nameId = name(op);
        if (e.bytes >= 0) row.bytes = e.bytes;
        if (e.file) row.objectId = m_file;
        store::EventDetail d;
        if (e.peer >= 0) {
            row.peer = e.peer;
            row.communicatorId = m_world;
            d.tag = e.tag;
        }
        if (e.seq >= 0) {
            row.communicatorId = m_world;
            row.seq = e.seq;
        }
        const int64_t id = m_w.insertEvent(row, d);
        if (!m_first) m_first = id;
        m_last = id;
        ++m_count;
    }

    void endRank() override {
        if (!m_w.finishTrack(m_track, m_first, m_last, m_count).ok()) m_failed = true;
        m_events += m_count;
    }

    bool failed() const { return m_failed; }
    int64_t events() const { return m_events; }

private:
    int64_t name(const schema::OpInfo* op) {
        auto [it, fresh] = m_names.try_emplace(uint16_t(op->op), 0);
        if (fresh) it->second = m_w.internString(op->name);
        return it->second;
    }

    store::TraceWriter& m_w;
    const JobSpec& m_spec;
    int64_t m_world = 0, m_track = 0, m_file = 0;
    int64_t m_first = 0, m_last = 0, m_count = 0, m_events = 0;
    std::map<uint16_t, int64_t> m_names;
    bool m_failed = false;
};

} // namespace

Result<int64_t> writeTrace(const JobSpec& spec, const std::string& path) {
    auto created = store::TraceWriter::create(path);
    if (!created) return created.status();
    store::TraceWriter& w = created.value();
    TraceSink sink(w, spec);
    generate(spec, sink);
    store::StatCounts zero{};
    if (sink.failed()) return Status::error("jobgen: cannot write " + path + ": " + w.error().message());
    if (!w.writeStats(zero, {}).ok() || !w.error().ok() || !w.finish().ok())
        return Status::error("jobgen: cannot write " + path + ": " + w.error().message());
    return sink.events();
}

} // namespace hpcprof::bench::jobgen
