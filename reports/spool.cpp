// Case entries spooled to disk as a run goes (reports.h: case_spool).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "reports/reports.h"

namespace mrct::reports {

namespace {

// What the summaries, the failure list, the traceability table and JUnit's
// totals read; everything else stays on disk until the entry is written.
constexpr const char* k_digest_keys[] = {"order", "id", "title", "area", "level", "verdict", "clauses", "reason", "wall_s"};

}  // namespace

core::result<case_spool> case_spool::create(const std::string& dir) {
    std::string name = dir + "/.mrct-cases-XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) return core::error{"cannot make a spool file in " + dir + ": " + std::strerror(errno)};
    // Unlinked at once: the entries live as long as the descriptor, and a run
    // that is killed leaves no file behind.
    ::unlink(name.c_str());
    return case_spool(dir, fd);
}

case_spool::case_spool(case_spool&& o) noexcept
    : dir_(std::move(o.dir_)), fd_(std::exchange(o.fd_, -1)), end_(o.end_), items_(std::move(o.items_)) {}

case_spool::~case_spool() {
    if (fd_ >= 0) ::close(fd_);
}

core::status case_spool::add(json raw) {
    const json e = valid_utf8(std::move(raw));
    const std::string line = e.dump() + "\n";
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::pwrite(fd_, line.data() + done, line.size() - done, static_cast<off_t>(end_ + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return core::error{"cannot keep case " + e.value("id", std::string()) + " in the spool file in " + dir_ + ": " + std::strerror(errno)};
        done += static_cast<std::size_t>(n);
    }
    item it{end_, line.size(), json::object()};
    end_ += line.size();
    for (const char* k : k_digest_keys)
        if (e.contains(k)) it.digest[k] = e[k];
    // Cases end out of order with several jobs: kept in plan order as they come.
    const auto order = it.digest.value("order", std::size_t{0});
    auto at = std::upper_bound(items_.begin(), items_.end(), order,
                               [](std::size_t o, const item& x) { return o < x.digest.value("order", std::size_t{0}); });
    items_.insert(at, std::move(it));
    return core::ok_status();
}

core::result<json> case_spool::entry(std::size_t i) const {
    const auto& it = items_.at(i);
    std::string line(it.length, '\0');
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::pread(fd_, line.data() + done, line.size() - done, static_cast<off_t>(it.offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return core::error{"cannot read back case " + it.digest.value("id", std::string()) + " from the spool file in " + dir_ + ": " +
                                       (n == 0 ? std::string("it is shorter than written") : std::string(std::strerror(errno)))};
        done += static_cast<std::size_t>(n);
    }
    try {
        return json::parse(line);
    } catch (const std::exception& ex) {
        return core::error{"case " + it.digest.value("id", std::string()) + " in the spool file in " + dir_ + " does not read back: " + ex.what()};
    }
}

}  // namespace mrct::reports
