// Step actions that act on frames in flight: drop, duplicate, delay, mark CE,
// skew (the peer withholding, delaying, duplicating its ACKs, or the fabric
// dropping "the next packet with PPSN X"). Each is a compiled filter
// (run/program.h): a match on decoded fields, a direction and a count.
#pragma once

#include <string>
#include <vector>

#include "run/program.h"
#include "sim/scheduler.h"
#include "trace/trace.h"

namespace mrct::run {

class filter_set {
public:
    explicit filter_set(sim::scheduler& s) : s_(s) {}

    struct fate {
        bool dropped = false, duplicate = false, mark_ce = false;
        core::nanos delay{0};
        std::string action;
        int step = -1;
    };

    // Installs a filter from step `step` (-1 the setup, -2 the handshake);
    // `for` counts from now.
    void add(const filter_op& f, int step);
    // Every frame on a PathID, both directions, delayed: skew between paths.
    void add(const skew_op& s, int step);
    fate apply(const trace::record& r);
    // Ends every filter that step `step` installed (action `lift`).
    void lift(int step);

private:
    struct filter {
        filter_op::kind k;
        trace::dir d;
        trace::field_map match;
        std::uint32_t remaining;  // 0 = unlimited
        bool used_up = false;
        std::uint32_t skip = 0;   // matching frames let through first
        core::nanos by{0};
        core::nanos until = core::k_never;  // `for: 1ms` from the step
        int step;
    };
    sim::scheduler& s_;
    std::vector<filter> f_;
};

}  // namespace mrct::run
