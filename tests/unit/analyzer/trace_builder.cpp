// SPDX-License-Identifier: MIT
#include "trace_builder.hpp"

#include <algorithm>
#include <stdexcept>

#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::test {

int TraceBuilder::rank(int64_t rank, int64_t start, int64_t end, int64_t worldSize) {
    Process p;
    p.id = int64_t(m_processes.size()) + 1;
    p.pid = 1000 + int64_t(m_processes.size());
    p.start = start;
    p.end = end;
    if (rank >= 0) p.rank = rank;
    if (worldSize > 0) p.worldSize = worldSize;
    p.rankSource = p.rank ? "test" : "";
    p.host = "node" + std::to_string(p.rank.value_or(99) / 4);
    m_processes.push_back(p);
    Track t;
    t.process = int(m_processes.size()) - 1;
    t.tid = p.pid;
    m_tracks.push_back(std::move(t));
    return int(m_tracks.size()) - 1;
}

int TraceBuilder::thread(int mainTrack, int64_t tid) {
    Track t;
    t.process = m_tracks.at(size_t(mainTrack)).process;
    t.tid = tid;
    m_tracks.push_back(std::move(t));
    return int(m_tracks.size()) - 1;
}

int TraceBuilder::gpuStream(int mainTrack, int64_t device, int64_t stream) {
    Track t;
    t.process = m_tracks.at(size_t(mainTrack)).process;
    t.gpu = true;
    t.device = device;
    t.stream = stream;
    m_tracks.push_back(std::move(t));
    return int(m_tracks.size()) - 1;
}

int TraceBuilder::nicQueue(int mainTrack, const std::string& device, int64_t qp) {
    Track t;
    t.process = m_tracks.at(size_t(mainTrack)).process;
    t.nicName = device + " QP " + std::to_string(qp);
    t.stream = qp;
    m_tracks.push_back(std::move(t));
    return int(m_tracks.size()) - 1;
}

EventSpec& TraceBuilder::event(int track, schema::Category c, std::string name, int64_t ts, int64_t dur) {
    EventSpec e;
    e.category = c;
    e.name = std::move(name);
    e.ts = ts;
    e.dur = dur;
    auto& events = m_tracks.at(size_t(track)).events;
    events.push_back(std::move(e));
    return events.back();
}

void TraceBuilder::write(const std::string& path) const {
    auto created = store::TraceWriter::create(path);
    if (!created) throw std::runtime_error(created.status().message());
    store::TraceWriter& w = created.value();
    auto check = [&](const Status& s) {
        if (!s.ok()) throw std::runtime_error(s.message());
    };
    for (const auto& p : m_processes) {
        store::ProcessRow row;
        row.id = p.id;
        row.rank = p.rank;
        row.worldSize = p.worldSize;
        row.rankSource = p.rankSource;
        row.host = p.host;
        row.pid = p.pid;
        row.command = "test_app";
        row.exe = "/bin/test_app";
        row.startTs = p.start;
        row.endTs = p.end;
        row.endState = "exited";
        row.exitCode = 0;
        row.clockMethod = p.imported ? "recorded" : "monotonic";
        check(w.insertProcess(row));
    }
    std::map<std::string, int64_t> labelled;                              // label -> event id
    std::vector<std::pair<int64_t, const CompletionSpec*>> completions; // wait event id, spec
    for (const auto& t : m_tracks) {
        const Process& p = m_processes[size_t(t.process)];
        int64_t trackId;
        if (!t.nicName.empty()) {
            trackId = w.insertTrack(p.id, std::nullopt, "nic_queue", t.nicName, 0, t.stream);
        } else if (t.gpu) {
            trackId = w.insertTrack(p.id, std::nullopt, "gpu_stream",
                                    "GPU " + std::to_string(t.device) + " stream " + std::to_string(t.stream),
                                    t.device, t.stream);
        } else {
            store::ThreadRecording recording;
            recording.stoppedTs = t.stoppedTs;
            recording.stopReason = t.stopReason;
            int64_t threadId = w.insertThread(p.id, *t.tid, "", recording);
            trackId = w.insertTrack(p.id, threadId, "cpu_thread", "thread " + std::to_string(*t.tid),
                                    std::nullopt, std::nullopt);
        }
        std::vector<const EventSpec*> events;
        for (const auto& e : t.events) events.push_back(&e);
        if (m_sort)
            std::stable_sort(events.begin(), events.end(),
                             [](const EventSpec* a, const EventSpec* b) { return a->ts < b->ts; });
        int64_t first = 0, last = 0;
        for (const EventSpec* e : events) {
            store::EventRow row;
            row.trackId = trackId;
            row.ts = e->ts;
            row.dur = e->dur;
            row.categoryId = int64_t(e->category);
            row.nameId = w.internString(e->name);
            row.depth = e->depth;
            row.bytes = e->bytes;
            row.peer = e->peer;
            row.seq = e->seq;
            row.count = e->count;
            row.correlationId = e->correlationId;
            if (e->communicator)
                row.communicatorId = w.internCommunicator(*e->communicator, e->communicatorSize, "mpi");
            if (e->object) row.objectId = w.internObject(w.internString(*e->object), *e->object);
            store::EventDetail d;
            d.tag = e->tag;
            int64_t id = w.insertEvent(row, d);
            for (const auto& [k, v] : e->args) w.insertEventArg(id, k, std::string_view(v));
            for (const auto& [k, v] : e->intArgs) w.insertEventArg(id, k, v);
            if (e->label) labelled[*e->label] = id;
            for (const auto& c : e->completions) completions.emplace_back(id, &c);
            if (first == 0) first = id;
            last = id;
        }
        if (first != 0) check(w.finishTrack(trackId, first, last, int64_t(events.size())));
    }
    int64_t request = 0;
    for (const auto& [waitId, c] : completions) {
        store::MpiCompletionRow row;
        row.eventId = waitId;
        row.request = request++;
        auto it = labelled.find(c->postLabel);
        if (it == labelled.end()) throw std::runtime_error("no event labelled " + c->postLabel);
        row.postEventId = it->second;
        row.isRecv = c->recv;
        row.peer = c->peer;
        row.tag = c->tag;
        row.bytes = c->bytes;
        w.insertMpiCompletion(row);
    }
    for (const auto& [k, v] : m_metadata) check(w.setMetadata(k, v));
    store::StatCounts zero{};
    check(w.writeStats(zero, {}));
    check(w.error());
    check(w.finish());
}

} // namespace hpcprof::test
