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
#include <memory>
#include <vector>

#include "core/time.h"

namespace mrct::sim {

class host_probe {
public:
    using clock = std::chrono::steady_clock;
    static constexpr core::nanos k_period{250'000};
    static constexpr core::nanos k_floor{250'000};

    struct hold {
        clock::time_point due;  // when the probe should have woken
        core::nanos late;       // how much later it did
        int cpu = -1;           // the CPU its thread is pinned to (-1: not pinned)
    };

    host_probe(core::nanos period = k_period, core::nanos floor = k_floor);
    ~host_probe();  // stops and joins the thread (within one period)
    host_probe(const host_probe&) = delete;
    host_probe& operator=(const host_probe&) = delete;

    core::nanos period() const;
    // The CPUs probed: the engine's affinity mask (one unpinned thread if it
    // cannot be read). Run the engine and a DUT on this host under the same
    // `taskset` to keep the probe to the DUT's CPUs (docs/timing.md).
    std::vector<int> cpus() const;
    // Every wake-up later than the floor so far, on any CPU, in order of
    // deadline; at most k_max_holds
    // (past that, the latest replaces a shorter one: the longest are kept).
    std::vector<hold> holds() const;
    // Wake-ups so far, all threads (the probe ran at all).
    std::uint64_t wakeups() const;
    static constexpr std::size_t k_max_holds = 1 << 16;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace mrct::sim
