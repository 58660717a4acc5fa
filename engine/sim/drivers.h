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

namespace mrct::sim {

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
    // Runs events as the wall clock reaches them, for `d` of wall time or until stop().
    void run_for(nanos d);
    // Thread-safe: run `cb` on the driver thread at the current time.
    void post(callback cb);
    // Thread-safe: make run_for return soon.
    void stop();
    // Events that ran later than their time by more than this are counted.
    std::uint64_t late_events(nanos threshold) const;

private:
    struct impl;
    scheduler& s_;
    std::unique_ptr<impl> impl_;
};

}  // namespace mrct::sim
