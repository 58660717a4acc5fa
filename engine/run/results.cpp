// Atomic file writing for the run's outputs (the writers themselves: reports/).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "run/runner.h"

namespace mrct::run {

core::status write_file_atomic(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return core::error{"cannot write " + path + ": " + std::strerror(errno)};
    // What failed, with the system's reason (a full disk: "No space left on
    // device"); the partial file is removed, the previous `path` kept.
    auto fail = [&](const char* what) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        ::unlink(tmp.c_str());
        return core::error{std::string(what) + " " + path + ": " + why};
    };
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("cannot write");
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL) return fail("cannot write");  // a full disk can show only here
    if (::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return core::error{"cannot write " + path + ": " + why};
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return core::error{"cannot rename " + tmp + " to " + path + ": " + why};
    }
    return core::ok_status();
}

core::status check_output_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        return core::error{"output folder " + dir + ": a file of that name is in the way"};
    fs::create_directories(dir, ec);
    if (ec) return core::error{"output folder " + dir + ": cannot create it: " + ec.message()};
    const std::string probe = (fs::path(dir) / ".mrct-write-check").string();
    if (auto st = write_file_atomic(probe, "mrct checks that it can write here\n"); !st)
        return core::error{"output folder " + dir + " is not writable (" + st.err().message + ")"};
    ::unlink(probe.c_str());
    return core::ok_status();
}

}  // namespace mrct::run
