// Endpoint parameters (spec model §5 defaults) and bug profiles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace mrct::endpoint {

using core::nanos;
using namespace std::chrono_literals;

// Bug profiles: each breaks one clause the way real silicon does, so that every
// assertion can be shown to catch what it claims to (docs/bug-profiles.md).
enum class bug : std::uint8_t {
    none,
    frozen_rnr,      // MR-RNR-4: pauses the tag on RNR, never resumes it
    rnr_pauses_all,  // MR-RNR-2/3: an RNR pauses every tag
    shared_rto,      // MR-RTO-1/2: one retransmission timer per connection
    no_fast_retx,    // MR-SACK-3: ignores SACK gaps, waits for the RTO
    go_back_n,       // MR-SACK-4: on loss resends everything from the lost PPSN on
    retx_other_path, // MR-SACK-3: resends a lost packet on another path (new PPSN)
    karn_violation,  // MR-RTO-3: takes RTT samples from retransmitted packets
    same_entropy,    // MR-PATH-1: every path uses one UDP source port
    no_epoch_bump,   // MR-PATH-2: moves a path's port without incrementing PathEpoch
    no_port_move,    // MR-PATH-4: never moves a path after consecutive RTOs
    ignore_ecn,      // MR-CC-2: never reduces cwnd on ECE
    shared_cwnd,     // MR-CC-3: an ECE on one path cuts every path's window
    ignore_grant,    // MR-GR-2: ignores GrantRate (no pacing)
    window_overrun,  // MR-CC-4/MR-SACK-5: ignores cwnd, sends up to 300 in flight per path
    stream_order,    // MR-STR-1: completes messages as soon as they finish, not in StreamSeq order
    accept_bad_icrc, // MR-HDR-2: does not check ICRCs
    early_completion,// MR-OOO-3: completes a message when its EOM packet arrives
    no_retry_limit,  // MR-SACK-6: retransmits forever
    ecn_not_ect,     // MR-HDR-4: sends data as Not-ECT
    lazy_ack,        // MR-SACK-2: ignores AckReq and new gaps; ACKs only every 8 packets or 20 us
    no_ece,          // MR-CC-1: acknowledges CE-marked packets without ECE
    grant_unlimited, // MR-GR-1/3: advertises GrantRate 0xFFFF whatever the load
    no_rnr,          // MR-RNR-1: discards a SEND without a receive and sends no RNR
    accept_mismatch, // MR-HDR-5: skips the header-mismatch checks (no NAK 0x0F)
    no_path_check,   // MR-CONN-4: drops data with PathID >= NumPaths silently instead of NAK 0x20
    close_early,     // MR-CONN-3: sends CLOSE at once, with data unacknowledged
    single_path,     // MR-PATH-5: sends every new packet on path 0
    ignore_mtu,      // MR-CONN-1: an initiator keeps its own MTU when the peer accepts a smaller one
    no_failover,     // MR-PATH-6: never fails a path; keeps resending into a dead route
    rnr_cuts_window, // MR-RNR-5: an RNR cuts every path's window to the minimum
    accept_own_minor,// MR-CONN-1: ACCEPT carries its own minor version (1.2), not the smaller one
    rnr_kept,        // MR-RNR-6: keeps a rejection until its message completes, not until it arrives again in full
    close_on_ack,    // MR-CONN-3: repeats an unanswered CLOSE on every ACK, not every CTRL interval
    hasty_ctrl,      // MR-CONN-1/3, MR-RNR-6, MR-PATH-7: repeats unanswered CTRL every initial RTO / 4, ignoring the paths' RTOs
    connect_once,    // MR-CONN-1: sends CONNECT once; a lost CONNECT or ACCEPT leaves the connection opening for ever
    cross_stream_hol,// MR-STR-2: completes sends in posting order across all streams (one ordering domain)
    stale_ack_walks, // MR-SACK-3: a stale ACK (CumAck behind the base) walks the base around the PPSN space, acknowledging everything in flight
    rnr_ignores_pause,// MR-RNR-2: keeps sending new packets of a tag an RNR paused; only the rejected message waits for the RNR time
    write_arrival_order,// MR-OOO-1: places a WRITE's packets one after another in arrival order, not at each RETH.VA
    send_arrival_order, // MR-OOO-2: places a SEND's packets one after another in arrival order, not at MsgOffset
    oob_write_silent,   // MR-OOO-4: acknowledges and drops a WRITE outside its R_Key's bounds: no NAK 0x02
    unknown_conn_silent,// MR-CONN-2: drops data to an unknown connection silently: no NAK 0x0E
    no_sack,            // MR-SACK-1: ACKs carry CumAck with an empty SACK
    grant_zero_first,   // MR-GR-1: the first ACK of a connection carries GrantRate 0 (reserved)
    path_by_port,       // MR-PATH-3: receive state per UDP source port: a new port of a path starts it afresh
    nak_bad_version,    // MR-HDR-3: answers a data packet with an unknown MRH version with NAK 0x0F
    rto_resends_newest, // MR-RTO-4: an RTO resends the path's newest unacknowledged PPSN, not its oldest
    reserved_bits_set,  // MR-HDR-1: sends data packets with a BTH reserved bit set
    df_clear,           // MR-HDR-6: sends IPv4 with DF clear and a running Identification
    pause_frames,       // MR-CC-5: answers an ECE with an 802.3x PAUSE frame
    grant_not_shared,   // MR-GR-3: grants every sender the whole inbound rate, however many are active
    fails_last_path,    // MR-PATH-6: fails its last path in service too (§5: the retry limit ends that one)
    early_give_up,      // MR-SACK-6: fails a message after a packet's 3rd transmission, not its retry limit's
    rnr_count_late,     // MR-RNR-6: acknowledges a rejected packet at once, before counting the rejection in RnrCount
    sync_first,         // MR-RNR-6 (§4): answers RNR_QUERY with RNR_SYNC first, then the kept rejections' RNRs
    sync_only,          // MR-RNR-6 (§4): answers RNR_QUERY with RNR_SYNC alone, re-sending no kept rejection's RNR
};

struct bug_info {
    bug id;
    std::string_view name;
    std::string_view clauses;
    std::string_view description;
};
const std::vector<bug_info>& bug_profiles();
core::result<bug> bug_by_name(std::string_view name);
std::string_view bug_name(bug b);

// Conforming variants (D153): choices the model leaves open, made otherwise
// than the reference makes them. A variant is a conforming DUT, not a bug:
// the whole plan must pass against each (mrct selftest), so that no check
// stands on a choice of the reference's that another implementation may make
// differently (docs/bug-profiles.md "Conforming variants"). Several combine.
enum class variant : std::uint8_t {
    ack_each,     // receiver: ACKs every data packet at once (§5 asks for one at the latest every 8 or 20 us)
    trig_first,   // receiver: an ACK the interval sends names the first packet of its run, not the latest (D53's choice)
    ackreq_none,  // sender: never sets BTH AckReq (the model says when a receiver must answer it, not when to set it)
    path_random,  // sender: a new packet takes a path drawn at random among those with headroom (MR-PATH-5 names no order)
    rtt_every,    // sender: an RTT sample from every newly acknowledged packet sent once, not only TrigPPSN's (MR-RTO-3 names no sampling)
    grant_under,  // receiver: grants 92 % of the fair share (MR-GR-3's +-10 %)
    ip_fields,    // both: IP fields the model leaves free: DSCP 26, TTL / hop limit 255, an IPv6 flow label, ECT(0) on every frame
    vlan,         // both: every frame 802.1Q-tagged (VID 100, PCP 3): §2's [802.1Q]
    stream_rr,    // sender: first transmissions take turns among the streams with packets waiting (the model orders completions, not sends)
    close_late,   // sender: the first CLOSE leaves k_close_late after everything is acknowledged, not at once
    ack_first,    // receiver: a packet's ACK, when one is due at once, leaves before the NAK or RNR it draws
    grant_over,   // receiver: grants 108 % of the fair share (MR-GR-3's +-10 %)
    wrap_soon,    // both: initial PPSNs among the last 256 before the 24-bit wrap, connection IDs among the top 256
    ackreq_each,  // sender: sets BTH AckReq on every data packet
    reset_next,   // sender: a PATH_RESET restarts the path at its next PPSN (D22 leaves the value to the sender)
    nak_psn,      // receiver: BTH.PSN of a NAK or RNR is the PPSN it answers (D25: the model defines it for data and ACK only)
    port_reuse,   // sender: a moved path goes back to its port before last when no other path holds it (MR-PATH-1/4)
    timer_tick,   // both: timers on a k_timer_tick grid, as hardware keeps them: not-before timers round up, the ACK interval down
    pace_under,   // sender: paces at k_pace_under of the latest grant (MR-GR-2 bounds the rate from above only)
    answer_late,  // receiver: NAKs and RNRs leave k_answer_late after the packet, as from a firmware slow path
    fixed_point,  // sender: RTT samples in k_rtt_unit, alpha in 1/1024, cwnd cut to 1/256 packet, as hardware keeps them
};
// How long variant close-late waits before its first CLOSE.
inline constexpr core::nanos k_close_late = std::chrono::microseconds(200);
// Variant timer-tick's grid (4.096 us, InfiniBand's timeout unit), from the
// endpoint's time origin.
inline constexpr core::nanos k_timer_tick{4096};
// Variant pace-under's share of the grant.
inline constexpr double k_pace_under = 0.9;
// How long variant answer-late's NAKs and RNRs wait.
inline constexpr core::nanos k_answer_late = std::chrono::microseconds(50);
// Variant fixed-point: an RTT sample's unit (truncated), alpha's and cwnd's
// fractions (alpha to the nearest, a cut window down).
inline constexpr core::nanos k_rtt_unit{1024};
inline constexpr double k_alpha_unit = 1024, k_cwnd_unit = 256;
struct variant_info {
    variant id;
    std::string_view name;
    std::string_view freedom;  // the clause or decision whose open choice it takes otherwise
    std::string_view description;
};
const std::vector<variant_info>& variant_profiles();
// A variant's bit in a set of them (config::variants).
constexpr std::uint32_t variant_bit(variant v) { return 1u << static_cast<unsigned>(v); }
// "NAME[+NAME...]" as a set (variant_bit each); "none" is the empty set.
core::result<std::uint32_t> variants_by_name(std::string_view names);
std::string variants_text(std::uint32_t set);
// The variants that undo a bug profile where both are set (its wire then
// conforms): ip-fields puts ECT(0) back on ecn-not-ect's frames, ack-each
// answers every packet lazy-ack would leave. Left out when the selftest
// plants every bug with every variant (D157).
std::uint32_t variants_undoing(bug b);

struct config {
    std::uint32_t mtu = 4096;  // payload bytes per packet
    unsigned num_paths = 8;
    nanos rto_initial = 1ms, rto_min = 100us, rto_max = 100ms;
    unsigned retry_limit = 7;        // transmissions per packet
    unsigned ack_every = 8;          // packets per path
    nanos ack_delay = 20us;
    unsigned cwnd_initial = 16, cwnd_min = 1;
    double aimd_g = 1.0 / 16;
    unsigned max_inflight = 256;     // per path
    unsigned moves_after = 2;        // consecutive RTO expiries before a port move
    nanos grant_idle = 1ms;
    double inbound_rate_bps = 400e9;
    std::uint8_t rnr_timer_code = 14;  // 1.28 ms, sent in RNRs this endpoint makes
    bug bug_profile = bug::none;
    std::uint32_t variants = 0;  // conforming variants (bit per variant); chosen with the DUT, not by plans
    // Large simulations (mrct simulate --payload symbolic, issue 21): data
    // packets describe their payload instead of carrying it (wire::frame_spec::
    // symbolic_payload; IPv4, whole multiples of 4 bytes, else real bytes go),
    // and received ones are placed by offset without writing memory. Both ends
    // of a connection must agree; never in conformance runs, where a DUT, a
    // capture or a check reads the bytes. Not settable from plans.
    bool symbolic_payload = false;
    // A real-time host's transmit burst (D116): after this many SEND packets
    // of a connection the sender asks the host (endpoint::set_tx_turn) and,
    // if frames wait to be read, leaves the rest to the host's next turn,
    // after it has read them (0: no bound). A NIC's transmit scheduler
    // looks at a queue's state packet by packet; a software DUT that hands a
    // whole window to its host's stack at once learns of an RNR only when
    // the host has sent it all, which beside load took milliseconds
    // (docs/timing.md). mrct-refnic --tx-burst; not settable from plans,
    // never in virtual time.
    unsigned tx_burst = 0;
    // A real-time host's memory regions are in memory from registration on,
    // as a NIC's registration pins them: a region's first touch of a page
    // is then no page fault in the middle of a transfer, where it would
    // stall the DUT or the engine (zero_pages.h; virtual time leaves pages
    // to be faulted in when written, which costs nothing there).
    // mrct-refnic and the engine's peers in real time; not settable from plans.
    bool resident_regions = false;
    // Tests only: every path's first PPSN (normally random, MR-CONN-1), to place
    // a transfer across the 24-bit wrap.
    std::optional<std::uint32_t> initial_ppsn;
};

// Whether the endpoint runs bug profile b (the reference when bug::none).
inline bool has(const config& cfg, bug b) { return cfg.bug_profile == b; }
// Whether the endpoint makes conforming variant v's choice.
inline bool has(const config& cfg, variant v) { return (cfg.variants & variant_bit(v)) != 0; }

// The parameters plans (`dut:`, `peer:`) and the agent protocol's `configure`
// set by name, declared once (issue 23 item 1): config_set checks a value
// against its declaration, and docs/plan-format.md's table is generated from
// them (`mrct docs settings`, with the defaults of config above).
struct setting {
    enum class kind { count, duration, rate, bug };
    std::string_view name;
    kind type;
    std::uint64_t min = 0, max = 0;  // a count's range; a rate's least bits per second
    std::string_view doc;
    std::variant<unsigned config::*, std::uint8_t config::*, nanos config::*, double config::*, bug config::*> field;
};
const std::vector<setting>& settings();
// A setting's value in `c`, as a plan writes it ("1ms", "400Gbps", "none").
std::string setting_text(const config& c, const setting& s);
// Sets one parameter by its name.
core::status config_set(config& c, std::string_view name, std::string_view value);
// The settings table of docs/plan-format.md.
std::string settings_markdown();

}  // namespace mrct::endpoint
