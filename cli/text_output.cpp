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

#include "hpcprof/schema/file_io.hpp"
#include "hpcprof/schema/output_file.hpp"

namespace hpcprof::cli {

namespace {

/// A character device, FIFO or socket (following links): written in place, never replaced.
bool isStream(const std::string& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool writeAll(int fd, std::string_view text) { return schema::fileio::writeAll(fd, text.data(), text.size()); }

} // namespace

Status checkTextOutput(const std::string& path) {
    if (path.empty() || isStream(path)) return {};
    return schema::checkOutputPath(path, /*replace=*/true);
}

bool writeOutput(const std::string& path, const std::string& text, const char* command) {
    return writeOutputWith(path, [&](const OutputSink& sink) { return sink(text); }, command);
}

namespace {

/// `produce` into `fd`, then closed; the errno of the first failure (0: none).
int produceInto(int fd, const std::function<bool(const OutputSink&)>& produce) {
    int err = 0;
    const bool ok = fd >= 0 && produce([&](std::string_view piece) {
        if (writeAll(fd, piece)) return true;
        err = errno;
        return false;
    });
    if (fd < 0) err = errno;
    else if (!ok && err == 0) err = EIO; // produce failed without a write failing
    if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
    return err;
}

} // namespace

bool writeOutputWith(const std::string& path, const std::function<bool(const OutputSink&)>& produce,
                     const char* command) {
    if (path.empty()) {
        std::fflush(stdout);
        const bool ok = produce([](std::string_view piece) {
            return std::fwrite(piece.data(), 1, piece.size(), stdout) == piece.size();
        });
        std::fflush(stdout);
        if (!ok) printMessage(command, "cannot write to stdout");
        return ok;
    }
    if (isStream(path)) {
        const int err = produceInto(::open(path.c_str(), O_WRONLY | O_CLOEXEC), produce);
        if (err) printMessage(command, "cannot write " + path + ": " + std::strerror(err));
        return err == 0;
    }
    auto pending = schema::PendingOutput::begin(path, /*replace=*/true);
    if (!pending) {
        printMessage(command, pending.status().message());
        return false;
    }
    const int err = produceInto(
        ::open(pending->path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666), produce);
    if (err) {
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
