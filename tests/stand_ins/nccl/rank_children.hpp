// SPDX-License-Identifier: MIT
// The launcher half of the stand-in NCCL programs that start their ranks as child processes.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <vector>

/// Waits for every rank; the worst exit code (a rank killed by signal S counts 128 + S).
inline int waitForRanks(const std::vector<pid_t>& pids) {
    int worst = 0;
    for (pid_t p : pids) {
        int status = 0;
        waitpid(p, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code > worst) worst = code;
    }
    return worst;
}
