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
    void add(const filter_op& f, int step, const plan::loc& at);
    // Every frame on a PathID, both directions, delayed: skew between paths.
    void add(const skew_op& s, int step);
    fate apply(const trace::record& r);
    // Whether a filter could still act on a frame going `d` now: if not,
    // apply() would leave every such frame as it is (and a caller need not
    // decode one to ask).
    bool may_act(trace::dir d) const;
    // Ends every filter that step `step` installed (action `lift`).
    void lift(int step);

    // A filter written with a count (`count: N`, not 0) that acted on fewer
    // frames than that and was not lifted: the fault the case wrote did not
    // happen in full (a DUT that sent fewer matching frames than the case
    // expected, a `for:` window that closed first). D101.
    struct shortfall {
        int step;          // -1 the setup, -2 the handshake
        plan::loc at;      // the action in the plan
        std::string what;  // describe(filter_op)
        std::uint32_t acted, wanted;
    };
    std::vector<shortfall> shortfalls() const;

private:
    struct filter {
        filter_op::kind k;
        trace::dir d;
        trace::field_map match;
        std::uint32_t remaining;  // 0 = unlimited
        bool used_up = false;
        bool lifted = false;
        std::uint32_t wanted = 0, acted = 0;  // the written count (0 = unlimited), frames acted on
        std::string what;
        plan::loc at;
        std::uint32_t skip = 0;   // matching frames let through first
        core::nanos by{0};
        core::nanos until = core::k_never;  // `for: 1ms` from the step
        int step;
    };
    // Could still act on a frame going `d` now: not used up (or lifted), its
    // `for:` window open.
    bool live(const filter& f, trace::dir d) const { return f.d == d && !f.used_up && s_.now() < f.until; }
    sim::scheduler& s_;
    std::vector<filter> f_;
};

}  // namespace mrct::run
