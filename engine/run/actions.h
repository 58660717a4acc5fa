// Step actions that act on frames in flight: drop, duplicate, delay, mark CE
// (the peer withholding, delaying, duplicating its ACKs, or the fabric
// dropping "the next packet with PPSN X"). Each is a filter with a match on
// decoded fields, a direction and a count.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "plan/plan.h"
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

    // drop | duplicate | delay | mark_ce | skew: {dir, count, skip, for, match.*, by, path}
    core::status add(const plan::action& a, int step);
    fate apply(const trace::record& r);
    // Ends every filter that step `step` installed (action `lift`).
    void lift(int step);

    // Match keys: opcode, path, ppsn, tag, stream, seq, offset, retx, som, eom,
    // ece, ctrl, nak_code, attempt (docs/plan-format.md).
    static bool matches(const plan::args& match, const trace::record& r);
    static core::status check_match(const plan::args& match);
    static const std::vector<std::string>& actions();

private:
    struct filter {
        std::string kind;
        trace::dir d;
        plan::args match;
        unsigned remaining;  // 0 = unlimited
        unsigned skip = 0;   // matching frames let through first
        core::nanos by{0};
        core::nanos until = core::k_never;  // `for: 1ms` from the step
        int step;
    };
    sim::scheduler& s_;
    std::vector<filter> f_;
};

}  // namespace mrct::run
