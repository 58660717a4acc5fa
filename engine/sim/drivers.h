// The two drivers of the one scheduler.
//
// virtual_driver: time jumps to the next event (unit tests, simulated DUTs).
// realtime_driver: time follows a steady wall clock; events run when the wall
// clock reaches them; other threads hand work over through post(), which runs
// it on the driver's thread (I/O threads never call protocol code, habit 5).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "sim/scheduler.h"

namespace boost::asio {
class io_context;
}

namespace mrct::sim {

// The heap keeps what is freed and does not map blocks of its own below
// 32 MiB (glibc's mallopt; once per process, later calls do nothing). A case
// allocates and frees megabytes (posts, payloads, trace blocks); returning
// them to the kernel each time costs a page fault per page on the next case
// (a run of the plan in virtual time spent half its time there,
// docs/performance.md) and, in real time, memory-map lock holds (below).
// Freed memory stays with the process until it exits.
void keep_freed_memory();

class virtual_driver {
public:
    explicit virtual_driver(scheduler& s) : s_(s) {}
    // Runs every event with time <= t, then sets the time to t.
    std::uint64_t run_until(nanos t);
    // Runs until no event is left or `max_events` ran.
    std::uint64_t run(std::uint64_t max_events = ~std::uint64_t{0});

private:
    scheduler& s_;
};

class realtime_driver {
public:
    explicit realtime_driver(scheduler& s);
    ~realtime_driver();
    // Ties scheduler time to the wall clock: from now on, scheduler time t is
    // wall time (now + t - s.now()). The first run_for/run_until anchors if
    // this was not called.
    void anchor();
    // Runs events as the wall clock reaches them, for `d` of wall time or until stop().
    void run_for(nanos d);
    // Runs events as the wall clock reaches them until scheduler time `t` or stop().
    void run_until(nanos t);
    // Runs events and I/O as run_until does, until `done` becomes true (set by
    // a handler on io()) or wall time `d` has passed; returns `done`. Also
    // returns (false) within k_abort_poll of `abort` (set_abort) being set.
    bool run_while_waiting(const bool& done, nanos d);
    // A flag another thread (a signal handler) sets to end every wait at
    // once: a run stopped a second time (D143). A wait it ended is aborted().
    void set_abort(const std::atomic<bool>* abort) { abort_ = abort; }
    bool aborted() const { return aborted_; }
    static constexpr nanos k_abort_poll{50'000'000};
    // Moves scheduler time up to the wall clock (never back): for work that
    // runs outside an event, such as a frame a socket handler delivers.
    void sync();
    // The scheduler time of a wall-clock instant (after anchor()).
    nanos sim_time_of(std::chrono::steady_clock::time_point wall) const;
    // The calendar time (the system clock, read at anchor()) of scheduler
    // time `t`: to line the case's trace up with captures and logs taken
    // elsewhere.
    std::chrono::system_clock::time_point system_time_of(nanos t) const;
    // The io_context the driver waits on: sockets and timers opened on it run
    // their handlers on the driver thread, between events.
    boost::asio::io_context& io();
    // Thread-safe: run `cb` on the driver thread at the current time.
    void post(callback cb);
    // Thread-safe: make run_for return soon.
    void stop();
    // Read what is ready on io() (a socket's frames) before running the
    // events that are due, not after. For a DUT: an ACK waiting in its socket
    // is taken before a retransmit timer that fell due meanwhile fires, as a
    // NIC's pipeline takes its input; otherwise a DUT running behind resends
    // what the ACK already covered (mrct-refnic beside stress-ng, 160 us past
    // the crossing window). The engine keeps the default (events first).
    void set_io_first(bool on);
    // Never sleep: poll the io_context and the scheduler in a loop, on this
    // thread's CPU. Costs the core; saves the wake-up of a sleeping thread
    // (tens of microseconds on a VM) on every frame and timer: the traffic
    // emulator's --busy-poll (docs/emulator.md).
    void set_busy_poll(bool on);
    // A turn runs the events due when it began, then those that fell due
    // while it ran them, until `d` after it began; then I/O has its turn.
    // A paced sender's next packet is due a few nanoseconds after the one it
    // just sent: with d = 0 every packet took a turn of its own (a pass
    // through epoll and a sendmmsg each); within d they leave together.
    // Nothing runs before its time either way. Default k_turn_extend.
    void set_turn_extend(nanos d);
    static constexpr nanos k_turn_extend{20'000};
    // From an event: no further events in this turn beyond those already
    // due at its start; I/O has its turn first. A sender that found frames
    // waiting for it (mrct-refnic's transmit burst, D116) asks this, so
    // that it reads them before it goes on.
    void end_turn();
    // How late events ran after their time (timers, deliveries, timed steps):
    // the engine's own lateness in real time (docs/timing.md). `since`: only
    // events due at or after that scheduler time.
    struct lateness {
        std::uint64_t events = 0;
        nanos max{0}, p99{0};
    };
    lateness lateness_since(nanos since = nanos{0}) const;
    // Each event that ran more than `floor` late: (due, how late), in order.
    std::vector<std::pair<nanos, nanos>> late_events(nanos floor) const;
    // Called at the end of each turn in which events ran, before the turn's
    // length is taken: the wire sends what the turn's events queued.
    void set_turn_end(callback cb);
    // Each turn of events longer than `floor`, as (its start, its length),
    // kept once set_turn_end was called:
    // every event of a turn runs at the turn's start time, so a frame sent
    // in it is stamped then, and left by the turn's end (D137).
    std::vector<std::pair<nanos, nanos>> late_turns(nanos floor) const;
    nanos longest_turn() const;  // the longest of them (0: none over the 5 us it keeps)

private:
    void run_to(std::chrono::steady_clock::time_point end_wall, nanos end_sim, const bool* done = nullptr);
    const std::atomic<bool>* abort_ = nullptr;
    bool aborted_ = false;
    struct impl;
    scheduler& s_;
    std::unique_ptr<impl> impl_;
};

}  // namespace mrct::sim
