// SPDX-License-Identifier: MIT
#include "temp_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hpcprof::schema::tempfile {

std::string directory() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

std::string failure(int err) {
    return "temporary file in " + directory() + " (TMPDIR): " + std::strerror(err);
}

int named(const char* prefix, std::string& path) {
    std::string name = directory() + "/" + prefix + "-XXXXXX";
    std::vector<char> buf(name.begin(), name.end());
    buf.push_back('\0');
    const int fd = ::mkostemp(buf.data(), O_CLOEXEC); // mode 0600
    if (fd >= 0) path.assign(buf.data());
    return fd;
}

std::FILE* anonymous() {
    std::string path;
    const int fd = named("hpcprof-tmp", path);
    if (fd < 0) return nullptr;
    ::unlink(path.c_str());
    std::FILE* f = ::fdopen(fd, "w+b");
    if (!f) {
        const int e = errno;
        ::close(fd);
        errno = e;
    }
    return f;
}

} // namespace hpcprof::schema::tempfile
