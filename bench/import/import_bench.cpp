// SPDX-License-Identifier: MIT
// Import benchmark: imports one Kineto-like file (see kineto_gen) and reports events per second
// of CPU time, peak resident memory and its ratio to the file's uncompressed size.
//
//   import_bench FILE.json[.gz] [OUT.hpcprof]
#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "hpcprof/import/importer.hpp"

namespace fs = std::filesystem;

namespace {

double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t uncompressedSize(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return 0;
    static char buf[1 << 20];
    uint64_t n = 0;
    int r;
    while ((r = gzread(f, buf, sizeof buf)) > 0) n += uint64_t(r);
    gzclose(f);
    return n;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: import_bench FILE.json[.gz] [OUT.hpcprof]\n");
        return 2;
    }
    std::string in = argv[1];
    std::string out = argc > 2 ? argv[2] : in + ".bench.hpcprof";
    uint64_t jsonBytes = uncompressedSize(in);
    hpcprof::import::ImportOptions o;
    o.inputs = {in};
    o.output = out;
    o.force = true;
    double cpu0 = cpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    auto r = hpcprof::import::importTraces(o);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = cpuSeconds() - cpu0;
    if (!r) {
        std::fprintf(stderr, "import_bench: %s\n", r.status().message().c_str());
        return 1;
    }
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    double peakMb = double(u.ru_maxrss) / 1024.0;
    double jsonMb = double(jsonBytes) / 1e6 * 1e6 / (1024.0 * 1024.0);
    std::printf("events          %lld\n", (long long)r->events);
    std::printf("json size       %.1f MiB (%.0f bytes/event)\n", jsonMb,
                double(jsonBytes) / double(r->events));
    std::printf("wall            %.2f s\n", wall);
    std::printf("cpu             %.2f s\n", cpu);
    std::printf("events/s (cpu)  %.0f\n", double(r->events) / cpu);
    std::printf("MiB/s (cpu)     %.1f\n", jsonMb / cpu);
    std::printf("peak RSS        %.1f MiB (%.3f of the JSON size)\n", peakMb, peakMb / jsonMb);
    std::printf("trace size      %.1f MiB\n", double(fs::file_size(out)) / (1024.0 * 1024.0));
    if (argc <= 2) fs::remove(out);
    return 0;
}
