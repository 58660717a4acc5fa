#include "sim/host_probe.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

namespace mrct::sim {

namespace {
// The CPUs this process may run on; empty if the mask cannot be read.
std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}
}  // namespace

struct host_probe::impl {
    core::nanos period, floor;
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> wakeups{0};
    mutable std::mutex mu;
    std::vector<hold> holds;
    std::vector<int> cpus;
    std::vector<std::thread> threads;

    void note(clock::time_point due, core::nanos late, int cpu) {
        std::lock_guard lock(mu);
        if (holds.size() < k_max_holds) {
            holds.push_back({due, late, cpu});
            return;
        }
        auto shortest = std::min_element(holds.begin(), holds.end(),
                                         [](const hold& a, const hold& b) { return a.late < b.late; });
        if (late > shortest->late) {
            holds.erase(shortest);
            holds.push_back({due, late, cpu});
        }
    }

    void run(int cpu) {
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            // A CPU taken away since the mask was read: the thread runs
            // unpinned, and its holds say so.
            if (::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) != 0) cpu = -1;
        }
        // As the real-time driver does: no timer slack, or every wake-up
        // reads up to 50 us late.
        ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        auto due = clock::now() + period;
        while (!stopping.load(std::memory_order_relaxed)) {
            const auto ns = std::chrono::duration_cast<core::nanos>(due.time_since_epoch()).count();
            timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
            // steady_clock is CLOCK_MONOTONIC in libstdc++ on Linux.
            while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
            }
            const auto woke = clock::now();
            wakeups.fetch_add(1, std::memory_order_relaxed);
            const auto late = std::chrono::duration_cast<core::nanos>(woke - due);
            if (late > floor) note(due, late, cpu);
            // The next deadline from when it woke: one hold is one record, not
            // a run of catch-up wake-ups.
            due = std::max(due + period, woke + period);
        }
    }
};

host_probe::host_probe(core::nanos period, core::nanos floor) : impl_(std::make_unique<impl>()) {
    impl_->period = period;
    impl_->floor = floor;
    impl_->cpus = allowed_cpus();
    if (impl_->cpus.empty()) impl_->cpus.push_back(-1);
    for (int cpu : impl_->cpus) impl_->threads.emplace_back([m = impl_.get(), cpu] { m->run(cpu); });
}

host_probe::~host_probe() {
    impl_->stopping = true;
    for (auto& t : impl_->threads) t.join();
}

core::nanos host_probe::period() const { return impl_->period; }

std::vector<int> host_probe::cpus() const { return impl_->cpus; }

std::vector<host_probe::hold> host_probe::holds() const {
    std::lock_guard lock(impl_->mu);
    auto out = impl_->holds;
    std::sort(out.begin(), out.end(), [](const hold& a, const hold& b) { return a.due < b.due; });
    return out;
}

std::uint64_t host_probe::wakeups() const { return impl_->wakeups.load(); }

}  // namespace mrct::sim
