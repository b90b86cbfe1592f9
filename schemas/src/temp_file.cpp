// SPDX-License-Identifier: MIT
#include "temp_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace hpcprof::schema::tempfile {

int named(const char* prefix, std::string& path) {
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/" + prefix + "-XXXXXX";
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
