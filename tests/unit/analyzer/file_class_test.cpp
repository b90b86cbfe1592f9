// SPDX-License-Identifier: MIT
// File classes (analyzer/src/file_class.hpp) on paths seen in real runs, and the I/O rules and
// top-files list that follow from them: the MPI runtime's start-up reads are not the program's.
#include <catch2/catch.hpp>

#include <functional>

#include "analyzer/src/file_class.hpp"
#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

TEST_CASE("files are classed by what they are to the program", "[analyzer][files]") {
    struct Case {
        const char* path;
        const char* kind;
        FileClass expected;
    };
    const Case cases[] = {
        // Read by Open MPI 4.1 / hwloc / PMIx at MPI_Init (strace of a 2-rank run).
        {"/sys/devices/pci0000:00/0000:00:04.0/config", "procfs", FileClass::PseudoFs},
        {"/proc/cpuinfo", "procfs", FileClass::PseudoFs},
        {"/sys/fs/cgroup/cpu.max", "procfs", FileClass::PseudoFs},
        {"/etc/openmpi/openmpi-mca-params.conf", "file", FileClass::Runtime},
        {"/usr/share/openmpi/help-mpi-btl-openib.txt", "file", FileClass::Runtime},
        {"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so", "file", FileClass::Runtime},
        {"/home/u/.openmpi/mca-params.conf", "file", FileClass::Runtime},
        {"/tmp/ompi.vm.0/pid.123/contact.txt", "file", FileClass::Runtime},
        {"/opt/venv/lib/python3.11/site-packages/torch/__init__.py", "file", FileClass::Runtime},
        {"/work/proj/__pycache__/model.cpython-311.pyc", "file", FileClass::Runtime},
        {"/opt/app/lib/libsolver.so.3", "file", FileClass::Runtime},
        {"/dev/shm/vader_segment.vm.1.0", "shm", FileClass::Ipc},
        {"pipe:[123456]", "pipe", FileClass::Ipc},
        {"socket:[98765]", "socket", FileClass::Ipc},
        {"anon_inode:[eventfd]", "other", FileClass::Ipc},
        {"/dev/null", "device", FileClass::Device},
        {"/dev/pts/3", "device", FileClass::Device},
        {"/dev/infiniband/uverbs0", "device", FileClass::Device},
        // The program's own files, wherever they are.
        {"/scratch/run42/dump.melt", "file", FileClass::Data},
        {"/home/u/case/input.dat", "file", FileClass::Data},
        {"/tmp/checkpoint.h5", "file", FileClass::Data},
        {"results.sorted", "unknown", FileClass::Data}, // ".so" inside a name is not a library
        {"/data/train.sosa", "file", FileClass::Data},
        {"(unknown)", "unknown", FileClass::Unknown},
        // Folders the runtime lists (getdents, fstat) are classed like their files.
        {"/sys", "directory", FileClass::PseudoFs},
        {"/proc", "directory", FileClass::PseudoFs},
        {"/etc", "directory", FileClass::Runtime},
        {"/", "directory", FileClass::Runtime},
        {"/scratch/run42", "directory", FileClass::Data},
    };
    for (const auto& c : cases) {
        INFO(c.path);
        CHECK(classifyFile(c.path, c.kind) == c.expected);
    }
    CHECK(std::string(fileClassName(FileClass::PseudoFs)) == "pseudo_fs");
}

namespace {
Analysis run(const std::function<void(test::TraceBuilder&)>& build) { return test::analyseBuilt(build); }
const Finding* find(const Analysis& a, const std::string& id) { return test::findFinding(a, id); }
} // namespace

TEST_CASE("small-io and io-bound look at the program's data files only", "[analyzer][files][advice]") {
    // 200 small reads of /sys and /proc at start-up (what MPI_Init does), 20 % of the window.
    auto startup = [](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 10000, 1);
        for (int i = 0; i < 200; ++i)
            b.event(t, Category::PosixIo, "read", 40 * i, 10)
                .withBytes(64)
                .withObject(i % 2 ? "/proc/cpuinfo" : "/sys/devices/pci0000:00/0000:00:04.0/config");
    };
    Analysis a = run(startup);
    CHECK_FALSE(find(a, "small-io"));
    CHECK_FALSE(find(a, "io-bound"));
    // The same reads on the program's file fire both.
    Analysis d = run([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 10000, 1);
        for (int i = 0; i < 200; ++i)
            b.event(t, Category::PosixIo, "read", 40 * i, 10).withBytes(64).withObject("/scratch/in.dat");
    });
    REQUIRE(find(d, "small-io"));
    const Finding* bound = find(d, "io-bound");
    REQUIRE(bound);
    CHECK(bound->estimatedGainNs == 2000);
}

TEST_CASE("the program's data files lead the top files, the others follow with their class",
          "[analyzer][files]") {
    Analysis a = run([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 10000, 1);
        b.event(t, Category::PosixIo, "read", 0, 3000).withBytes(64).withObject("/proc/cpuinfo");
        b.event(t, Category::PosixIo, "read", 3000, 1000).withBytes(64).withObject("/etc/openmpi/openmpi-mca-params.conf");
        b.event(t, Category::PosixIo, "write", 5000, 10).withBytes(1 << 20).withObject("/scratch/out.dat");
    });
    REQUIRE(a.topFiles.size() == 3);
    CHECK(a.topFiles[0].name == "/scratch/out.dat");
    CHECK(a.topFiles[0].fileClass == FileClass::Data);
    CHECK(a.topFiles[1].name == "/proc/cpuinfo");
    CHECK(a.topFiles[1].fileClass == FileClass::PseudoFs);
    CHECK(a.topFiles[2].fileClass == FileClass::Runtime);
    REQUIRE(a.ioByClass.size() == 3);
    CHECK(a.ioByClass[0].fileClass == FileClass::Data);
    CHECK(a.ioByClass[0].bytes == 1 << 20);
    CHECK(a.ioByClass[1].fileClass == FileClass::Runtime);
    CHECK(a.ioByClass[1].ns == 1000);
    CHECK(a.ioByClass[2].fileClass == FileClass::PseudoFs);
    CHECK(a.ioByClass[2].calls == 1);
}
