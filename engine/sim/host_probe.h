// Threads that measure how long the host holds a sleeping thread (real time
// only, docs/timing.md). One per CPU the engine may run on, pinned to it: a
// hold is often one CPU's (another task on it, or a virtual CPU the hypervisor
// did not run), and a DUT on that CPU is held while a sleeper on the other
// one wakes on time. Each sleeps to absolute deadlines, `period` apart, at
// ordinary priority with no timer slack, as a userspace DUT's timer thread
// would, and keeps every wake-up that came more than `floor` late. On a host
// the engine shares with the DUT (agent+udp over a veth, an RTL simulation
// beside the engine), such a hold holds the DUT too: its timers fire late, its
// answers wait. The engine cannot see the DUT's own lateness; this is the
// closest it can measure without trusting the DUT.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/time.h"

namespace mrct::sim {

class host_probe {
public:
    using clock = std::chrono::steady_clock;
    static constexpr core::nanos k_period{250'000};
    static constexpr core::nanos k_floor{250'000};

    struct hold {
        clock::time_point due;  // when the probe should have woken (a DUT wait: when it began, at the latest)
        core::nanos late;       // how much later it did (a DUT wait: how long it waited)
        int cpu = -1;           // the CPU its thread is pinned to (-1: not pinned; k_dut_wait: a DUT wait)
        // A DUT wait: it may have ended up to this long before it was read
        // (the time since the read before: the period, or more when the
        // probe's own thread was held), so begun as much earlier. A wait in
        // progress (k_open_floor): it may have begun up to this long before
        // `due`, its first runnable reading.
        core::nanos err{0};
    };
    static constexpr int k_dut_wait = -2;
    // A span in which tasks on this host waited for a CPU (the kernel's
    // pressure stall information), where the DUT's own waits are not read.
    static constexpr int k_host_pressure = -3;
    // A period counts as stalled when some task waited at least this long in it.
    static constexpr core::nanos k_pressure_floor{50'000};
    // A DUT thread's wait for a CPU is kept when it grew by more than this in
    // a period. Below the sleepers' floor: a wait of 190 us at a DUT timer's
    // due time delays it 190 us, which the checks of an ACK within its
    // interval (5 us allowed) must see to excuse (docs/timing.md).
    static constexpr core::nanos k_dut_floor{50'000};

    // `dut_pid` > 0: a DUT process on this host. A further thread reads, every
    // period, how long each of its threads waited for a CPU (the kernel's
    // scheduler accounting, /proc/PID/task/TID/schedstat, not the DUT's word),
    // and keeps, as a hold, each period in which a thread's wait grew by more
    // than `dut_floor`: the DUT was runnable and not run. A sleeper only shows
    // holds of a light thread; a busy DUT on a contended CPU waits longer (CFS
    // slices of 3-4 ms beside stress-ng, while the sleepers woke on time).
    //
    // `pressure` (with no dut_pid: a DUT that shares the host but whose
    // process the engine was not told): a further thread reads, every period,
    // the host's CPU pressure (/proc/pressure/cpu, "some": time in which at
    // least one runnable task waited for a CPU) and keeps each run of periods
    // in which it grew by more than k_pressure_floor as one hold, its length
    // the waiting in all. An upper bound on the DUT's waits: where no task
    // waited, the DUT did not; where tasks waited, it may have (D95).
    // `dut_floor`: the DUT's waits kept (k_dut_floor), apart from the
    // sleepers' `floor`.
    host_probe(core::nanos period = k_period, core::nanos floor = k_floor, int dut_pid = 0, bool pressure = false,
               core::nanos dut_floor = k_dut_floor);
    // The host's CPU pressure read from `source` (the "some" total in us, as
    // /proc/pressure/cpu gives it; nullopt: unreadable this time) instead of
    // the kernel, and no DUT process: for tests, which can then hold a stall
    // open as long as they like.
    using pressure_source = std::function<std::optional<std::uint64_t>()>;
    host_probe(core::nanos period, core::nanos floor, pressure_source source);
    // One DUT thread's scheduler accounting so far, as
    // /proc/PID/task/TID/schedstat gives it.
    struct dut_thread {
        std::uint64_t ran = 0;     // ns on a CPU
        std::uint64_t waited = 0;  // ns runnable on a run queue and not run: waits that ended
    };
    // The DUT's threads read from `read` (thread id -> its accounting; empty:
    // nothing readable) instead of /proc: for tests. Read once by the
    // constructor, as the baseline, then every period. `state` (optional):
    // the thread's state now as /proc/PID/task/TID/stat gives it ('R':
    // runnable or running; nullopt: unreadable), read for threads that have
    // not run lately, to see a wait still in progress (below).
    struct dut_source {
        using reader = std::function<std::map<int, dut_thread>()>;
        using state_reader = std::function<std::optional<char>(int tid)>;
        reader read;
        state_reader state;
    };
    // The kernel adds a wait to a thread's accounting only when it ends (the
    // thread runs again): a DUT held by a CPU quota for seconds (a debt of
    // kernel work repaid over many periods: register_mr at 2 % of a CPU)
    // shows nothing while the hold lasts. So a thread read as runnable
    // ('R') that has not run for at least `open_floor` is in a wait in
    // progress: holds() includes it, from when it was first read runnable to
    // the latest read, with `err` back to when it last ran or was last read
    // not runnable (it may have begun as early). A thread cannot leave 'R'
    // without running, so one reading of 'R' holds until its CPU time moves.
    // The floor: a running thread's CPU time advances at each scheduler tick
    // (10 ms at most, HZ=100), so one running is never taken for one waiting;
    // on a host with nohz_full CPUs a lone running thread's time may stand
    // for up to a second (the remote tick), and the floor is
    // k_open_floor_nohz_full there.
    static constexpr core::nanos k_open_floor{20'000'000};
    static constexpr core::nanos k_open_floor_nohz_full{2'000'000'000};
    // A thread that has not run is read for its state at most this often,
    // and at most k_state_reads threads in one period (/proc/.../stat costs
    // some 6 us a read).
    static constexpr core::nanos k_state_every{1'000'000};
    static constexpr unsigned k_state_reads = 8;
    host_probe(core::nanos period, core::nanos floor, dut_source source, core::nanos open_floor = k_open_floor);
    ~host_probe();  // stops and joins the thread (within one period)
    host_probe(const host_probe&) = delete;
    host_probe& operator=(const host_probe&) = delete;

    core::nanos period() const;
    // The CPUs probed: the engine's affinity mask (one unpinned thread if it
    // cannot be read). Run the engine and a DUT on this host under the same
    // `taskset` to keep the probe to the DUT's CPUs (docs/timing.md).
    std::vector<int> cpus() const;
    // Every wake-up later than the floor so far, on any CPU, in order of
    // deadline, at most k_max_holds (past that, the latest replaces a
    // shorter one: the longest are kept); and the holds in progress, each as
    // long as it has lasted: a sleeper past its deadline by more than the
    // floor and not yet woken, the host's pressure stall, the DUT's threads'
    // waits (k_open_floor).
    std::vector<hold> holds() const;
    // Wake-ups so far, all threads (the probe ran at all).
    std::uint64_t wakeups() const;
    // The DUT process's accounting could be read (dut_pid given, and /proc
    // showed it at least once).
    bool dut_sampled() const;
    // The host's CPU pressure could be read (pressure asked, no dut_pid, and
    // the kernel has PSI).
    bool pressure_sampled() const;
    static constexpr std::size_t k_max_holds = 1 << 16;

private:
    void start_sleepers();
    void start_dut(dut_source source);
    void start_pressure(pressure_source read);
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace mrct::sim
