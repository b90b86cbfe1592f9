// SPDX-License-Identifier: MIT
#include "process_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hpcprof::test {

namespace fs = std::filesystem;

ProcessResult runProcess(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extraEnv, const std::string& stdinText) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execInChild(argv, extraEnv);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (!stdinText.empty()) {
        ssize_t ignored = write(in[1], stdinText.data(), stdinText.size());
        (void)ignored;
    }
    close(in[1]);
    ProcessResult r;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open = 2;
    char buf[65536];
    while (open > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(fds[i].fd, buf, sizeof(buf));
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            } else {
                (i == 0 ? r.out : r.err).append(buf, size_t(n));
            }
        }
    }
    r.exitCode = waitForExit(pid);
    return r;
}

void execInChild(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnv) {
    for (const auto& e : extraEnv) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
}

int waitForExit(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int runInChild(const std::function<int()>& body) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        try {
            _exit(body());
        } catch (...) { // a failed REQUIRE: the child must not go on running the parent's tests
            _exit(126);
        }
    }
    return waitForExit(pid);
}

TempDir::TempDir() {
    std::string templ = (fs::temp_directory_path() / "hpcprof-test-XXXXXX").string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    m_path = templ;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
}

std::string readWholeFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string hpcprofBinary() { return HPCPROF_TEST_BUILD_DIR "/bin/hpcprof"; }
std::string agentLibrary() { return HPCPROF_TEST_BUILD_DIR "/lib/libhpcprof.so"; }
std::string sampleBinary(const std::string& name) {
    return HPCPROF_TEST_BUILD_DIR "/samples/" + name;
}

const std::vector<std::string> kMpiTestEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                              "OMPI_MCA_mpi_yield_when_idle=1",
                                              "OMPI_MCA_rmaps_base_oversubscribe=1"};

bool haveMpirun() { return runProcess({"sh", "-c", "command -v mpirun"}).exitCode == 0; }

ProcessResult runSampleUnderMpirun(const std::string& trace, int ranks, const std::string& sample) {
    return runProcess({hpcprofBinary(), "run", "-o", trace, "--", "mpirun", "-np", std::to_string(ranks),
                       sampleBinary(sample)},
                      kMpiTestEnv);
}

} // namespace hpcprof::test
