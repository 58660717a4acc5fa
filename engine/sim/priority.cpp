#include "sim/priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <optional>

namespace mrct::sim {

namespace {

// The process's scheduling before apply_priority raised it (for
// become_ordinary); `raised` false: nothing to undo.
std::atomic<bool> g_raised{false};
std::atomic<int> g_nice{0};

int this_tid() { return static_cast<int>(::syscall(SYS_gettid)); }

// On Linux, setpriority(PRIO_PROCESS, tid) sets one thread's nice value.
int thread_nice() {
    errno = 0;
    const int n = ::getpriority(PRIO_PROCESS, static_cast<id_t>(this_tid()));
    return errno ? 0 : n;
}

// N in [lo, hi], written as at most 4 characters: decimal digits with an optional sign.
std::optional<int> bounded_int(std::string_view s, int lo, int hi) {
    if (s.size() > 4) return std::nullopt;
    if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);  // from_chars takes no '+'
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

}  // namespace

core::result<priority> parse_priority(std::string_view text) {
    const std::string usage = "expected off, nice:N (N from -20 to 19) or fifo:N (N from 1 to 99), got '" +
                              std::string(text) + "'";
    if (text == "off") return priority{};
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return core::error{usage};
    const auto what = text.substr(0, colon), num = text.substr(colon + 1);
    if (what == "nice") {
        if (auto v = bounded_int(num, -20, 19)) return priority{priority::kind::nice, *v};
    } else if (what == "fifo") {
        if (auto v = bounded_int(num, 1, 99)) return priority{priority::kind::fifo, *v};
    }
    return core::error{usage};
}

std::string apply_priority(const priority& p) {
    const int was = thread_nice();
    const std::string ordinary = "ordinary (nice " + std::to_string(was) + ")";
    if (p.k == priority::kind::off) return ordinary;
    if (p.k == priority::kind::nice) {
        if (p.value == was) return ordinary;
        if (::setpriority(PRIO_PROCESS, static_cast<id_t>(this_tid()), p.value) != 0)
            return ordinary + ": could not set nice " + std::to_string(p.value) + ": " + std::strerror(errno);
        g_nice = was;
        g_raised = true;
        return "nice " + std::to_string(p.value) + " (was " + std::to_string(was) + ")";
    }
    sched_param sp{};
    sp.sched_priority = p.value;
    if (::sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
        return ordinary + ": could not set SCHED_FIFO " + std::to_string(p.value) + ": " + std::strerror(errno);
    g_nice = was;
    g_raised = true;
    return "SCHED_FIFO " + std::to_string(p.value) + " (was SCHED_OTHER, nice " + std::to_string(was) + ")";
}

void become_ordinary() {
    if (!g_raised) return;
    sched_param sp{};
    sp.sched_priority = 0;
    (void)::sched_setscheduler(0, SCHED_OTHER, &sp);  // this thread (Linux: sched_setscheduler(0) is per thread)
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(this_tid()), g_nice.load());
}

}  // namespace mrct::sim
