// SPDX-License-Identifier: MIT
// `hpcprof pack`: a real program's trace, packed, gives byte-identical reports, diffs and
// exports; damaged packed files are refused with a clear message and exit code 2.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_runner.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

ProcessResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), hpcprofBinary());
    return runProcess(args);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

/// `text` with every `from` replaced by `to` (reports name the trace they read).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

TEST_CASE("a packed trace gives the same reports, diffs and exports as the plain one", "[integration][pack]") {
    TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "p.hpcprof";
    auto run = cli({"run", "-q", "-o", plain, "--", sampleBinary("io_sample"), dir.path().string()});
    REQUIRE(run.exitCode == 0);
    auto pack = cli({"pack", plain, "-o", packed});
    INFO(pack.err);
    REQUIRE(pack.exitCode == 0);
    CHECK(fs::file_size(packed) < fs::file_size(plain) / 4);
    CHECK_THAT(pack.err, Catch::Contains("B/event"));

    for (const char* format : {"text", "json", "md"}) {
        auto a = cli({"report", plain, "--format", format});
        auto b = cli({"report", packed, "--format", format});
        INFO(format << ": " << b.err);
        REQUIRE(a.exitCode == 0);
        REQUIRE(b.exitCode == 0);
        CHECK(replaced(b.out, packed, plain) == a.out);
    }
    auto d1 = cli({"diff", plain, plain, "--format", "json"});
    auto d2 = cli({"diff", packed, plain, "--format", "json"});
    REQUIRE(d1.exitCode == 0);
    REQUIRE(d2.exitCode == 0);
    CHECK(replaced(d2.out, packed, plain) == d1.out);
    auto e1 = cli({"export", plain, "-o", dir / "plain.json"});
    auto e2 = cli({"export", packed, "-o", dir / "packed.json"});
    INFO(e2.err);
    REQUIRE(e1.exitCode == 0);
    REQUIRE(e2.exitCode == 0);
    CHECK(replaced(readFile(dir / "packed.json"), packed, plain) == readFile(dir / "plain.json"));

    // The packed form is a standard zstd file: `zstd -d` gives the plain trace back, bit for bit.
    if (runProcess({"sh", "-c", "command -v zstd"}).exitCode == 0) {
        auto unz = runProcess({"zstd", "-q", "-d", packed, "-o", dir / "back.hpcprof"});
        REQUIRE(unz.exitCode == 0);
        CHECK(readFile(dir / "back.hpcprof") == readFile(plain));
    }
    auto again = cli({"pack", packed, "-o", dir / "twice.zst"});
    CHECK(again.exitCode == 2);
    CHECK_THAT(again.err, Catch::Contains("already packed"));
}

TEST_CASE("a truncated or damaged packed trace is refused with exit code 2", "[integration][pack]") {
    TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "p.hpcprof";
    REQUIRE(cli({"run", "-q", "-o", plain, "--", sampleBinary("io_sample"), dir.path().string()})
                .exitCode == 0);
    REQUIRE(cli({"pack", plain, "-o", packed}).exitCode == 0);
    const std::string bytes = readFile(packed);
    REQUIRE(bytes.size() > 64);

    writeFile(dir / "cut.hpcprof", bytes.substr(0, bytes.size() / 2));
    auto cut = cli({"report", dir / "cut.hpcprof"});
    CHECK(cut.exitCode == 2);
    CHECK_THAT(cut.err, Catch::Contains("damaged packed trace"));

    std::string flipped = bytes;
    for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 16; ++i) flipped[i] = char(~flipped[i]);
    writeFile(dir / "flip.hpcprof", flipped);
    auto flip = cli({"report", dir / "flip.hpcprof"});
    CHECK(flip.exitCode == 2);
    CHECK_THAT(flip.err, Catch::Contains("damaged packed trace"));

    writeFile(dir / "magic.hpcprof", bytes.substr(0, 4)); // the magic alone
    auto magic = cli({"diff", dir / "magic.hpcprof", plain});
    CHECK(magic.exitCode == 2);
    CHECK_THAT(magic.err, Catch::Contains("damaged packed trace"));
}
