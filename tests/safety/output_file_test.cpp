// SPDX-License-Identifier: MIT
// schema::PendingOutput and checkOutputPath: outputs are checked before any work, written in a
// private folder nobody else can touch, renamed into place, and leave nothing behind on failure.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "hpcprof/schema/output_file.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using hpcprof::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names(const fs::path& folder) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
}

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

} // namespace

TEST_CASE("an output is checked before any work, with the real reason", "[safety][output]") {
    TempDir dir;
    fs::create_directory(dir / "folder");
    auto folder = schema::checkOutputPath(dir / "folder", true);
    CHECK_THAT(folder.message(), Catch::Contains("is a folder"));
    CHECK_THAT(schema::checkOutputPath(dir / "missing/t.hpcprof", true).message(),
               Catch::Contains("does not exist"));
    writeFile(dir / "file", "x");
    CHECK_THAT(schema::checkOutputPath(dir / "file/t.hpcprof", true).message(),
               Catch::Contains("is not a folder"));
    CHECK_THAT(schema::checkOutputPath(dir / "file", false).message(),
               Catch::Contains("already exists (use --force"));
    CHECK(schema::checkOutputPath(dir / "file", true).ok());
    CHECK_THAT(schema::checkOutputPath("/dev/null", true).message(),
               Catch::Contains("not a regular file"));
    CHECK(schema::checkOutputPath(dir / "new.hpcprof", false).ok());
    CHECK_FALSE(schema::checkOutputPath(dir / "folder/", true).ok());
}

TEST_CASE("a pending output is private, unpredictable and moved into place whole",
          "[safety][output]") {
    TempDir dir;
    auto a = schema::PendingOutput::begin(dir / "t.hpcprof", false);
    auto b = schema::PendingOutput::begin(dir / "t.hpcprof", false);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(fs::path(a->path()).parent_path() != fs::path(b->path()).parent_path());
    struct stat st{};
    REQUIRE(::stat(fs::path(a->path()).parent_path().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    writeFile(a->path(), "trace");
    REQUIRE(a->commit().ok());
    CHECK(test::readWholeFile(dir / "t.hpcprof") == "trace");
    // b finds the output there now and does not replace it; its folder goes either way.
    writeFile(b->path(), "other");
    auto s = b->commit();
    CHECK_THAT(s.message(), Catch::Contains("appeared while it was being written"));
    CHECK(test::readWholeFile(dir / "t.hpcprof") == "trace");
    CHECK(names(dir.path()) == std::vector<std::string>{"t.hpcprof"});
}

TEST_CASE("an abandoned output leaves nothing behind", "[safety][output]") {
    TempDir dir;
    {
        auto p = schema::PendingOutput::begin(dir / "t.hpcprof", false);
        REQUIRE(p.ok());
        writeFile(p->path(), "half");
        writeFile(p->path() + "-journal", "journal");
    }
    CHECK(names(dir.path()).empty());
    auto p = schema::PendingOutput::begin(dir / "u.json", false);
    REQUIRE(p.ok());
    writeFile(p->path(), "half");
    schema::removePendingOutputsForSignal(); // what the CLI's SIGINT/SIGTERM handler calls
    CHECK(names(dir.path()).empty());
}

TEST_CASE("replacing an output replaces a link itself, never the file it points at",
          "[safety][output]") {
    TempDir dir;
    writeFile(dir / "victim", "precious");
    fs::create_symlink(dir / "victim", dir / "t.hpcprof");
    auto p = schema::PendingOutput::begin(dir / "t.hpcprof", true);
    REQUIRE(p.ok());
    writeFile(p->path(), "trace");
    REQUIRE(p->commit().ok());
    CHECK(test::readWholeFile(dir / "victim") == "precious");
    CHECK_FALSE(fs::is_symlink(dir / "t.hpcprof"));
    CHECK(test::readWholeFile(dir / "t.hpcprof") == "trace");
}
