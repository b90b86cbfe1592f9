// SPDX-License-Identifier: MIT
// Test support for the CLI's safety tests (issue 17): the exact calls of io_sample, a FIFO gate
// that holds a profiled command until the test releases it, a second user (nobody) for races in
// shared folders, a small tmpfs for disk-full runs, and listings to spot leftovers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "trace_query.hpp"

namespace hpcprof::test::safety {

/// "function|calls|bytes" rows for one file, by a path suffix ("/posix.dat", "/d0/posix.dat").
std::vector<std::string> callsOn(const TraceQuery& q, const std::string& suffix);

/// Checks every call samples/io/io_sample.c makes on its four files in `folder` (empty: any).
void checkIoSampleCalls(const TraceQuery& q, const std::string& folder = {});

/// Polls `done` every 20 ms until it is true or `timeout` passes.
bool waitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(20000));

/// Whether `rawDir` holds a process folder (the agent started in the command).
bool hasProcessFolder(const std::filesystem::path& rawDir);

/// A FIFO a profiled shell command blocks on (`waitCommand()`) until release() is called.
class Gate {
public:
    explicit Gate(const std::string& path);
    std::string waitCommand() const; ///< "read x < PATH"
    bool release();                  ///< false if nobody was waiting within 20 s

private:
    std::string m_path;
};

/// The uid of `nobody` (65534) and a way to run code as that user in a child process.
constexpr uid_t kNobody = 65534;
/// Runs fn in a forked child with uid/gid nobody and no supplementary groups; returns its
/// exit code (fn's return value, 0-128), or -1 if the child could not become nobody or was
/// killed by a signal.
int asNobody(const std::function<int()>& fn);
/// Starts fn as nobody in the background; stop() asks it to finish (it should poll stopFile).
class NobodyLoop {
public:
    NobodyLoop(const std::string& stopFile, const std::function<void()>& iteration);
    ~NobodyLoop();
    void stop();

private:
    std::string m_stopFile;
    pid_t m_pid = -1;
};

/// A tmpfs of `kib` KiB mounted at `path`; mounted() is false where mounting is not allowed.
class SmallTmpfs {
public:
    SmallTmpfs(const std::filesystem::path& path, long kib);
    ~SmallTmpfs();
    bool mounted() const { return m_mounted; }
    bool resize(long kib);

private:
    std::filesystem::path m_path;
    bool m_mounted = false;
};

/// Names in `folder`, sorted (hidden ones included).
std::vector<std::string> listing(const std::filesystem::path& folder);

/// Kilobytes a folder occupies (du -sk).
long diskKib(const std::filesystem::path& folder);

/// The pid of a running process whose command line holds every one of `words`, or -1.
pid_t findProcess(const std::vector<std::string>& words);

/// Number of lines of `text`.
int lineCount(const std::string& text);

/// Occurrences of `needle` in `text`.
int occurrences(const std::string& text, const std::string& needle);

} // namespace hpcprof::test::safety
