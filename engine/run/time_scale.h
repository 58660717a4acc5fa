// Coarse-time operation (issue 19, docs/timing.md "Coarse time: scaling the
// time base"): a case whose tolerances a real-time host cannot hold runs as
// the same case slowed down K times. Every time in it is multiplied by K and
// every rate divided by K: plan times and durations, the fabric's delays and
// rates, both endpoints' timers (rto_initial, rto_min, rto_max, ack_delay,
// grant_idle, written out even where the case leaves the spec's default),
// their inbound rates, RNR TimerCodes (K is a power of two: the table doubles
// every two codes, so a code maps exactly to the code K times longer) and
// the literal times in assertion arguments and their defaults. Sizes, counts,
// windows and the wire format do not change, so what the case tests does not
// either; what shrinks, relative to the protocol's time, is everything the
// scaling cannot touch: the host's lateness and the DUT's own processing time.
#pragma once

#include <optional>
#include <string>

#include "core/result.h"
#include "plan/plan.h"

namespace mrct::run {

// The scale `--time-scale auto` uses for a `fine_timing` case on a DUT that
// lacks the capability. 64 maps TimerCode c to c + 12 (codes 1..19), turns
// the 5 us an immediate ACK may take into 320 us (a veth's round trip and a
// userspace stack's wake-up fit), and a 60 ms case into 3.8 s.
inline constexpr unsigned k_auto_time_scale = 64;
inline constexpr unsigned k_max_time_scale = 128;

// How the reason of a case skipped because it cannot be scaled begins (the
// selftest tells such a skip from others by it).
inline constexpr const char* k_unscalable_reason = "the case requires fine_timing and cannot run at a time base ";

// 1, 2, 4, ... k_max_time_scale.
bool valid_time_scale(unsigned k);

// The TimerCode whose time is k times code's, if the table has one.
std::optional<unsigned> scaled_rnr_code(unsigned code, unsigned k);

// The times in a duration expression ("rnr_time + 10% + 50us") times k; names
// (rto_min, rtt(p0), rnr_time) are left alone, since they take their values
// from the scaled run.
std::string scale_expression(const std::string& expr, unsigned k);

// The case slowed down k times (k = 1: unchanged). An error names what cannot
// be scaled (a TimerCode with no code k times longer, a grant below the
// GrantRate unit), with the plan position.
core::result<plan::test_case> scale_case(const plan::test_case& c, unsigned k);

}  // namespace mrct::run
