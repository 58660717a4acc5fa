// Atomic file writing for the run's outputs (the writers themselves: reports/).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "run/results.h"

namespace mrct::run {

void on_incomplete_record(assertion_result& a, const std::string& lost) {
    if (a.o.v != verdict::pass && a.o.v != verdict::fail) return;
    a.o.message = lost + ": the trace is incomplete; it would have said " + std::string(assertions::verdict_name(a.o.v)) +
                  ": " + a.o.message;
    a.o.v = verdict::inconclusive;
    a.o.timing_doubt = true;
}

core::result<atomic_file> atomic_file::open(const std::string& path) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return core::error{"cannot write " + path + ": " + std::strerror(errno)};
    return atomic_file(path, fd);
}

atomic_file::atomic_file(atomic_file&& o) noexcept : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)) {}

atomic_file::~atomic_file() {
    if (fd_ < 0) return;
    ::close(fd_);
    ::unlink((path_ + ".tmp").c_str());
}

// What failed ("cannot write PATH: reason"), with the system's reason read
// first; the file is closed if still open and the partial .tmp removed.
core::error atomic_file::fail(const std::string& what) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    ::unlink((path_ + ".tmp").c_str());
    return core::error{what + " " + path_ + ": " + why};
}

core::status atomic_file::write(std::string_view text) {
    if (fd_ < 0) return core::error{"cannot write " + path_ + ": already closed"};
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("cannot write");
        done += static_cast<std::size_t>(n);
    }
    return core::ok_status();
}

core::status atomic_file::commit() {
    if (fd_ < 0) return core::error{"cannot write " + path_ + ": already closed"};
    if (::fsync(fd_) != 0 && errno != EINVAL) return fail("cannot write");  // a full disk can show only here
    const std::string tmp = path_ + ".tmp";
    if (::close(std::exchange(fd_, -1)) != 0) return fail("cannot write");
    if (::rename(tmp.c_str(), path_.c_str()) != 0) return fail("cannot rename " + tmp + " to");
    return core::ok_status();
}

core::status write_file_atomic(const std::string& path, const std::string& text) {
    auto f = atomic_file::open(path);
    if (!f) return f.err();
    if (auto st = f->write(text); !st) return st;
    return f->commit();
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
