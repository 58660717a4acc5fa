#include "endpoint/config.h"

namespace mrct::endpoint {

const std::vector<bug_info>& bug_profiles() {
    static const std::vector<bug_info> k_bugs = {
        {bug::frozen_rnr, "frozen-rnr", "MR-RNR-4", "pauses a tag on RNR and never resumes it"},
        {bug::rnr_pauses_all, "rnr-pauses-all", "MR-RNR-2, MR-RNR-3", "an RNR on one tag pauses every tag"},
        {bug::shared_rto, "shared-rto", "MR-RTO-1, MR-RTO-2", "one retransmission timer and RTT estimate per connection"},
        {bug::no_fast_retx, "no-fast-retx", "MR-SACK-3", "ignores SACK gaps; only the RTO resends"},
        {bug::go_back_n, "go-back-n", "MR-SACK-4", "on a loss resends every unacknowledged PPSN from the lost one on"},
        {bug::retx_other_path, "retx-other-path", "MR-SACK-3", "resends a lost packet on another path with a new PPSN"},
        {bug::karn_violation, "karn-violation", "MR-RTO-3", "takes RTT samples from retransmitted packets"},
        {bug::same_entropy, "same-entropy", "MR-PATH-1", "every path uses the same UDP source port"},
        {bug::no_epoch_bump, "no-epoch-bump", "MR-PATH-2", "moves a path to a new port without incrementing PathEpoch"},
        {bug::no_port_move, "no-port-move", "MR-PATH-4", "never moves a path after consecutive RTO expiries"},
        {bug::ignore_ecn, "ignore-ecn", "MR-CC-2", "never reduces a window on ECE"},
        {bug::shared_cwnd, "shared-cwnd", "MR-CC-3", "an ECE on one path cuts every path's window"},
        {bug::ignore_grant, "ignore-grant", "MR-GR-2", "ignores GrantRate: no pacing"},
        {bug::window_overrun, "window-overrun", "MR-CC-4, MR-SACK-5", "ignores cwnd and the 256 limit: up to 300 in flight per path"},
        {bug::stream_order, "stream-order", "MR-STR-1", "completes messages as they finish, not in StreamSeq order"},
        {bug::accept_bad_icrc, "accept-bad-icrc", "MR-HDR-2", "does not verify ICRCs"},
        {bug::early_completion, "early-completion", "MR-OOO-3", "completes a message when its EOM packet arrives"},
        {bug::no_retry_limit, "no-retry-limit", "MR-SACK-6", "retransmits forever"},
        {bug::ecn_not_ect, "ecn-not-ect", "MR-HDR-4", "sends data packets as Not-ECT"},
        {bug::lazy_ack, "lazy-ack", "MR-SACK-2", "ignores AckReq and new gaps: ACKs only every 8 packets or 20 us"},
        {bug::no_ece, "no-ece", "MR-CC-1", "acknowledges CE-marked packets without ECE"},
        {bug::grant_unlimited, "grant-unlimited", "MR-GR-3", "advertises GrantRate 0xFFFF (unlimited) whatever the load"},
        {bug::no_rnr, "no-rnr", "MR-RNR-1", "discards a SEND that has no receive without sending an RNR"},
        {bug::accept_mismatch, "accept-mismatch", "MR-HDR-5", "skips the header-mismatch checks: no NAK 0x0F"},
        {bug::no_path_check, "no-path-check", "MR-CONN-4", "drops data with PathID >= NumPaths silently instead of NAK 0x20"},
        {bug::close_early, "close-early", "MR-CONN-3", "sends CLOSE at once, with data still unacknowledged"},
        {bug::single_path, "single-path", "MR-PATH-5", "sends every new packet on path 0 (no spraying)"},
        {bug::ignore_mtu, "ignore-mtu", "MR-CONN-1", "as initiator keeps its own MTU when the peer accepts a smaller one"},
        {bug::no_failover, "no-failover", "MR-PATH-6", "never fails a path: keeps resending into a dead route"},
        {bug::rnr_cuts_window, "rnr-cuts-window", "MR-RNR-5", "treats an RNR as congestion: cuts every path's window to 1"},
        {bug::accept_own_minor, "accept-own-minor", "MR-CONN-1", "answers a CONNECT of an older minor version with its own (ACCEPT says 1.2)"},
        {bug::close_on_ack, "close-on-ack", "MR-CONN-3", "repeats an unanswered CLOSE on every ACK that arrives, not every max(initial RTO, largest RTO)"},
        {bug::hasty_ctrl, "hasty-ctrl", "MR-CONN-1, MR-CONN-3, MR-RNR-6, MR-PATH-7", "repeats an unanswered CONNECT, CLOSE, RNR_QUERY or PATH_RESET every initial RTO / 4, ignoring the paths' RTOs"},
        {bug::connect_once, "connect-once", "MR-CONN-1", "sends CONNECT once and never repeats it: a lost CONNECT or ACCEPT leaves the connection opening for ever"},
        {bug::rnr_kept, "rnr-kept", "MR-RNR-6", "keeps a rejection until its message completes: RNR_QUERY re-sends the RNR of a message already re-sent in full"},
        {bug::cross_stream_hol, "cross-stream-hol", "MR-STR-2", "completes messages in posting order across all streams: a loss or RNR on one stream holds every other stream's completions"},
        {bug::stale_ack_walks, "stale-ack-walks", "MR-SACK-3", "takes an ACK whose CumAck is behind the one it already took (a stale or reordered ACK) as acknowledging every PPSN up to it around the 24-bit space: everything in flight, a lost packet too, which is then never resent (the reference's own bug of 51db280, found by mrct interop)"},
        {bug::rnr_ignores_pause, "rnr-ignores-pause", "MR-RNR-2", "keeps sending new packets of a tag an RNR paused (the rest of the rejected message, the tag's next messages); only the rejected message's re-send waits for the RNR time"},
        {bug::write_arrival_order, "write-arrival-order", "MR-OOO-1", "places a WRITE's packets one after another in the order they arrive, from the message's first VA, not each at its own RETH.VA (a reorder buffer's placement without the buffer)"},
        {bug::send_arrival_order, "send-arrival-order", "MR-OOO-2", "places a SEND's packets one after another in the order they arrive, from the receive's address, not each at its MsgOffset"},
        {bug::oob_write_silent, "oob-write-silent", "MR-OOO-4", "acknowledges and discards a WRITE outside its R_Key's bounds, or with an unknown R_Key, without NAK 0x02"},
        {bug::unknown_conn_silent, "unknown-conn-silent", "MR-CONN-2", "discards data to an unknown connection silently instead of NAK 0x0E"},
        {bug::no_sack, "no-sack", "MR-SACK-1", "ACKs carry CumAck with an empty SACK: packets received above a gap are never reported"},
        {bug::grant_zero_first, "grant-zero-first", "MR-GR-1", "the first ACK of each connection carries GrantRate 0 (reserved): the grant is filled in only from the second ACK on"},
        {bug::path_by_port, "path-by-port", "MR-PATH-3", "keeps receive state per UDP source port: a packet from a port new to its path meets fresh state expecting the PPSN the path started at, or was last reset to (CumAck back there, the SACK cleared)"},
        {bug::nak_bad_version, "nak-bad-version", "MR-HDR-3", "answers a data packet with an unknown MRH version with NAK 0x0F (header mismatch) instead of dropping it silently; still counts it"},
        {bug::rto_resends_newest, "rto-resends-newest", "MR-RTO-4", "an RTO resends the path's newest unacknowledged PPSN, not its oldest"},
        {bug::reserved_bits_set, "reserved-bits-set", "MR-HDR-1", "sends data packets with the lowest BTH reserved bit (after AckReq) set"},
        {bug::df_clear, "df-clear", "MR-HDR-6", "sends IPv4 packets with DF clear and a running Identification (1, 2, 3 ...), as a host stack does for fragmentable datagrams"},
        {bug::pause_frames, "pause-frames", "MR-CC-5", "answers every ACK with ECE with an 802.3x PAUSE frame (quanta 0xFFFF) to its neighbour: congestion pushed down to the link, as a PFC-minded NIC does"},
        {bug::grant_not_shared, "grant-not-shared", "MR-GR-3", "grants every sender the whole inbound rate however many are active: a lone sender's grant is right, several together are granted N times the link"},
        {bug::fails_last_path, "fails-last-path", "MR-PATH-6", "fails its last path in service too, after its 4th consecutive expiry like any other: the connection is left with no path, its data waiting on probes, where the retry limit should end it"},
        {bug::early_give_up, "early-give-up", "MR-SACK-6", "fails a message, and its connection, once a packet has gone out 3 times unacknowledged, where the retry limit says 7"},
        {bug::rnr_count_late, "rnr-count-late", "MR-RNR-6", "acknowledges a rejected packet at once, before counting its rejection: that ACK's RnrCount leaves it out (the RNR after it carries the new RnrSeq)"},
        {bug::sync_first, "sync-first", "MR-RNR-6", "answers RNR_QUERY with RNR_SYNC first, then re-sends the RNRs of the rejections it keeps (§4: the RNRs, then RNR_SYNC): a sender that reads the SYNC before the RNRs it answers for queries again"},
        {bug::sync_only, "sync-only", "MR-RNR-6", "answers RNR_QUERY with RNR_SYNC alone: the RNRs of the rejections it keeps are not sent again, so a sender that lost one holds its SENDs until the query's retry limit"},
    };
    return k_bugs;
}

core::result<bug> bug_by_name(std::string_view name) {
    // Empty is a mistake (an unset shell variable in `--dut sim:bug=$B`), not
    // the reference: a run meant to show a bug would pass.
    if (name.empty()) return core::error{"bug profile: empty name (give `none` for the reference behaviour)"};
    if (name == "none") return bug::none;
    std::string all;
    for (const auto& b : bug_profiles()) {
        if (b.name == name) return b.id;
        all += (all.empty() ? "" : ", ") + std::string(b.name);
    }
    return core::error{"unknown bug profile '" + std::string(name) + "' (expected one of: " + all + ")"};
}

std::string_view bug_name(bug b) {
    for (const auto& i : bug_profiles())
        if (i.id == b) return i.name;
    return "none";
}

}  // namespace mrct::endpoint
