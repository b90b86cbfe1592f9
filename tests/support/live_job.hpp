// SPDX-License-Identifier: MIT
// A job left running for `hpcprof status` and then ended by a signal (the hang tests): start it
// in the background, poll its status until a condition holds, pick a rank's entry.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"

namespace hpcprof::test {

/// Starts `argv` with its output into `log` and `env` ("NAME=value") added; its pid.
inline pid_t startProcess(const std::vector<std::string>& argv, const std::string& log,
                          const std::vector<std::string>& env = {}) {
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        execInChild(argv, env);
    }
    return pid;
}

/// `hpcprof status RAWDIR --json` until `ready(doc)` holds (at most 40 s); the last document.
template <typename Ready>
nlohmann::json statusUntil(const std::string& rawDir, Ready&& ready) {
    nlohmann::json doc;
    for (int i = 0; i < 400; ++i) {
        auto st = runProcess({hpcprofBinary(), "status", rawDir, "--json"});
        if (st.exitCode == 0) {
            doc = nlohmann::json::parse(st.out, nullptr, false);
            if (!doc.is_discarded() && ready(doc)) return doc;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return doc;
}

/// The status entry of rank `r` in `doc`, or null.
inline nlohmann::json statusOf(const nlohmann::json& doc, int r) {
    if (doc.is_array())
        for (const auto& p : doc)
            if (p["rank"] == r) return p;
    return nullptr;
}

} // namespace hpcprof::test
