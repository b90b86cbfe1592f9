// SPDX-License-Identifier: MIT
// Test support: run a program, capture its exit code and output; temporary folders; paths of the
// built binaries (passed in by CMake).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace hpcprof::test {

struct ProcessResult {
    int exitCode = -1; ///< exit status, or 128 + signal number
    std::string out;
    std::string err;
};

/// Runs argv[0] (searched in PATH) with `extraEnv` ("NAME=value") added to the environment.
ProcessResult runProcess(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extraEnv = {},
                         const std::string& stdinText = {});

/// Runs `body` in a forked child, which exits with what `body` returns, or with 126 when it
/// throws (a failed REQUIRE: Catch2 reports it from the child); the child's exit status, or
/// 128 + signal number (-1 if it could not be started).
int runInChild(const std::function<int()>& body);

/// In a forked child: adds `extraEnv` ("NAME=value") to the environment and executes argv[0]
/// (searched in PATH); exits with 127 if it cannot.
[[noreturn]] void execInChild(const std::vector<std::string>& argv,
                              const std::vector<std::string>& extraEnv);

/// Waits for the child `pid` (through EINTR); its exit status, or 128 + signal number.
int waitForExit(pid_t pid);

/// A fresh empty folder under the system temporary directory, removed by the destructor.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }

private:
    std::filesystem::path m_path;
};

/// The whole content of a file (empty if it cannot be read).
std::string readWholeFile(const std::string& path);

/// Build-tree locations.
std::string hpcprofBinary();
std::string agentLibrary();
std::string sampleBinary(const std::string& name);

/// The environment the MPI tests give mpirun: allowed as root (CI runs as root), more ranks than
/// cores allowed, and idle ranks yielding the CPU (the CI machine has 2 cores).
extern const std::vector<std::string> kMpiTestEnv;
/// Whether mpirun is on the PATH (the MPI tests skip with a note when it is not).
bool haveMpirun();
/// `hpcprof run -o trace -- mpirun -np ranks <sample program>` with kMpiTestEnv.
ProcessResult runSampleUnderMpirun(const std::string& trace, int ranks, const std::string& sample);

} // namespace hpcprof::test
