// SPDX-License-Identifier: MIT
// Compiled only when PAPI was found (HPCPROF_HAVE_PAPI); papi_missing.cpp stands in otherwise.
#include "papi_backend.hpp"

#include <dlfcn.h>
#include <papi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace hpcprof::agent::counters {

namespace raw = schema::raw;

namespace {

// The PAPI functions used, resolved from the dlopen'ed library.
struct PapiApi {
    decltype(&PAPI_is_initialized) isInitialized;
    decltype(&PAPI_library_init) libraryInit;
    decltype(&PAPI_thread_init) threadInit;
    decltype(&PAPI_create_eventset) createEventset;
    decltype(&PAPI_assign_eventset_component) assignComponent;
    decltype(&PAPI_attach) attach;
    decltype(&PAPI_add_event) addEvent;
    decltype(&PAPI_start) start;
    decltype(&PAPI_read) read;
    decltype(&PAPI_stop) stop;
    decltype(&PAPI_cleanup_eventset) cleanup;
    decltype(&PAPI_destroy_eventset) destroy;
    decltype(&PAPI_strerror) strerror;
    decltype(&PAPI_event_name_to_code) nameToCode;
    decltype(&PAPI_get_event_component) eventComponent;
    decltype(&PAPI_get_component_info) componentInfo;
};

unsigned long threadId() { return (unsigned long)syscall(SYS_gettid); }

class PapiBackend final : public Backend {
public:
    const char* name() const override { return "papi"; }
    raw::CounterSource source() const override { return raw::CounterSource::Papi; }

    bool load(char* whyNot) {
        const char* names[] = {"libpapi.so.7.0", "libpapi.so.7", "libpapi.so"};
        for (const char* n : names)
            if ((m_lib = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
        if (!m_lib) {
            setReason(whyNot, "libpapi could not be loaded: ");
            const char* e = dlerror();
            appendReason(whyNot, e ? e : "?");
            return false;
        }
        bool ok = true;
        auto get = [&](auto& fn, const char* sym) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(m_lib, sym));
            ok = ok && fn;
        };
        get(m_api.isInitialized, "PAPI_is_initialized");
        get(m_api.libraryInit, "PAPI_library_init");
        get(m_api.threadInit, "PAPI_thread_init");
        get(m_api.createEventset, "PAPI_create_eventset");
        get(m_api.assignComponent, "PAPI_assign_eventset_component");
        get(m_api.attach, "PAPI_attach");
        get(m_api.addEvent, "PAPI_add_event");
        get(m_api.start, "PAPI_start");
        get(m_api.read, "PAPI_read");
        get(m_api.stop, "PAPI_stop");
        get(m_api.cleanup, "PAPI_cleanup_eventset");
        get(m_api.destroy, "PAPI_destroy_eventset");
        get(m_api.strerror, "PAPI_strerror");
        get(m_api.nameToCode, "PAPI_event_name_to_code");
        get(m_api.eventComponent, "PAPI_get_event_component");
        get(m_api.componentInfo, "PAPI_get_component_info");
        if (!ok) {
            setReason(whyNot, "libpapi lacks a PAPI 7 function");
            return false;
        }
        // Another tool or the application may own PAPI already: reuse, never re-initialise.
        if (m_api.isInitialized() == PAPI_NOT_INITED) {
            int v = m_api.libraryInit(PAPI_VER_CURRENT);
            if (v != PAPI_VER_CURRENT) {
                setReason(whyNot, "PAPI_library_init failed: ");
                appendReason(whyNot, v > 0 ? "version mismatch" : m_api.strerror(v));
                return false;
            }
            m_api.threadInit(threadId);
        }
        m_ownerTid = threadId();
        return true;
    }

    Offer offer(const char* counter) override {
        Offer o;
        if (!isPapiEventName(counter)) return o;
        int code = 0;
        int rc = m_api.nameToCode(const_cast<char*>(counter), &code);
        if (rc != PAPI_OK) {
            setReason(o.reason, "PAPI: ");
            appendReason(o.reason, m_api.strerror(rc));
            explainComponents(o.reason);
            return o;
        }
        int cidx = m_api.eventComponent(code);
        const PAPI_component_info_t* ci = cidx >= 0 ? m_api.componentInfo(cidx) : nullptr;
        bool sde = ci && std::strcmp(ci->name, "sde") == 0;
        if (ci && ci->disabled) {
            setReason(o.reason, "PAPI component ");
            appendReason(o.reason, ci->name);
            appendReason(o.reason, " disabled: ");
            appendReason(o.reason, ci->disabled_reason);
            return o;
        }
        // Try it on a scratch event set: this is where "no counter", permissions and
        // conflicts show up.
        int es = PAPI_NULL;
        rc = m_api.createEventset(&es);
        if (rc == PAPI_OK) rc = m_api.addEvent(es, code);
        if (es != PAPI_NULL) {
            m_api.cleanup(es);
            m_api.destroy(&es);
        }
        if (rc != PAPI_OK) {
            setReason(o.reason, "PAPI_add_event: ");
            appendReason(o.reason, m_api.strerror(rc));
            explainComponents(o.reason);
            return o;
        }
        if (!sde) {
            // Per-thread events are counted through PAPI_attach (the sampler reads other
            // threads); where attaching fails the event would never produce a value.
            es = PAPI_NULL;
            rc = m_api.createEventset(&es);
            if (rc == PAPI_OK) rc = m_api.assignComponent(es, cidx);
            if (rc == PAPI_OK) rc = m_api.attach(es, threadId());
            if (es != PAPI_NULL) {
                m_api.cleanup(es);
                m_api.destroy(&es);
            }
            if (rc != PAPI_OK) {
                setReason(o.reason, "PAPI_attach (per-thread counting): ");
                appendReason(o.reason, m_api.strerror(rc));
                return o;
            }
        }
        if (!sde && m_threadCount > 0 && cidx != m_threadComponent) {
            setReason(o.reason, "PAPI: per-thread events must come from one component");
            return o;
        }
        o.ok = true;
        o.code = code;
        o.processWide = sde;
        o.unit = (std::strstr(counter, "TASK-CLOCK") || std::strstr(counter, "CPU-CLOCK"))
                     ? raw::CounterUnit::Ns
                     : raw::CounterUnit::Count;
        if (!sde) m_threadComponent = cidx;
        return o;
    }

    void add(const Offer& offer, uint8_t slot) override {
        if (offer.processWide) {
            if (m_processCount >= kMaxPerfEvents) return;
            // PAPI event sets belong to the thread that made them, and SDE sets read from the
            // sampler thread gave 0 or crashed (PAPI 7.0): the set is made and read only on the
            // thread that loaded PAPI (the program's main thread), i.e. at exit.
            // SDE counters registered PAPI_SDE_DELTA count from PAPI_start: start now.
            m_processCodes[m_processCount] = offer.code;
            m_processSlots[m_processCount++] = slot;
            startProcessSet();
        } else if (m_threadCount < kMaxPerfEvents) {
            m_threadCodes[m_threadCount] = offer.code;
            m_threadSlots[m_threadCount++] = slot;
        }
    }

    bool used() const override { return m_threadCount + m_processCount > 0; }

    void attach(ThreadSlot& t, int tid) override {
        t.papiSet = -1;
        if (m_threadCount == 0) return;
        int es = PAPI_NULL;
        if (m_api.createEventset(&es) != PAPI_OK) return;
        bool ok = m_api.assignComponent(es, m_threadComponent) == PAPI_OK &&
                  m_api.attach(es, (unsigned long)tid) == PAPI_OK;
        for (int i = 0; ok && i < m_threadCount; ++i) ok = m_api.addEvent(es, m_threadCodes[i]) == PAPI_OK;
        ok = ok && m_api.start(es) == PAPI_OK;
        if (!ok) {
            m_api.cleanup(es);
            m_api.destroy(&es);
            return;
        }
        t.papiSet = es;
    }

    void detach(ThreadSlot& t) override {
        if (t.papiSet < 0) return;
        long long v[kMaxPerfEvents];
        int es = t.papiSet;
        m_api.stop(es, v);
        m_api.cleanup(es);
        m_api.destroy(&es);
        t.papiSet = -1;
    }

    void read(ThreadSlot& t, uint64_t* values) override {
        long long v[kMaxPerfEvents];
        bool ok = t.papiSet >= 0 && m_api.read(t.papiSet, v) == PAPI_OK;
        for (int i = 0; i < m_threadCount; ++i)
            values[m_threadSlots[i]] = ok ? uint64_t(v[i]) : raw::kCounterMissing;
    }

    bool readProcess(uint64_t* values) override {
        if (m_processCount == 0 || threadId() != m_ownerTid) return false;
        long long v[kMaxPerfEvents];
        bool ok = m_processStarted && m_api.read(m_processSet, v) == PAPI_OK;
        for (int i = 0; i < m_processCount; ++i)
            values[m_processSlots[i]] = ok ? uint64_t(v[i]) : raw::kCounterMissing;
        return true;
    }

private:
    void startProcessSet() {
        if (m_processSet != PAPI_NULL) {
            long long v[kMaxPerfEvents];
            if (m_processStarted) m_api.stop(m_processSet, v);
            m_api.cleanup(m_processSet);
            m_api.destroy(&m_processSet);
            m_processSet = PAPI_NULL;
        }
        bool ok = m_api.createEventset(&m_processSet) == PAPI_OK;
        for (int i = 0; ok && i < m_processCount; ++i) ok = m_api.addEvent(m_processSet, m_processCodes[i]) == PAPI_OK;
        m_processStarted = ok && m_api.start(m_processSet) == PAPI_OK;
    }

    // Adds "; PAPI perf_event: <disabled reason>" when the CPU component is disabled: that is
    // usually the real cause of "event does not exist" (no PMU).
    void explainComponents(char* reason) {
        for (int i = 0; i < 8; ++i) {
            const PAPI_component_info_t* ci = m_api.componentInfo(i);
            if (!ci) break;
            if (std::strcmp(ci->name, "perf_event") != 0) continue;
            if (ci->disabled) {
                appendReason(reason, "; component perf_event disabled: ");
                appendReason(reason, ci->disabled_reason);
            } else if (ci->num_preset_events == 0) {
                appendReason(reason, "; perf_event has no preset events here (no usable hardware PMU)");
            }
        }
    }

    void* m_lib = nullptr;
    PapiApi m_api{};
    int m_threadCodes[kMaxPerfEvents] = {};
    uint8_t m_threadSlots[kMaxPerfEvents] = {};
    int m_threadCount = 0;
    int m_threadComponent = -1;
    int m_processCodes[kMaxPerfEvents] = {};
    uint8_t m_processSlots[kMaxPerfEvents] = {};
    int m_processCount = 0;
    int m_processSet = PAPI_NULL;
    bool m_processStarted = false;
    unsigned long m_ownerTid = 0;
};

} // namespace

std::unique_ptr<Backend> makePapiBackend(char* whyNot) {
    auto b = std::make_unique<PapiBackend>();
    if (!b->load(whyNot)) return nullptr;
    return b;
}

} // namespace hpcprof::agent::counters
