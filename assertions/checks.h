// The check functions behind the built-in assertions (registry.cpp lists them).
#pragma once

#include "assertions/assertion.h"

namespace mrct::assertions::checks {

// Does an ACK cover `ppsn` (24-bit) on its path: below its CumAck, or in
// its SACK (checks_receiver.cpp)?
bool covers(const wire::frame& f, std::uint32_t ppsn);

// DUT's wire format (checks_format.cpp)
outcome wire_format(const context& c);
outcome distinct_entropy(const context& c);
outcome epoch_on_port_change(const context& c);
outcome negotiated(const context& c);

// DUT as sender: loss recovery and timers (checks_recovery.cpp)
outcome fast_retransmit(const context& c);
outcome resend_identity(const context& c);
outcome no_go_back_n(const context& c);
outcome retry_limit(const context& c);
outcome rto_timing(const context& c);
// The smallest tolerance rto_timing judges an expiry by (rel x its RTO + abs);
// nullopt when it judges none.
std::optional<core::nanos> rto_timing_tolerance(const context& c);
outcome rto_independence(const context& c);
outcome port_move_after_rtos(const context& c);
outcome failover(const context& c);
outcome last_path_kept(const context& c);

// DUT as sender: windows, ECN, grants, RNR (checks_flow.cpp)
outcome window_limit(const context& c);
outcome window_cut_on_ece(const context& c);
outcome no_cross_path_cut(const context& c);
outcome grant_rate(const context& c);
outcome rnr_pause(const context& c);
outcome rnr_resume(const context& c);
outcome other_tags_flow(const context& c);
outcome rnr_keeps_window(const context& c);
outcome close_after_ack(const context& c);
outcome ctrl_repeat(const context& c);

// DUT as receiver (checks_receiver.cpp)
outcome acks_conform(const context& c);
outcome sack_reports(const context& c);
outcome naks(const context& c);
outcome silent_drop(const context& c);
outcome rnr_sent(const context& c);
outcome rejection_dropped(const context& c);
outcome query_answer(const context& c);
outcome completion_after_placement(const context& c);

// Observations: completions, memory, counters (checks_obs.cpp)
outcome all_complete(const context& c);
outcome completion_order(const context& c);
outcome stream_progress(const context& c);
outcome data_integrity(const context& c);
outcome error_completion(const context& c);
outcome frame_count(const context& c);
outcome completion_count(const context& c);
outcome grant_advertised(const context& c);
outcome fair_share(const context& c);
outcome spraying(const context& c);

// Shared helpers.
std::string frames_list(const std::vector<std::size_t>& frames);

}  // namespace mrct::assertions::checks
