// The host probe: a thread that keeps the wake-ups the host delayed beyond
// its floor. Nothing here depends on how loaded the machine is: with a floor
// of zero every wake-up is late by something (it comes after its deadline),
// so every one is kept, in order.
#include <catch2/catch.hpp>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "sim/host_probe.h"

using namespace mrct;
using namespace std::chrono_literals;

namespace {

// More spinning threads than CPUs: each is runnable and not run part of the
// time, until stop() or the end of the scope.
class spinners {
public:
    spinners() {
        const unsigned n = std::thread::hardware_concurrency() + 2;
        for (unsigned i = 0; i < n; ++i)
            threads_.emplace_back([this] {
                while (!stop_.load(std::memory_order_relaxed)) {
                }
            });
    }
    ~spinners() { stop(); }
    void stop() {
        stop_ = true;
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE("host_probe keeps each wake-up later than its floor, in order of deadline") {
    std::vector<sim::host_probe::hold> holds;
    std::uint64_t wakeups = 0;
    std::size_t sleepers = 0;
    {
        sim::host_probe probe(100us, 0ns);
        CHECK(probe.period() == 100us);
        sleepers = probe.cpus().size();
        while (probe.wakeups() < 5) std::this_thread::sleep_for(1ms);
        holds = probe.holds();
        wakeups = probe.wakeups();
    }  // the destructor stops and joins the thread
    REQUIRE(holds.size() >= 5);
    // One hold per wake-up, and at most one in progress per sleeper (a
    // sleeper past its deadline, not yet woken): on 2 CPUs, 15 holds against
    // 14 wake-ups (a CI run of ebd54ba).
    CHECK(holds.size() <= wakeups + sleepers);
    std::map<int, sim::host_probe::clock::time_point> last;  // per CPU: each thread keeps its own deadlines
    for (std::size_t i = 0; i < holds.size(); ++i) {
        CHECK(holds[i].late > 0ns);
        if (i) CHECK(holds[i].due >= holds[i - 1].due);  // merged in order of deadline
        if (auto it = last.find(holds[i].cpu); it != last.end())
            CHECK(holds[i].due - it->second >= 100us);  // one record per hold, no catch-up run
        last[holds[i].cpu] = holds[i].due;
    }
}

TEST_CASE("host_probe sleeps on every CPU the engine may run on, one thread pinned to each") {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    std::vector<int> allowed;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) allowed.push_back(c);
    sim::host_probe probe(100us, 0ns);
    CHECK(probe.cpus() == allowed);
    // With a floor of zero every wake-up is kept: each CPU's thread shows up
    // under its own CPU, so a hold names where it happened.
    std::map<int, int> seen;
    for (int i = 0; i < 10000 && seen.size() < allowed.size(); ++i) {  // a bound, not a timing: ~1 ms each
        std::this_thread::sleep_for(1ms);
        seen.clear();
        for (const auto& h : probe.holds()) ++seen[h.cpu];
    }
    for (int c : allowed) CHECK(seen.count(c) == 1);
}

TEST_CASE("host_probe with a floor above any plausible hold keeps nothing") {
    sim::host_probe probe(100us, std::chrono::hours(1));
    while (probe.wakeups() < 3) std::this_thread::sleep_for(1ms);
    CHECK(probe.holds().empty());
}

// The DUT's own waits for a CPU, from the kernel's accounting of its threads:
// here this test process is the "DUT", made to wait by more spinning threads
// than there are CPUs (each is runnable and not run part of the time).
TEST_CASE("host_probe reads a DUT process's waits for a CPU from its schedstat") {
    sim::host_probe probe(250us, 0ns, ::getpid());
    spinners spin;
    bool waited = false;
    for (int i = 0; i < 5000 && !waited; ++i) {  // a bound, not a timing
        std::this_thread::sleep_for(1ms);
        for (const auto& h : probe.holds()) waited = waited || (h.cpu == sim::host_probe::k_dut_wait && h.late > 0ns);
    }
    spin.stop();
    CHECK(probe.dut_sampled());
    CHECK(waited);
}

// The DUT's waits have their own floor (k_dut_floor, below the sleepers'):
// an ACK timer held 190 us must show. A sleepers' floor of an hour does not
// hide them; a DUT floor of an hour keeps none.
TEST_CASE("host_probe keeps the DUT's waits by their own floor, apart from the sleepers'") {
    STATIC_REQUIRE(sim::host_probe::k_dut_floor < sim::host_probe::k_floor);
    auto dut_waits = [](const sim::host_probe& p) {
        std::size_t n = 0;
        for (const auto& h : p.holds()) n += h.cpu == sim::host_probe::k_dut_wait;
        return n;
    };
    sim::host_probe kept(250us, std::chrono::hours(1), ::getpid());
    sim::host_probe none(250us, std::chrono::hours(1), ::getpid(), false, std::chrono::hours(1));
    spinners spin;
    // Both probes must have read the DUT before the checks: `none` reads on
    // its own thread, and under ASan beside a loaded host its first read
    // came after `kept` had its wait (.ci/run, 2026-12-06).
    for (int i = 0; i < 5000 && (dut_waits(kept) == 0 || !none.dut_sampled()); ++i)
        std::this_thread::sleep_for(1ms);  // a bound, not a timing
    spin.stop();
    CHECK(dut_waits(kept) > 0);
    CHECK(none.dut_sampled());
    CHECK(dut_waits(none) == 0);
    for (const auto& h : kept.holds()) CHECK(h.cpu == sim::host_probe::k_dut_wait);  // no sleeper's hold passed its hour
}

TEST_CASE("host_probe with a DUT process that does not exist samples nothing and keeps probing") {
    sim::host_probe probe(100us, 0ns, 4194303);
    while (probe.wakeups() < 3) std::this_thread::sleep_for(1ms);
    CHECK_FALSE(probe.dut_sampled());
    for (const auto& h : probe.holds()) CHECK(h.cpu != sim::host_probe::k_dut_wait);
}

// Where the DUT's process is not named (no pid=), the host's CPU pressure
// (PSI "some") stands for its waits (D95): more spinning threads than CPUs
// keep some task waiting all the time.
TEST_CASE("host_probe reads the host's CPU pressure where the DUT's process is not named") {
    if (::access("/proc/pressure/cpu", R_OK) != 0) {
        sim::host_probe probe(250us, 0ns, 0, true);
        while (probe.wakeups() < 3) std::this_thread::sleep_for(1ms);
        CHECK_FALSE(probe.pressure_sampled());  // a kernel without PSI: said, nothing made up
        return;
    }
    sim::host_probe probe(250us, 0ns, 0, true);
    auto stalled = [&] {
        for (const auto& h : probe.holds())
            if (h.cpu == sim::host_probe::k_host_pressure && h.late > 0ns) return true;
        return false;
    };
    // Spin until the stall shows (the kernel's pressure figures come in
    // bursts on some hosts: a fixed 50 ms spin was seen unread, once in 6
    // runs on this project's VM), then stop: the run, ended, stays kept.
    spinners spin;
    for (int i = 0; i < 5000 && !stalled(); ++i) std::this_thread::sleep_for(1ms);  // a bound, not a timing
    spin.stop();
    for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(1ms);
    CHECK(probe.pressure_sampled());
    CHECK(stalled());
    CHECK_FALSE(probe.dut_sampled());
}

// A case ends while the host is still stalled: its judge reads the holds
// with the stall still going on. The stall is in them as far as it went.
// The pressure comes from a source that grows 1 ms at every read, so the
// stall never ends while the test looks: only the run in progress can show.
// The DUT's waits: the baseline is read by the constructor, on the caller's
// thread, so a wait that ends before the sampler's thread first runs (beside
// stress-ng that took over 1 ms: CONN-007's 970 us wait went unseen) still
// shows; and a wait read late carries how late (err: the time since the read
// before), since it may have ended that much earlier.
TEST_CASE("host_probe: the DUT's waits count from the constructor's read, each with its read gap") {
    std::atomic<int> reads{0};
    std::atomic<bool> ended{false};
    std::thread::id baseline_reader;
    sim::host_probe probe(250us, std::chrono::hours(1), sim::host_probe::dut_source{[&] {
                              const int n = ++reads;
                              if (n == 1) baseline_reader = std::this_thread::get_id();
                              if (n == 2) {  // the sampler's first read: after the wait ended, and held
                                  for (int i = 0; i < 5000 && !ended; ++i)  // a bound, not a timing
                                      std::this_thread::sleep_for(1ms);
                                  std::this_thread::sleep_for(3ms);
                              }
                              return std::map<int, sim::host_probe::dut_thread>{{7, {0, ended ? 970'000u : 0u}},
                                                                                {8, {0, 5'000u}}};
                          }});
    // The baseline is read by the constructor itself, before it returned (a
    // count of reads here would race with the sampler's first).
    CHECK(baseline_reader == std::this_thread::get_id());
    ended = true;  // the wait ended before the sampler first read
    std::vector<sim::host_probe::hold> waits;
    for (int i = 0; i < 5000 && waits.empty(); ++i) {  // a bound, not a timing
        std::this_thread::sleep_for(1ms);
        for (const auto& h : probe.holds())
            if (h.cpu == sim::host_probe::k_dut_wait) waits.push_back(h);
    }
    REQUIRE(waits.size() == 1);
    CHECK(waits[0].late == 970us);  // thread 7's growth; thread 8 never grew
    CHECK(waits[0].err >= 3ms);     // read at least 3 ms after the baseline
    CHECK(probe.dut_sampled());
}

// A sleeper still held when the case reads the probe (a host stall at the
// case's end) is among the holds, as long as it has lasted so far; once it
// wakes, the kept hold replaces it: never both. With a floor of 0 every
// wake-up is late by its latency, so a reading taken in that latency sees
// the hold in progress, and a later one the same deadline, longer.
TEST_CASE("host_probe: a sleeper past its deadline and not yet woken is a hold in progress") {
    sim::host_probe probe(250us, 0ns);
    std::map<std::pair<int, std::int64_t>, core::nanos> seen;
    bool grew = false;
    int both = 0, shrank = 0;
    const auto give_up = std::chrono::steady_clock::now() + 3s;  // a bound, not a timing
    for (int i = 0; !grew && std::chrono::steady_clock::now() < give_up; ++i) {
        std::set<std::pair<int, std::int64_t>> keys;
        for (const auto& h : probe.holds()) {
            const std::pair<int, std::int64_t> k{h.cpu, h.due.time_since_epoch().count()};
            both += !keys.insert(k).second;  // in progress or kept, never both
            const auto [it, fresh] = seen.emplace(k, h.late);
            if (!fresh && h.late > it->second) grew = true;  // read in progress, then again later
            shrank += !fresh && h.late < it->second;
            it->second = std::max(it->second, h.late);
        }
        if (i % 1000 == 999) std::this_thread::sleep_for(1ms);  // let the sleepers' CPUs breathe
    }
    CHECK(grew);
    CHECK(both == 0);
    CHECK(shrank == 0);
}

namespace {
std::vector<sim::host_probe::hold> dut_waits_of(const sim::host_probe& p) {
    std::vector<sim::host_probe::hold> out;
    for (const auto& h : p.holds())
        if (h.cpu == sim::host_probe::k_dut_wait) out.push_back(h);
    return out;
}
}  // namespace

// The kernel adds a wait to a thread's accounting only when the thread runs
// again: mrct-refnic held to 2 % of a CPU repaid a debt of kernel work
// (register_mr) for 3.1 s, and nothing of it showed until it ran, after the
// engine had given up on the call and read the probe (GR-005, an error where
// D114 says inconclusive). A thread read as runnable whose accounting stands
// is a wait in progress: among the holds, growing, from its first runnable
// reading, with `err` back to the last reading that said it was not waiting.
// When it ends, the kernel's figure replaces it.
TEST_CASE("host_probe: a DUT thread runnable and not run is a wait in progress before the kernel counts it") {
    std::atomic<bool> held{false}, ended{false};
    std::atomic<int> state_reads{0};
    sim::host_probe::dut_source src;
    src.read = [&] {
        return std::map<int, sim::host_probe::dut_thread>{{7, ended ? sim::host_probe::dut_thread{6'000'000, 900'000'000}
                                                                    : sim::host_probe::dut_thread{5'000'000, 0}}};
    };
    src.state = [&](int tid) -> std::optional<char> {
        CHECK(tid == 7);
        ++state_reads;
        return held ? 'R' : 'S';
    };
    sim::host_probe probe(250us, std::chrono::hours(1), src, 2ms);
    while (state_reads < 3) std::this_thread::sleep_for(1ms);
    CHECK(dut_waits_of(probe).empty());  // asleep: no wait
    held = true;
    std::vector<sim::host_probe::hold> w;
    for (int i = 0; i < 5000 && (w.empty() || w[0].late < 3ms); ++i) {  // a bound, not a timing
        std::this_thread::sleep_for(1ms);
        w = dut_waits_of(probe);
    }
    REQUIRE(w.size() == 1);
    const auto first = w[0];
    CHECK(first.late >= 3ms);
    CHECK(first.err >= 0ns);  // it may have begun after the last sleeping reading
    // Still in progress: the same wait, longer.
    for (int i = 0; i < 5000 && w.size() == 1 && w[0].late < first.late + 2ms; ++i) {
        std::this_thread::sleep_for(1ms);
        w = dut_waits_of(probe);
    }
    REQUIRE(w.size() == 1);
    CHECK(w[0].due == first.due);
    CHECK(w[0].late >= first.late + 2ms);
    // It ends: the kernel's 900 ms replaces it. The thread ran, then slept:
    // read as runnable still, with its accounting standing again, it would be
    // a new wait in progress 2 ms on (CI under ASan: the loop below, slowed
    // past that, saw two waits and never one).
    held = false;
    ended = true;
    for (int i = 0; i < 5000 && !(w.size() == 1 && w[0].late == 900ms); ++i) {
        std::this_thread::sleep_for(1ms);
        w = dut_waits_of(probe);
    }
    REQUIRE(w.size() == 1);
    CHECK(w[0].late == 900ms);
}

// No wait in progress where nothing says the thread waits: one read as
// asleep, one stopped (a DUT stopped by a signal is not held by its host:
// D114 leaves its unanswered call an error), one whose CPU time moves at
// every read (running: between two of its scheduler ticks it reads as
// runnable with its time standing), and a source with no state reader.
TEST_CASE("host_probe: a sleeping, stopped or running DUT thread, or no state reader, makes no wait in progress") {
    std::atomic<std::uint64_t> reads{0};
    std::atomic<int> asleep_reads{0}, running_reads{0};
    const auto t0 = std::chrono::steady_clock::now();
    sim::host_probe::dut_source src;
    src.read = [&] {
        ++reads;
        // Thread 8's time moves once a millisecond (its tick), whenever read.
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        return std::map<int, sim::host_probe::dut_thread>{{7, {5'000'000, 0}},  // asleep
                                                          {8, {static_cast<std::uint64_t>(ms.count()) * 1000, 0}},
                                                          {9, {5'000'000, 0}}};  // stopped (SIGSTOP): waits for no CPU
    };
    src.state = [&](int tid) -> std::optional<char> {
        if (tid == 9) return 'T';
        ++(tid == 7 ? asleep_reads : running_reads);
        return tid == 7 ? 'S' : 'R';
    };
    {
        sim::host_probe probe(250us, std::chrono::hours(1), src, 2ms);
        while (reads < 60 || asleep_reads < 5 || running_reads < 5) std::this_thread::sleep_for(1ms);
        CHECK(probe.dut_sampled());
        CHECK(dut_waits_of(probe).empty());
    }
    reads = 0;
    src.read = [&] {
        ++reads;
        return std::map<int, sim::host_probe::dut_thread>{{7, {5'000'000, 0}}};
    };
    src.state = nullptr;
    sim::host_probe probe(250us, std::chrono::hours(1), src, 2ms);
    while (reads < 60) std::this_thread::sleep_for(1ms);
    CHECK(probe.dut_sampled());
    CHECK(dut_waits_of(probe).empty());
}

TEST_CASE("host_probe: the host's pressure stall in progress is among the holds before it ends") {
    std::atomic<std::uint64_t> reads{0};
    sim::host_probe probe(250us, std::chrono::hours(1), [&]() -> std::optional<std::uint64_t> { return ++reads * 1000; });
    auto stall = [&] {
        core::nanos longest{0};
        std::size_t n = 0;
        for (const auto& h : probe.holds())
            if (h.cpu == sim::host_probe::k_host_pressure) longest = std::max(longest, h.late), ++n;
        CHECK(n <= 1);  // one run, never split
        return longest;
    };
    while (reads < 4) std::this_thread::sleep_for(1ms);
    // Read 4 returned: reads 2 and 3 grew 1 ms each and were noted before it.
    const auto seen = stall();
    CHECK(seen >= 2ms);
    // At least two reads more than `seen` took in: the sampler may have run
    // ahead of this thread (ASan, a busy host: 13 reads before it woke).
    const auto seen_reads = reads.load();
    while (reads < std::max<std::uint64_t>(10, seen_reads + 2)) std::this_thread::sleep_for(1ms);
    const auto later = stall();
    CHECK(later >= 8ms);
    CHECK(later > seen);
    CHECK(probe.pressure_sampled());
}

// A stall that ended is kept at its length: four reads grew 1 ms each.
TEST_CASE("host_probe keeps a pressure stall that ended, as long as it grew") {
    std::atomic<std::uint64_t> reads{0};
    sim::host_probe probe(250us, std::chrono::hours(1), [&]() -> std::optional<std::uint64_t> {
        return std::min<std::uint64_t>(++reads, 5) * 1000;  // flat from read 5 on
    });
    while (reads < 7) std::this_thread::sleep_for(1ms);  // read 6 found no growth and ended the run
    std::vector<core::nanos> stalls;
    for (const auto& h : probe.holds())
        if (h.cpu == sim::host_probe::k_host_pressure) stalls.push_back(h.late);
    REQUIRE(stalls.size() == 1);
    CHECK(stalls[0] == 4ms);
}

// Growth below k_pressure_floor per period is no stall; an unreadable source
// is said, nothing made up.
TEST_CASE("host_probe: pressure below its floor, or unreadable, makes no stall") {
    std::atomic<std::uint64_t> reads{0};
    {
        sim::host_probe probe(250us, std::chrono::hours(1), [&]() -> std::optional<std::uint64_t> {
            return ++reads * (sim::host_probe::k_pressure_floor.count() / 1000);  // exactly the floor: not above it
        });
        while (reads < 6) std::this_thread::sleep_for(1ms);
        CHECK(probe.pressure_sampled());
        for (const auto& h : probe.holds()) CHECK(h.cpu != sim::host_probe::k_host_pressure);
    }
    reads = 0;
    sim::host_probe probe(250us, std::chrono::hours(1), [&]() -> std::optional<std::uint64_t> {
        ++reads;
        return std::nullopt;
    });
    while (reads < 4) std::this_thread::sleep_for(1ms);
    CHECK_FALSE(probe.pressure_sampled());
    CHECK(probe.holds().empty());
}

TEST_CASE("host_probe with the DUT's process named reads its waits, not the host's pressure") {
    sim::host_probe probe(100us, 0ns, ::getpid(), true);
    while (probe.wakeups() < 3) std::this_thread::sleep_for(1ms);
    CHECK_FALSE(probe.pressure_sampled());
    for (const auto& h : probe.holds()) CHECK(h.cpu != sim::host_probe::k_host_pressure);
}
