#include "sim/host_probe.h"

#include "sim/priority.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
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

// Sleeps to an absolute deadline on the steady clock (CLOCK_MONOTONIC in
// libstdc++ on Linux), through signals.
void sleep_until(host_probe::clock::time_point due) {
    const auto ns = std::chrono::duration_cast<core::nanos>(due.time_since_epoch()).count();
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

}  // namespace

namespace {

// schedstat: "time on CPU (ns) time waiting on a run queue (ns) timeslices".
std::optional<host_probe::dut_thread> read_schedstat(int fd) {
    char buf[128];
    const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return std::nullopt;
    buf[n] = 0;
    char* end = nullptr;
    const auto ran = std::strtoull(buf, &end, 10);
    if (end == buf) return std::nullopt;
    const char* w = end;
    const auto waited = std::strtoull(w, &end, 10);
    if (end == w) return std::nullopt;
    return host_probe::dut_thread{ran, waited};
}

// stat: "TID (comm) S ...": the state follows the last ')' (a comm may hold
// spaces and parentheses).
std::optional<char> read_state(int fd) {
    char buf[512];
    const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return std::nullopt;
    buf[n] = 0;
    const char* close = std::strrchr(buf, ')');
    if (!close || close[1] != ' ' || close[2] == 0) return std::nullopt;
    return close[2];
}

// Whether a nohz_full= boot option took the tick from some CPU: read once
// per process (a boot option), not per case's probe.
bool read_nohz_full();
bool host_has_nohz_full() {
    static const bool has = read_nohz_full();
    return has;
}
bool read_nohz_full() {
    const int fd = ::open("/sys/devices/system/cpu/nohz_full", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[64];
    const auto n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    for (const char* c = buf; *c; ++c)
        if (*c >= '0' && *c <= '9') return true;
    return false;
}

// A DUT process's threads' accounting, from the kernel: each thread's
// /proc/PID/task/TID/schedstat, kept open and read from offset 0 each time
// (the kernel regenerates it); the threads listed again every k_relist reads
// (threads come and go rarely). A thread gone is dropped. Its stat (the
// state) is opened when first asked for.
class proc_waits {
public:
    explicit proc_waits(int pid) : dir_("/proc/" + std::to_string(pid) + "/task") {}
    ~proc_waits() {
        for (auto& [_, t] : fds_) {
            ::close(t.schedstat);
            if (t.stat >= 0) ::close(t.stat);
        }
    }
    proc_waits(const proc_waits&) = delete;
    proc_waits& operator=(const proc_waits&) = delete;
    std::map<int, host_probe::dut_thread> operator()() {
        if (n_++ % k_relist == 0) relist();
        std::map<int, host_probe::dut_thread> out;
        for (auto it = fds_.begin(); it != fds_.end();) {
            auto r = read_schedstat(it->second.schedstat);
            if (!r) {  // the thread is gone
                ::close(it->second.schedstat);
                if (it->second.stat >= 0) ::close(it->second.stat);
                it = fds_.erase(it);
                continue;
            }
            out[it->first] = *r;
            ++it;
        }
        return out;
    }
    std::optional<char> state(int tid) {
        const auto it = fds_.find(tid);
        if (it == fds_.end()) return std::nullopt;
        if (it->second.stat < 0) {
            const std::string f = dir_ + "/" + std::to_string(tid) + "/stat";
            it->second.stat = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
            if (it->second.stat < 0) return std::nullopt;
        }
        return read_state(it->second.stat);
    }

private:
    static constexpr unsigned k_relist = 400;  // 100 ms at 250 us
    void relist() {
        DIR* d = ::opendir(dir_.c_str());
        if (!d) return;
        while (auto* e = ::readdir(d)) {
            const int tid = std::atoi(e->d_name);
            if (tid <= 0 || fds_.count(tid)) continue;
            const std::string f = dir_ + "/" + e->d_name + "/schedstat";
            const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd >= 0) fds_[tid] = {fd, -1};
        }
        ::closedir(d);
    }
    struct files {
        int schedstat, stat;
    };
    std::string dir_;
    std::map<int, files> fds_;
    unsigned n_ = 0;
};

// The "some" line's total of /proc/pressure/cpu, in microseconds: "some
// avg10=0.27 avg60=1.45 avg300=15.04 total=2579257145".
std::optional<std::uint64_t> read_some_total(int fd) {
    char buf[256];
    const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return std::nullopt;
    buf[n] = 0;
    if (std::strncmp(buf, "some ", 5) != 0) return std::nullopt;
    const char* t = std::strstr(buf, "total=");
    const char* eol = std::strchr(buf, '\n');
    if (!t || (eol && t > eol)) return std::nullopt;
    char* end = nullptr;
    const auto v = std::strtoull(t + 6, &end, 10);
    if (end == t + 6) return std::nullopt;
    return v;
}

}  // namespace

struct host_probe::impl {
    core::nanos period, floor, dut_floor;
    std::atomic<bool> dut_seen{false};
    std::atomic<bool> pressure_seen{false};
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> wakeups{0};
    mutable std::mutex mu;
    std::vector<hold> holds;
    // The run of stalled periods the pressure sampler is in, if any: a
    // hold already, though it may grow (holds() includes it). Read at a
    // case's end while the host is still stalled, it would otherwise be
    // missing, and the stall with it.
    std::optional<hold> open_run;
    // The DUT's threads' waits in progress at the latest read (sample_dut).
    std::vector<hold> open_waits;
    // Each sleeper's next deadline and CPU (zero: not sleeping): one past its
    // deadline by more than the floor is held now (holds()).
    struct sleeper {
        clock::time_point due{};
        int cpu = -1;
    };
    std::vector<sleeper> sleeping;
    core::nanos open_floor = k_open_floor;
    std::vector<int> cpus;
    std::vector<std::thread> threads;

    void note_locked(clock::time_point due, core::nanos late, int cpu, core::nanos err = core::nanos{0}) {
        if (holds.size() < k_max_holds) {
            holds.push_back({due, late, cpu, err});
            return;
        }
        auto shortest = std::min_element(holds.begin(), holds.end(),
                                         [](const hold& a, const hold& b) { return a.late < b.late; });
        if (late > shortest->late) {
            holds.erase(shortest);
            holds.push_back({due, late, cpu, err});
        }
    }

    // What the sampler knows of one DUT thread between reads.
    struct dut_track {
        dut_thread at;  // its accounting at the last read
        // When it last ran, as far as the reads tell: at the latest read that
        // found its accounting moved (or its first read).
        clock::time_point ran_seen;
        // The latest moment it is known not to have been waiting: the read
        // before the one that found it had run (it may have waited again
        // right after running), or a later read of its state as not runnable.
        clock::time_point settled;
        std::optional<clock::time_point> runnable;  // first read as runnable since it last ran
        clock::time_point state_read{};             // when its state was last read
    };

    // The DUT's threads' waits, read from `source` each period after the
    // baseline `last` read at `last_read` (by the constructor: on the caller's
    // thread, before the case's traffic, so a wait that ended before this
    // thread first ran still shows). Each period the largest growth of one
    // thread's wait (threads wait in parallel); and each period the waits
    // still in progress (open_floor, in the header), replaced.
    void sample_dut(const dut_source& source, const std::map<int, dut_thread>& baseline, clock::time_point last_read) {
        become_ordinary();
        ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        std::map<int, dut_track> tracks;
        for (const auto& [tid, r] : baseline) tracks[tid] = {r, last_read, last_read, std::nullopt, last_read};
        if (!tracks.empty()) dut_seen = true;
        auto due = last_read + period;
        while (!stopping.load(std::memory_order_relaxed)) {
            sleep_until(due);
            auto cur = source.read();
            const auto now = clock::now();
            std::uint64_t most = 0;
            unsigned state_budget = k_state_reads;
            std::vector<hold> open;
            for (auto it = tracks.begin(); it != tracks.end();)  // a thread gone
                it = cur.count(it->first) ? std::next(it) : tracks.erase(it);
            for (const auto& [tid, r] : cur) {
                const auto was = tracks.find(tid);
                if (was == tracks.end()) {  // a thread new since: its first reading is its baseline
                    tracks[tid] = {r, now, now, std::nullopt, now};
                    continue;
                }
                auto& t = was->second;
                most = std::max(most, r.waited - std::min(r.waited, t.at.waited));
                if (r.ran != t.at.ran || r.waited != t.at.waited) {
                    // It ran since the read before (a wait ends when it runs).
                    t.ran_seen = now;
                    t.settled = last_read;
                    t.runnable.reset();
                } else if (source.state && !t.runnable && now - t.state_read >= k_state_every && state_budget > 0) {
                    --state_budget;
                    t.state_read = now;
                    const auto st = source.state(tid);
                    if (st && *st == 'R')
                        t.runnable = now;
                    else
                        t.settled = now;
                }
                t.at = r;
                if (t.runnable && now - t.ran_seen >= open_floor && now - *t.runnable > dut_floor)
                    open.push_back({*t.runnable, now - *t.runnable, k_dut_wait, *t.runnable - t.settled});
            }
            if (!cur.empty()) dut_seen = true;
            // The kernel adds a wait when it ends (the thread runs again): it
            // ended since the last read. Placed to end now, it may have ended
            // up to the time since that read earlier: the probe's period, or
            // longer when this thread was itself held (beside stress-ng it
            // may not run for milliseconds).
            const core::nanos waited{static_cast<std::int64_t>(most)};
            {
                std::lock_guard lock(mu);
                if (waited > dut_floor) note_locked(now - waited, waited, k_dut_wait, now - last_read);
                open_waits = std::move(open);
            }
            last_read = now;
            due = std::max(due + period, now);
        }
    }

    // The host's CPU pressure: consecutive stalled periods make one hold,
    // placed to end when the last of them was read.
    // `last`: the baseline, read by the constructor (as the DUT's waits').
    void sample_pressure(const pressure_source& read_total, std::optional<std::uint64_t> last) {
        become_ordinary();
        ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        if (last) pressure_seen = true;
        core::nanos run{0};
        clock::time_point run_end{};
        auto flush = [&] {
            std::lock_guard lock(mu);
            if (run > core::nanos{0}) note_locked(run_end - run, run, k_host_pressure);
            open_run.reset();
            run = core::nanos{0};
        };
        auto due = clock::now() + period;  // a period after the baseline
        sleep_until(due);
        while (!stopping.load(std::memory_order_relaxed)) {
            const auto now = clock::now();
            if (auto t = read_total()) {
                if (last) {
                    const core::nanos grew{static_cast<std::int64_t>((*t - std::min(*t, *last)) * 1000)};
                    if (grew > k_pressure_floor) {
                        run += grew;
                        run_end = now;
                        std::lock_guard lock(mu);
                        open_run = hold{run_end - run, run, k_host_pressure};
                    } else {
                        flush();
                    }
                }
                last = t;
                pressure_seen = true;
            }
            due = std::max(due + period, now);
            sleep_until(due);
        }
        flush();
    }
    void run(int cpu, std::size_t i) {
        // A sleeper stands for a DUT at ordinary priority: not at the
        // engine's, which --priority may have raised (D76).
        become_ordinary();
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
        {
            std::lock_guard lock(mu);
            sleeping[i] = {due, cpu};
        }
        while (!stopping.load(std::memory_order_relaxed)) {
            sleep_until(due);
            wakeups.fetch_add(1, std::memory_order_relaxed);
            {
                // The clock read under the lock: a reading of the hold in
                // progress (holds(), under it too) is then never longer than
                // the hold kept (a reading between this thread's clock and
                // its lock was, under ASan in CI).
                std::lock_guard lock(mu);
                const auto woke = clock::now();
                const auto late = std::chrono::duration_cast<core::nanos>(woke - due);
                if (late > floor) note_locked(due, late, cpu);
                // The next deadline from when it woke: one hold is one record,
                // not a run of catch-up wake-ups.
                due = std::max(due + period, woke + period);
                sleeping[i] = {due, cpu};  // with the note: a hold is either in progress or kept, never both
            }
        }
        std::lock_guard lock(mu);
        sleeping[i] = {};
    }
};

host_probe::host_probe(core::nanos period, core::nanos floor, int dut_pid, bool pressure, core::nanos dut_floor)
    : impl_(std::make_unique<impl>()) {
    impl_->period = period;
    impl_->floor = floor;
    impl_->dut_floor = dut_floor;
    if (dut_pid > 0) {
        // The sampler's thread alone reads through it once started (the
        // baseline is read before it starts).
        auto reader = std::make_shared<proc_waits>(dut_pid);
        if (host_has_nohz_full()) impl_->open_floor = k_open_floor_nohz_full;
        start_dut({[reader] { return (*reader)(); }, [reader](int tid) { return reader->state(tid); }});
    } else if (pressure) {
        // The kernel's pressure, if this kernel has PSI (else
        // pressure_sampled() stays false and says so).
        const int fd = ::open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            auto fd_owner = std::shared_ptr<int>(new int(fd), [](int* f) {
                ::close(*f);
                delete f;
            });
            start_pressure([fd_owner] { return read_some_total(*fd_owner); });
        }
    }
    start_sleepers();
}

host_probe::host_probe(core::nanos period, core::nanos floor, dut_source source, core::nanos open_floor)
    : impl_(std::make_unique<impl>()) {
    impl_->period = period;
    impl_->floor = floor;
    impl_->dut_floor = k_dut_floor;
    impl_->open_floor = open_floor;
    start_dut(std::move(source));
    start_sleepers();
}

void host_probe::start_pressure(pressure_source read) {
    auto baseline = read();  // now, as the DUT's waits' (start_dut)
    impl_->threads.emplace_back([m = impl_.get(), r = std::move(read), baseline] { m->sample_pressure(r, baseline); });
}

void host_probe::start_dut(dut_source source) {
    // The baseline now, on the caller's thread: the sampler's first read may
    // come milliseconds later on a loaded host (CONN-007 beside stress-ng: a
    // 970 us wait of mrct-refnic ended before it, and went unseen).
    auto baseline = source.read();
    const auto at = clock::now();
    impl_->threads.emplace_back([m = impl_.get(), src = std::move(source), b = std::move(baseline), at] {
        m->sample_dut(src, b, at);
    });
}

host_probe::host_probe(core::nanos period, core::nanos floor, pressure_source source) : impl_(std::make_unique<impl>()) {
    impl_->period = period;
    impl_->floor = floor;
    impl_->dut_floor = k_dut_floor;
    start_pressure(std::move(source));
    start_sleepers();
}

void host_probe::start_sleepers() {
    impl_->cpus = allowed_cpus();
    if (impl_->cpus.empty()) impl_->cpus.push_back(-1);
    impl_->sleeping.resize(impl_->cpus.size());  // before any sleeper runs
    for (std::size_t i = 0; i < impl_->cpus.size(); ++i)
        impl_->threads.emplace_back([m = impl_.get(), cpu = impl_->cpus[i], i] { m->run(cpu, i); });
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
    if (impl_->open_run) out.push_back(*impl_->open_run);
    // A sleeper not yet woken long past its deadline: a hold in progress (a
    // case read at the end of a host's stall would otherwise miss it).
    const auto now = clock::now();
    for (const auto& s : impl_->sleeping)
        if (s.due != clock::time_point{} && now - s.due > impl_->floor) out.push_back({s.due, now - s.due, s.cpu});
    out.insert(out.end(), impl_->open_waits.begin(), impl_->open_waits.end());
    std::sort(out.begin(), out.end(), [](const hold& a, const hold& b) { return a.due < b.due; });
    return out;
}

std::uint64_t host_probe::wakeups() const { return impl_->wakeups.load(); }

bool host_probe::dut_sampled() const { return impl_->dut_seen.load(); }

bool host_probe::pressure_sampled() const { return impl_->pressure_seen.load(); }

}  // namespace mrct::sim
