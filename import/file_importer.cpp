// SPDX-License-Identifier: MIT
#include "file_importer.hpp"

#include <cstdio>
#include <filesystem>

#include "kineto_mapping.hpp"

namespace hpcprof::import {

using schema::Category;
using schema::Stat;

namespace {

/// Times a trace can hold: |ns| below 2^62 (146 years), for event times, durations and event
/// times plus the file's base time. Beyond, the value is refused (counted), never wrapped: the
/// sums and differences of the import then stay within 64 bits.
constexpr int64_t kTimeLimitNs = int64_t(1) << 62;
bool timeInRange(int64_t ns) { return ns > -kTimeLimitNs && ns < kTimeLimitNs; }

/// String pids/tids ("Spans") get keys far below any real id.
constexpr int64_t kSyntheticBase = INT64_MIN / 2;
bool isSynthetic(int64_t key) { return key < INT64_MIN / 4; }

std::optional<int64_t> intArg(const ParsedEvent& e, std::string_view key) {
    const ArgValue* v = e.arg(key);
    if (v && v->kind == ArgValue::Kind::Int) return v->i;
    return std::nullopt;
}

std::optional<int64_t> intOf(const std::map<std::string, ArgValue>& m, const std::string& key) {
    auto it = m.find(key);
    if (it != m.end() && it->second.kind == ArgValue::Kind::Int) return it->second.i;
    return std::nullopt;
}

std::string textOf(const std::map<std::string, ArgValue>& m, const std::string& key) {
    auto it = m.find(key);
    if (it != m.end() && it->second.kind == ArgValue::Kind::Text) return it->second.text;
    return {};
}

std::optional<Category> categoryByName(std::string_view name) {
    for (const auto& info : schema::kCategories)
        if (info.name == name) return info.category;
    return std::nullopt;
}

/// Export args that fill event columns instead of event_arg rows.
bool isColumnArg(std::string_view k) {
    return k == "hpcprof_category" || k == "bytes" || k == "correlation" || k == "peer" ||
           k == "seq" || k == "count" || k == "communicator" || k == "communicator_size" ||
           k == "communicator_kind" || k == "object" || k == "offset" || k == "errno" ||
           k == "fd" || k == "tag";
}

} // namespace

FileImporter::FileImporter(ImportSession& session, std::string path, size_t fileIndex)
    : m_session(session), m_path(std::move(path)), m_fileIndex(fileIndex) {}

int64_t FileImporter::idKey(const IdField& f) {
    if (!f.present) return 0;
    if (f.isInt) return f.i;
    auto [it, inserted] =
        m_syntheticIds.try_emplace(f.text, kSyntheticBase + int64_t(m_syntheticNames.size()));
    if (inserted) m_syntheticNames.push_back(f.text);
    return it->second;
}

ProcessBuilder& FileImporter::builderFor(int64_t pidKey) {
    int64_t key = m_exportMode ? pidKey : 0;
    auto& slot = m_builders[key];
    if (!slot) slot = std::make_unique<ProcessBuilder>();
    return *slot;
}

std::optional<int64_t> FileImporter::timeNs(const TimeField& f) const {
    auto v = timeNsUnchecked(f);
    if (v && !timeInRange(*v)) return std::nullopt;
    return v;
}

std::optional<int64_t> FileImporter::timeNsUnchecked(const TimeField& f) const {
    if (!f.present) return std::nullopt;
    if (f.isInt) {
        int64_t v;
        if (__builtin_mul_overflow(f.i, m_nsPerUnit, &v)) return std::nullopt;
        return v;
    }
    // "int.frac" with no more fraction digits than the unit has zeros is exact in integers:
    // the digits the parser kept give the same ns as decimalToNs without reading the text.
    int zeros = m_nsPerUnit == 1000 ? 3 : m_nsPerUnit == 1 ? 0 : m_nsPerUnit == 1000000 ? 6 : -1;
    if (f.decimal && int(f.fracDigits) <= zeros) {
        static constexpr int64_t kTen[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
        int64_t v;
        if (!__builtin_mul_overflow(int64_t(f.intPart), m_nsPerUnit, &v) &&
            !__builtin_add_overflow(v, int64_t(f.fracPart) * kTen[zeros - f.fracDigits], &v))
            return v;
    }
    return decimalToNs(f.text, m_nsPerUnit);
}

void FileImporter::countFileStat(Stat s) {
    if (!m_builders.empty())
        m_builders.begin()->second->count(s);
    else
        m_pendingStats[size_t(s)]++;
}

void FileImporter::onNonObjectEvent() { countFileStat(Stat::ImportEventsMalformed); }

void FileImporter::countBadTime(const TimeField& f) {
    // A time that is there but gave no value overflowed or is beyond kTimeLimitNs.
    countFileStat(f.present ? Stat::ImportTimesOutOfRange : Stat::ImportEventsMalformed);
}

void FileImporter::refuseBase(const std::string& key, const ArgValue& v) {
    char real[32];
    std::snprintf(real, sizeof real, "%.17g", v.d);
    std::string value = v.kind == ArgValue::Kind::Int ? std::to_string(v.i) : std::string(real);
    if (m_error.ok())
        m_error = Status::error(m_path + ": " + key + " " + value +
                                " is out of range (a time base within +-2^62 ns): the file's "
                                "times cannot be placed");
}

void FileImporter::onTopLevel(const std::string& key, const ArgValue& v) {
    if (key == "distributedInfo.rank" && v.kind == ArgValue::Kind::Int) {
        m_distRank = v.i;
    } else if (key == "distributedInfo.world_size" && v.kind == ArgValue::Kind::Int) {
        m_distWorldSize = v.i;
    } else if (key == "distributedInfo.backend" && v.kind == ArgValue::Kind::Text) {
        m_backend = v.text;
    } else if (key == "baseTimeNanoseconds" && v.isNumber()) {
        if (v.kind != ArgValue::Kind::Int || v.i < 0 || v.i >= kTimeLimitNs)
            return refuseBase(key, v);
        if (!m_exportMode) m_baseNs = v.i;
    } else if (key == "traceTimeUnit" && v.kind == ArgValue::Kind::Text) {
        if (v.text == "ns") m_nsPerUnit = 1;
        if (v.text == "us") m_nsPerUnit = 1000;
        if (v.text == "ms") m_nsPerUnit = 1000000;
    } else if (key == "hpcprof.format" && v.kind == ArgValue::Kind::Text) {
        m_exportMode = v.text == kExportFormat;
    } else if (key == "hpcprof.time_origin_ns" && v.isNumber()) {
        if (v.kind != ArgValue::Kind::Int || !timeInRange(v.i)) return refuseBase(key, v);
        m_declaredOrigin = v.i;
        m_baseNs = v.i;
    }
}

void FileImporter::onMetadata(const ParsedEvent& e, int64_t pidKey, int64_t tidKey) {
    const ArgValue* n = e.arg("name");
    std::string name = n && n->kind == ArgValue::Kind::Text ? n->text : std::string();
    if (e.name == "process_name") {
        if (!name.empty()) m_processNames[pidKey] = name;
        if (m_exportMode) {
            auto& meta = m_processMeta[pidKey];
            for (size_t i = 0; i < e.argCount; ++i) meta[e.args[i].first] = e.args[i].second;
        }
    } else if (e.name == "thread_name") {
        if (!name.empty()) m_threadNames[{pidKey, tidKey}] = name;
        if (m_exportMode) {
            TrackMeta& m = m_trackMeta[{pidKey, tidKey}];
            m.name = name;
            if (const ArgValue* k = e.arg("hpcprof_track_kind"); k && k->kind == ArgValue::Kind::Text)
                m.kind = k->text;
            if (const ArgValue* t = e.arg("hpcprof_thread_name"); t && t->kind == ArgValue::Kind::Text)
                m.threadName = t->text;
            m.device = intArg(e, "hpcprof_device");
            m.stream = intArg(e, "hpcprof_stream");
            m.tid = intArg(e, "hpcprof_tid");
        }
    }
}

void FileImporter::onFlow(const ParsedEvent& e, int64_t pidKey, int64_t tidKey, int64_t ts) {
    if (m_exportMode) return; // exports carry correlation ids in args; arrows are for viewers
    int64_t id;
    if (e.id.present && e.id.isInt) {
        id = e.id.i;
    } else if (e.id.present && !e.id.text.empty() &&
               e.id.text.find_first_not_of("0123456789") == std::string::npos &&
               e.id.text.size() < 19) {
        id = std::stoll(e.id.text);
    } else {
        countFileStat(Stat::ImportFlowsUnmatched);
        return;
    }
    bool nextSlice = e.ph == 'f' && e.bp != "e";
    ProcessBuilder& b = builderFor(pidKey);
    // The slice may not have arrived yet: remember the point on both candidate lanes' key and
    // attach it when the process is written.
    PendingTrack* t = b.findTrack(true, pidKey, tidKey);
    if (!t) t = b.findTrack(false, pidKey, tidKey);
    if (t)
        t->flows.push_back({ts, id, nextSlice});
    else
        m_lateFlows.push_back({pidKey, tidKey, {ts, id, nextSlice}});
}

PendingTrack& FileImporter::trackFor(ProcessBuilder& b, const ParsedEvent& e, int64_t pidKey,
                                     int64_t tidKey, bool gpuLane) {
    if (m_exportMode) {
        auto it = m_trackMeta.find({pidKey, tidKey});
        if (it != m_trackMeta.end() && it->second.kind == "gpu_stream") {
            PendingTrack& t = b.gpuTrack(it->second.device.value_or(0), it->second.stream.value_or(0));
            if (t.name.empty()) t.name = it->second.name;
            return t;
        }
        if (it != m_trackMeta.end()) return b.cpuTrack(pidKey, tidKey);
    }
    if (gpuLane) {
        int64_t device = intArg(e, "device").value_or(e.pid.present && e.pid.isInt ? e.pid.i : 0);
        int64_t stream = intArg(e, "stream").value_or(e.tid.present && e.tid.isInt ? e.tid.i : 0);
        return b.gpuTrack(device, stream);
    }
    return b.cpuTrack(pidKey, tidKey);
}

void FileImporter::fillKinetoFacts(const ParsedEvent& e, PendingEvent& pe, ProcessBuilder& b) {
    if (auto c = intArg(e, "correlation")) pe.correlation = *c;
    switch (Category(pe.category)) {
    case Category::GpuMemcpy: {
        if (auto bytes = intArg(e, "bytes")) pe.bytes = *bytes;
        MemcpyKinds k = parseMemcpyName(e.name);
        pe.copyKind = copyKindCode(k.copyKind);
        pe.srcKind = memoryKindCode(k.srcKind);
        pe.dstKind = memoryKindCode(k.dstKind);
        break;
    }
    case Category::GpuMemset:
        if (auto bytes = intArg(e, "bytes")) pe.bytes = *bytes;
        break;
    case Category::GpuCommKernel: {
        EventExtra x;
        const ArgValue* coll = e.arg("Collective name");
        x.collective = coll && coll->kind == ArgValue::Kind::Text ? coll->text
                                                                  : ncclCollectiveFromName(e.name);
        if (!x.collective.empty()) {
            ArgValue v;
            v.kind = ArgValue::Kind::Text;
            v.text = x.collective;
            x.args.emplace_back("collective", std::move(v));
        }
        const ArgValue* dtype = e.arg("dtype");
        if (dtype && dtype->kind == ArgValue::Kind::Text) x.args.emplace_back("datatype", *dtype);
        auto inElems = intArg(e, "In msg nelems");
        auto outElems = intArg(e, "Out msg nelems");
        if (inElems) {
            ArgValue v;
            v.kind = ArgValue::Kind::Int;
            v.i = *inElems;
            x.args.emplace_back("in_nelems", v);
            if (dtype && dtype->kind == ArgValue::Kind::Text)
                if (int64_t size = dtypeSize(dtype->text)) pe.bytes = *inElems * size;
        }
        if (outElems) {
            ArgValue v;
            v.kind = ArgValue::Kind::Int;
            v.i = *outElems;
            x.args.emplace_back("out_nelems", v);
        }
        const ArgValue* pg = e.arg("Process Group Name");
        if (pg && (pg->kind == ArgValue::Kind::Text || pg->kind == ArgValue::Kind::Int)) {
            x.communicator =
                "nccl_pg:" + (pg->kind == ArgValue::Kind::Text ? pg->text : std::to_string(pg->i));
            x.communicatorSize = intArg(e, "Group size");
        }
        const ArgValue* desc = e.arg("Process Group Description");
        if (desc && desc->kind == ArgValue::Kind::Text) x.args.emplace_back("process_group", *desc);
        pe.extra = b.addExtra(std::move(x));
        break;
    }
    default: break;
    }
}

namespace {

/// An integer hpcprof column of an export into the event or its extra; true when it puts a
/// fact into the extra (the event then needs one).
bool setIntColumn(std::string_view k, int64_t v, PendingEvent& pe, EventExtra& x) {
    if (k == "bytes") {
        pe.bytes = v;
    } else if (k == "correlation") {
        pe.correlation = v;
    } else if (k == "communicator_size") {
        x.communicatorSize = v;
    } else if (k == "peer" || k == "seq" || k == "count") {
        (k == "peer" ? x.peer : k == "seq" ? x.seq : x.count) = v;
        return true;
    } else if (k == "offset" || k == "errno" || k == "fd" || k == "tag") {
        auto& d = x.detail;
        (k == "offset" ? d.offset : k == "errno" ? d.errnoValue : k == "fd" ? d.fd : d.tag) = v;
        return true;
    }
    return false;
}

/// A text hpcprof column of an export into the extra; true when it puts a fact there.
bool setTextColumn(std::string_view k, const std::string& v, EventExtra& x) {
    if (k == "communicator") {
        x.communicator = v;
        return true;
    }
    if (k == "object") {
        x.object = v;
        return true;
    }
    if (k == "communicator_kind") x.communicatorKind = v;
    return false;
}

} // namespace

void FileImporter::fillExportFacts(const ParsedEvent& e, PendingEvent& pe, ProcessBuilder& b) {
    EventExtra x;
    bool any = false;
    for (size_t i = 0; i < e.argCount; ++i) {
        const auto& [k, v] = e.args[i];
        // A column arg of the wrong type is dropped, as the exporter never writes one.
        if (!isColumnArg(k)) {
            x.args.emplace_back(k, v);
            any = true;
        } else if (v.kind == ArgValue::Kind::Int) {
            any |= setIntColumn(k, v.i, pe, x);
        } else if (v.kind == ArgValue::Kind::Text) {
            any |= setTextColumn(k, v.text, x);
        }
    }
    if (pe.category == uint8_t(Category::GpuCommKernel)) {
        const ArgValue* c = e.arg("collective");
        x.collective = c && c->kind == ArgValue::Kind::Text ? c->text : ncclCollectiveFromName(e.name);
        any = true;
    }
    if (any) pe.extra = b.addExtra(std::move(x));
}

CategoryMapping FileImporter::cachedCategory(const ParsedEvent& e) {
    // A file has a handful of categories: the mapping of each is kept, and only the
    // categories whose mapping depends on the event (kernels: NCCL or not) are mapped again.
    CatCacheEntry* hit = nullptr;
    for (size_t i = 0; i < m_catCacheSize; ++i)
        if (std::string_view(m_catCache[i].cat) == std::string_view(e.cat)) {
            hit = &m_catCache[i];
            break;
        }
    if (!hit) {
        if (m_catCacheSize == m_catCache.size())
            return mapCategory(e.cat, e.name, e.arg("Collective name") != nullptr);
        hit = &m_catCache[m_catCacheSize++];
        hit->cat = e.cat;
        hit->mapping = mapCategory(e.cat, {}, false);
        CategoryMapping other = mapCategory(e.cat, {}, true);
        hit->perEvent = other.category != hit->mapping.category || other.lane != hit->mapping.lane ||
                        other.known != hit->mapping.known;
    }
    if (hit->perEvent) return mapCategory(e.cat, e.name, e.arg("Collective name") != nullptr);
    return hit->mapping;
}

CategoryMapping FileImporter::eventCategory(const ParsedEvent& e, ProcessBuilder& b) {
    const ArgValue* hc = m_exportMode ? e.arg("hpcprof_category") : nullptr;
    std::optional<Category> exported =
        hc && hc->kind == ArgValue::Kind::Text ? categoryByName(hc->text) : std::nullopt;
    if (exported) return {*exported, Lane::Cpu, true}; // the track metadata decides the lane
    CategoryMapping m = cachedCategory(e);
    if (!m.known) b.countCategory(Stat::ImportUnknownCategories, e.cat);
    return m;
}

bool FileImporter::makeEvent(const ParsedEvent& e, int64_t ts, int64_t dur, ProcessBuilder*& bOut,
                             PendingTrack*& trackOut) {
    int64_t pidKey = idKey(e.pid), tidKey = idKey(e.tid);
    if (m_exportMode && m_currentExportPid && *m_currentExportPid != pidKey &&
        m_builders.count(*m_currentExportPid)) {
        // Exports list one process after another: the previous one is complete.
        Status s = flush(*m_currentExportPid, false);
        if (!s.ok() && m_error.ok()) m_error = s;
    }
    if (m_exportMode) m_currentExportPid = pidKey;
    ProcessBuilder& b = builderFor(pidKey);
    bOut = &b;
    trackOut = nullptr;

    CategoryMapping m = eventCategory(e, b);
    if (m.notAnalysed) {
        b.countCategory(Stat::ImportEventsNotAnalysed, e.cat);
        return false;
    }
    PendingTrack& t = trackFor(b, e, pidKey, tidKey, m.lane == Lane::Gpu);
    if (!m.accelerator.empty() && t.gpu && t.name.empty()) // "MTIA 0 stream 3", not "GPU ..."
        t.name = std::string(m.accelerator) + " " + std::to_string(t.device) + " stream " +
                 std::to_string(t.stream);
    PendingEvent pe;
    pe.ts = ts;
    pe.dur = dur;
    pe.nameId = m_session.nameId(e.name);
    pe.category = uint8_t(m.category);
    pe.order = b.nextOrder();
    if (m_exportMode)
        fillExportFacts(e, pe, b);
    else
        fillKinetoFacts(e, pe, b);
    if (!t.gpu && !m_cpuPid && e.pid.present && e.pid.isInt) m_cpuPid = e.pid.i;
    t.pending.push_back(pe);
    bOut = &b;
    trackOut = &t;
    return true;
}

// namedStart and onComplete (most events) are inline: the split per event type costs no time.
inline std::optional<int64_t> FileImporter::namedStart(const ParsedEvent& e) {
    auto ts = timeNs(e.ts);
    if (ts && e.hasName) return ts;
    if (e.hasName)
        countBadTime(e.ts);
    else
        countFileStat(Stat::ImportEventsMalformed);
    return std::nullopt;
}

inline void FileImporter::onComplete(const ParsedEvent& e) {
    auto ts = namedStart(e);
    if (!ts) return;
    int64_t dur = 0;
    auto d = timeNs(e.dur);
    bool invalid = !d || *d < 0;
    if (!invalid) dur = *d;
    ProcessBuilder* b = nullptr;
    PendingTrack* t = nullptr;
    makeEvent(e, *ts, dur, b, t);
    if (invalid) b->count(Stat::ImportDurationsInvalid);
}

void FileImporter::onBegin(const ParsedEvent& e) {
    auto ts = namedStart(e);
    if (!ts) return;
    ProcessBuilder* b = nullptr;
    PendingTrack* t = nullptr;
    // An event not imported still opens a level, which its E closes.
    bool made = makeEvent(e, *ts, 0, b, t);
    m_open[{idKey(e.pid), idKey(e.tid)}].push_back(
        {b, t, made ? uint32_t(t->pending.size() - 1) : 0});
}

void FileImporter::onEnd(const ParsedEvent& e) {
    auto ts = timeNs(e.ts);
    if (!ts) return countBadTime(e.ts);
    auto it = m_open.find({idKey(e.pid), idKey(e.tid)});
    if (it == m_open.end() || it->second.empty()) {
        countFileStat(Stat::ImportUnmatchedBeginEnd);
        return;
    }
    OpenBegin ob = it->second.back();
    it->second.pop_back();
    if (!ob.track) return; // a B that was not imported
    PendingEvent& pe = ob.track->pending[ob.index];
    int64_t dur = *ts - pe.ts;
    if (dur < 0) {
        ob.builder->count(Stat::ImportDurationsInvalid);
        dur = 0;
    }
    pe.dur = dur;
}

void FileImporter::onInstant(const ParsedEvent& e) {
    auto ts = namedStart(e);
    if (!ts) return;
    ProcessBuilder* b = nullptr;
    PendingTrack* t = nullptr;
    makeEvent(e, *ts, 0, b, t);
}

void FileImporter::onFlowPoint(const ParsedEvent& e) {
    auto ts = timeNs(e.ts);
    if (!ts) return countBadTime(e.ts);
    onFlow(e, idKey(e.pid), idKey(e.tid), *ts);
}

void FileImporter::onEvent(const ParsedEvent& e) {
    ++m_objects;
    if (e.ph != 0 && !e.typeError) ++m_phased;
    if (e.typeError) {
        countFileStat(Stat::ImportEventsMalformed);
        return;
    }
    switch (e.ph) {
    case 'X': return onComplete(e);
    case 'B': return onBegin(e);
    case 'E': return onEnd(e);
    case 'i':
    case 'I':
    case 'R': return onInstant(e);
    case 'M': return onMetadata(e, idKey(e.pid), idKey(e.tid));
    case 's':
    case 't':
    case 'f': return onFlowPoint(e);
    case 0: return countFileStat(Stat::ImportEventsMalformed);
    default: return countFileStat(Stat::ImportEventsUnsupported);
    }
}

void FileImporter::closeOpenBegins(ProcessBuilder& b) {
    for (auto& [key, stack] : m_open)
        for (size_t i = 0; i < stack.size();) {
            if (stack[i].builder == &b) {
                stack[i].track->pending[stack[i].index].dur = 0;
                b.count(Stat::ImportUnmatchedBeginEnd);
                stack.erase(stack.begin() + long(i));
            } else {
                ++i;
            }
        }
}

void FileImporter::exportProcessFacts(int64_t pidKey, ProcessBuilder& b) {
    ProcessFacts& f = b.facts();
    const auto& meta = m_processMeta[pidKey];
    f.rank = intOf(meta, "hpcprof_rank");
    f.rankSource = textOf(meta, "hpcprof_rank_source");
    f.worldSize = intOf(meta, "hpcprof_world_size");
    f.host = textOf(meta, "hpcprof_host");
    f.pid = intOf(meta, "hpcprof_pid").value_or(0);
    f.command = textOf(meta, "hpcprof_command");
}

void FileImporter::exportTracks(int64_t pidKey, ProcessBuilder& b) {
    // Tracks the export listed keep existing even when they hold no events.
    for (const auto& [key, meta] : m_trackMeta)
        if (key.first == pidKey) {
            if (meta.kind == "gpu_stream") {
                PendingTrack& t = b.gpuTrack(meta.device.value_or(0), meta.stream.value_or(0));
                if (t.name.empty()) t.name = meta.name;
            } else {
                b.cpuTrack(key.first, key.second);
            }
        }
    b.forEachCpuTrack([&](int64_t p, int64_t t, PendingTrack& track) {
        auto mt = m_trackMeta.find({p, t});
        if (mt == m_trackMeta.end()) {
            track.tid = isSynthetic(t) ? 0 : t;
            return;
        }
        const TrackMeta& meta = mt->second;
        track.name = meta.name;
        track.tid = meta.tid.value_or(0);
        track.threadName = meta.threadName;
        track.explicitThread = meta.tid.has_value();
        if (meta.kind != "cpu_thread") track.kindName = meta.kind;
        if (meta.device || meta.stream) {
            track.hasDevice = true;
            track.device = meta.device.value_or(0);
            track.stream = meta.stream.value_or(0);
        }
    });
}

void FileImporter::kinetoProcessFacts(ProcessBuilder& b, ProcessPlacement& place) {
    ProcessFacts& f = b.facts();
    std::string fileName = std::filesystem::path(m_path).filename().string();
    if (m_distRank) {
        f.rank = m_distRank;
        f.rankSource = "distributedInfo";
        place.rankFinal = true;
    } else if (auto r = rankFromFileName(fileName)) {
        f.rank = r;
        f.rankSource = "file name";
        place.rankFinal = true;
    }
    f.worldSize = m_distWorldSize;
    f.pid = m_cpuPid.value_or(0);
    if (m_cpuPid)
        if (auto pn = m_processNames.find(*m_cpuPid); pn != m_processNames.end())
            f.command = pn->second;
}

void FileImporter::kinetoTracks(ProcessBuilder& b) {
    b.forEachCpuTrack([&](int64_t p, int64_t t, PendingTrack& track) {
        auto tn = m_threadNames.find({p, t});
        if (isSynthetic(t)) {
            track.tid = 0;
            track.threadName = m_syntheticNames[size_t(t - kSyntheticBase)];
        } else {
            track.tid = t;
            if (tn != m_threadNames.end()) track.threadName = tn->second;
        }
        if (tn != m_threadNames.end()) track.name = tn->second;
    });
}

void FileImporter::attachLateFlows(ProcessBuilder& b) {
    for (const auto& lf : m_lateFlows) {
        PendingTrack* t = b.findTrack(true, lf.pidKey, lf.tidKey);
        if (!t) t = b.findTrack(false, lf.pidKey, lf.tidKey);
        if (t)
            t->flows.push_back(lf.point);
        else
            b.count(Stat::ImportFlowsUnmatched);
    }
    m_lateFlows.clear();
}

Status FileImporter::flush(int64_t pidKey, bool truncated) {
    auto it = m_builders.find(pidKey);
    if (it == m_builders.end()) return {};
    ProcessBuilder& b = *it->second;
    closeOpenBegins(b); // B events of this process that never saw their E
    for (size_t s = 0; s < m_pendingStats.size(); ++s) b.stats()[s] += m_pendingStats[s];
    m_pendingStats = {};
    if (truncated) b.count(Stat::ImportFilesTruncated);
    // The base time is known only now (Kineto writes it after the events): events it would
    // carry beyond the times a trace holds are refused.
    const int64_t base = m_exportMode ? m_declaredOrigin.value_or(0) : m_baseNs;
    b.count(Stat::ImportTimesOutOfRange,
            b.dropEventsOutside(-kTimeLimitNs - base, kTimeLimitNs - base));

    b.facts().sourceFile = m_path;
    ProcessPlacement place;
    place.baseNs = m_baseNs;
    place.declaredOriginNs = m_declaredOrigin;
    place.fileIndex = m_fileIndex;
    if (m_exportMode) {
        exportProcessFacts(pidKey, b);
        place.rankFinal = true;
        exportTracks(pidKey, b);
    } else {
        kinetoProcessFacts(b, place);
        kinetoTracks(b);
        attachLateFlows(b);
    }
    Status s = m_session.writeProcess(b, place);
    m_builders.erase(it);
    m_flushedPids.insert(pidKey);
    return s;
}

Status FileImporter::finish(bool truncated) {
    if (!m_error.ok()) return m_error;
    if (!m_exportMode && m_builders.empty()) builderFor(0); // a rank with no events is still a rank
    if (m_exportMode) // processes the export listed without events in it
        for (const auto& [pid, meta] : m_processMeta)
            if (!m_flushedPids.count(pid)) builderFor(pid);
    if (truncated && m_builders.empty()) {
        // Nothing usable was read; the damage is still worth a count.
        builderFor(0);
    }
    while (!m_builders.empty()) {
        int64_t key = m_builders.begin()->first;
        HPCPROF_RETURN_IF_ERROR(flush(key, truncated));
        truncated = false; // counted once per file
    }
    return {};
}

} // namespace hpcprof::import
