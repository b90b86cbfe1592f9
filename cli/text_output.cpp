// SPDX-License-Identifier: MIT
#include "text_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "messages.hpp"

#include "hpcprof/schema/output_file.hpp"

namespace hpcprof::cli {

namespace {

/// A character device, FIFO or socket (following links): written in place, never replaced.
bool isStream(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool writeAll(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

} // namespace

Status checkTextOutput(const std::string& path) {
    if (path.empty() || isStream(path)) return {};
    return schema::checkOutputPath(path, /*replace=*/true);
}

bool writeOutput(const std::string& path, const std::string& text, const char* command) {
    if (path.empty()) {
        fmt::print("{}", text);
        std::fflush(stdout);
        return true;
    }
    if (isStream(path)) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        bool ok = fd >= 0 && writeAll(fd, text);
        int err = errno;
        if (fd >= 0 && ::close(fd) != 0 && ok) {
            ok = false;
            err = errno;
        }
        if (!ok) printMessage(command, "cannot write " + path + ": " + std::strerror(err));
        return ok;
    }
    auto pending = schema::PendingOutput::begin(path, /*replace=*/true);
    if (!pending) {
        printMessage(command, pending.status().message());
        return false;
    }
    int fd = ::open(pending->path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0666);
    bool ok = fd >= 0 && writeAll(fd, text);
    int err = errno;
    if (fd >= 0 && ::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        printMessage(command, "cannot write " + path + ": " + std::strerror(err));
        return false; // the pending output removes the partial file
    }
    if (Status s = pending->commit(); !s.ok()) {
        printMessage(command, s.message());
        return false;
    }
    return true;
}

} // namespace hpcprof::cli
