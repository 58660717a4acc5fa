// The sending half of the reference endpoint: spraying, per-path PPSN and
// windows, SACK processing and loss detection, per-path RTO (RFC 6298, Karn),
// port moves, AIMD (MR-CC-2), grant pacing, RNR pauses and completions.
//
// A data packet's life on a path:
//
//   fresh --transmit--> in flight --ACK/SACK--> acked --(all of message)--> completion
//                          |  ^
//                  loss or |  | resend (same PPSN, RETX), at most retry_limit transmissions
//                  RTO     +--+
#include <algorithm>
#include <cmath>

#include "core/serial.h"
#include "endpoint/impl.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"
#include "wire/rnr_timer.h"

namespace mrct::endpoint {

using namespace mrct::wire;
using core::psn24;

// RTO handlers, defined below; timers call them.
void on_rto(endpoint& e, connection& c, unsigned p);
void fail_path(endpoint& e, connection& c, unsigned p);
void on_rto_shared(endpoint& e, connection& c);

namespace {

using impl = endpoint::impl;

// Whether sends wait for the pacer (MR-GR-2): from the first accepted ACK,
// under a limited grant.
bool paced(const endpoint& e, const connection& c) {
    return c.grant != 0 && c.grant != k_grant_unlimited && !has(e.cfg(), bug::ignore_grant);
}

// The path whose RTT estimate and timer serve path p (one shared under shared-rto).
path_tx& estimator(connection& c, unsigned p, const config& cfg) {
    return has(cfg, bug::shared_rto) ? c.tx[0] : c.tx[p];
}

// Installed units keep the estimate: the path's fields mirror it, for
// the readers (pick_path, ctrl_interval, path_info).
void sync_estimate(connection& c, unsigned p) {
    const auto est = c.hw->rto_read(p);
    auto& t = c.tx[p];
    t.has_rtt = est.has_rtt;
    t.srtt = est.srtt;
    t.rttvar = est.rttvar;
    t.backoff = est.backoff;
}

nanos current_rto(const path_tx& est, const config& cfg) {
    nanos base = est.has_rtt ? std::clamp(est.srtt + 4 * est.rttvar, cfg.rto_min, cfg.rto_max) : cfg.rto_initial;
    for (unsigned i = 0; i < est.backoff && base < cfg.rto_max; ++i) base *= 2;
    return std::min(base, cfg.rto_max);
}

bool is_send(const out_message& m) { return is_send_opcode(m.opcode); }

bool tag_paused(const connection& c, const out_message& m, nanos now) {
    if (!is_send(m)) return false;
    if (c.hw) return c.hw->rnr_paused(m.tag);
    if (now < c.all_paused_until) return true;
    auto it = c.tag_paused_until.find(m.tag);
    return it != c.tag_paused_until.end() && now < it->second;
}

bool rnr_missing(const connection& c) { return c.rnr_seqs.missing(); }

}  // namespace

// ------------------------------------------------------------------ transmit

namespace {

void send_data(endpoint& e, connection& c, unsigned p, std::uint32_t ppsn, const inflight_pkt& pkt, bool retx) {
    const config& cfg = e.cfg();
    auto& t = c.tx[p];
    const out_message& m = c.msgs[pkt.unit.msg];
    const std::uint32_t off = pkt.unit.index * c.mtu;
    const std::size_t size = m.data ? m.data->size() : 0;  // data is freed once complete
    const std::size_t have = size > off ? size - off : 0;
    const auto len = static_cast<std::uint32_t>(std::min<std::size_t>(c.mtu, have));
    const bool last = pkt.unit.index + 1 == m.npkts;
    auto s = impl::base(e, c, static_cast<opcode>(m.opcode), t.port);
    s.ipv4.ecn = s.ipv6.ecn = has(cfg, bug::ecn_not_ect) ? k_ecn_not_ect : k_ecn_ect0;  // MR-HDR-4
    s.bth.psn = ppsn;
    s.bth.ack_req = ((last || retx) && !has(cfg, variant::ackreq_none)) || has(cfg, variant::ackreq_each);
    if (has(cfg, bug::reserved_bits_set)) s.bth.resv7 = 0x01;  // MR-HDR-1 broken
    std::uint8_t flags = 0;
    if (pkt.unit.index == 0) flags |= k_flag_som;
    if (last) flags |= k_flag_eom;
    if (retx) flags |= k_flag_retx;
    // The unit's Attempt, not the message's: a resend of a PPSN is the packet
    // that PPSN first carried (MR-SACK-3, MR-RTO-4), even after an RNR moved
    // the message to a later Attempt. (Taking the message's let an expiry
    // resend an Attempt-2 PPSN as Attempt 3, a second copy of a packet the
    // new Attempt had already sent under its own PPSN: RNR-006 beside stress-ng.)
    if (pkt.unit.rnr_resend) flags |= k_flag_rnr_resend;
    s.mrh = wire::mrh{1, static_cast<std::uint8_t>(t.epoch & 0xF), flags, static_cast<std::uint8_t>(p),
                      static_cast<std::uint8_t>(pkt.unit.attempt & 0xF), 0, m.stream,
                      static_cast<std::uint16_t>(is_send(m) ? m.tag : 0), m.stream_seq, off};
    const auto total = m.length;
    if (is_write_opcode(m.opcode)) s.reth = wire::reth{m.remote_va + off, m.rkey, total};
    else s.seth = wire::seth{m.recv_idx, total};
    if (m.imm) s.immdt = *m.imm;
    if (len && cfg.symbolic_payload && len % 4 == 0 && s.ip_version == 4) s.symbolic_payload = len;
    else if (len) s.payload_view = core::bytes_view(m.data->data() + off, len);
    impl::send(e, s);
    t.st.packets_sent++;
    t.st.bytes_sent += len;
    if (retx) t.st.retransmits++;
}

void arm_rto(endpoint& e, connection& c, unsigned p) {
    const config& cfg = e.cfg();
    connection* cp = &c;
    if (c.hw) {
        c.tx[p].rto = c.hw->rto_arm(p);
        return;
    }
    if (has(cfg, bug::shared_rto)) {
        // One timer for the connection: restarted by any path's progress (the defect).
        const nanos rto = current_rto(c.tx[0], cfg);
        for (auto& t : c.tx) t.rto = rto;
        c.shared_rto_timer->arm_in(rto, [&e, cp] { on_rto_shared(e, *cp); });
        return;
    }
    auto& t = c.tx[p];
    t.rto = current_rto(t, cfg);
    impl::arm_in(e, *t.rto_timer, t.rto, [&e, cp, p] { on_rto(e, *cp, p); });
}

bool any_inflight(const connection& c) {
    for (const auto& t : c.tx)
        if (t.inflight) return true;
    return false;
}

void restart_or_cancel(endpoint& e, connection& c, unsigned p) {
    if (c.hw) {
        if (c.tx[p].inflight) arm_rto(e, c, p);
        else c.hw->rto_cancel(p);
        return;
    }
    if (has(e.cfg(), bug::shared_rto)) {
        if (any_inflight(c)) arm_rto(e, c, p);
        else c.shared_rto_timer->cancel();
        return;
    }
    if (c.tx[p].inflight) arm_rto(e, c, p);
    else c.tx[p].rto_timer->cancel();
}

void fail_message(connection& c, std::uint32_t idx, wc_status st) {
    auto& m = c.msgs[idx];
    if (m.done || m.failed) return;
    m.failed = true;
    m.status = st;
}

// MR-SACK-6 (D21): a packet already transmitted `sent` times may go once
// more while that is below the retry limit; otherwise its message fails and
// the connection goes into error, and this returns true.
bool retry_limit_reached(endpoint& e, connection& c, std::uint32_t msg, unsigned sent) {
    const unsigned limit = has(e.cfg(), bug::early_give_up) ? std::min(3u, e.cfg().retry_limit) : e.cfg().retry_limit;
    if (sent < limit || has(e.cfg(), bug::no_retry_limit)) return false;
    fail_message(c, msg, wc_status::retry_exceeded);
    impl::fail_connection(e, c);
    return true;
}

// Resends the packet at window index i of path p with its PPSN. Returns false
// when the retry limit ends the connection.
bool resend_same(endpoint& e, connection& c, unsigned p, std::size_t i) {
    auto& t = c.tx[p];
    auto& pkt = t.window[i];
    if (retry_limit_reached(e, c, pkt.unit.msg, pkt.tx_count)) return false;
    pkt.tx_count++;
    pkt.retransmitted = true;
    pkt.last_sent = e.sched().now();
    pkt.tx_seq = ++t.tx_seq;
    pkt.epoch = t.epoch;
    send_data(e, c, p, psn24::add(t.base_ppsn, static_cast<std::uint32_t>(i)), pkt, true);
    return true;
}

// Queues a resend of window index i on path p with its PPSN; pump() sends it
// before anything else, within the pacing budget (MR-GR-2 counts resends).
// One detection causes one resend: the packet is marked until the resend
// goes, and its transmission order (tx_seq) is taken when it goes, not now.
// (Numbering it at queue time let an ACK of another packet's first
// transmission, queued for resend after it, count as "sent after" its
// latest transmission: beside stress-ng, a burst of ACKs read late found
// one packet lost four times and resent it four times in 25 us, and the
// write ran out of retries.)
void queue_resend(connection& c, unsigned p, std::size_t i, bool even_if_acked = false, bool expiry = false,
                  bool move = false) {
    auto& t = c.tx[p];
    t.window[i].resend_queued = true;
    c.same_ppsn.push_back({p, psn24::add(t.base_ppsn, static_cast<std::uint32_t>(i)), even_if_acked, expiry, move});
}

// An RTO expiry takes effect (D78): it is counted and, the second of a run,
// moves the path to a new source port with PathEpoch + 1 (MR-PATH-2/4). At
// the expiry when its resend goes at once; paced, when the resend leaves.
void carry_out_expiry(endpoint& e, connection& c, unsigned p, bool move) {
    auto& t = c.tx[p];
    t.st.rto_expiries++;
    e.stats_mut().rto_retransmits++;
    if (!move) return;
    impl::move_port(e, c, t);
    if (!has(e.cfg(), bug::no_epoch_bump)) t.epoch = (t.epoch + 1) & 0xF;
    t.st.moves++;
}

// MR-RTO-4: an expiry resends the path's oldest unacknowledged PPSN. Under a
// grant it goes through the pacer like every other resend (MR-GR-2 counts
// them): sent straight from the timer, the expiries of several paths left
// in one burst (a DUT held by its host broke its grant so in GR-050). Every
// expiry queues its own resend, even where one already waits: an expiry the
// wire did not show (two expiries, one resend) made the port move look
// early (PATH-002 beside stress-ng, MR-PATH-4). With `restart` (the
// path's own expiry), when the resend leaves, not now, the path's timer
// restarts (D74) and the expiry takes effect, counted and the port moved
// when `move` (D78); if an ACK acknowledges the packet first, it takes none.
// Otherwise the wire showed a move after what looked like one expiry: the
// next expiry came while the pacer held the resend (over agent+pcap), or an
// ACK overtook the second expiry's resend (over IPv6, beside stress-ng).
enum class resent { sent, queued, none, ended };
resent resend_oldest(endpoint& e, connection& c, unsigned p, bool restart, bool move = false) {
    auto& t = c.tx[p];
    const bool newest = restart && has(e.cfg(), bug::rto_resends_newest);
    for (std::size_t k = 0; k < t.window.size(); ++k)
        if (const std::size_t i = newest ? t.window.size() - 1 - k : k; !t.window[i].acked) {
            if (!paced(e, c)) {
                if (restart) carry_out_expiry(e, c, p, move);
                return resend_same(e, c, p, i) ? resent::sent : resent::ended;
            }
            queue_resend(c, p, i, false, restart, move);
            impl::pump(e, c);
            return c.state == conn_state::established ? resent::queued : resent::ended;
        }
    if (restart) carry_out_expiry(e, c, p, move);
    return resent::none;
}

// Advances the pacer by the frame just sent (MR-GR-2): rates count IP bytes,
// IP header through ICRC, at the latest grant.
void charge_pacer(endpoint& e, connection& c, nanos now) {
    const double share = has(e.cfg(), variant::pace_under) ? k_pace_under : 1.0;
    const double rate = c.grant * static_cast<double>(k_grant_unit_bps) * share;
    const double bytes = static_cast<double>(e.last_frame_size() - k_eth_len);
    c.next_pace = std::max(now, c.next_pace) + nanos{static_cast<std::int64_t>(std::ceil(bytes * 8e9 / rate))};
}

void transmit_new(endpoint& e, connection& c, unsigned p, tx_unit u, bool retx) {
    auto& t = c.tx[p];
    inflight_pkt pkt;
    pkt.unit = u;
    pkt.first_sent = pkt.last_sent = e.sched().now();
    pkt.tx_seq = ++t.tx_seq;
    pkt.epoch = t.epoch;
    pkt.tx_count = static_cast<std::uint8_t>(u.sent + 1);
    pkt.retransmitted = retx;
    const std::uint32_t ppsn = t.next_ppsn;
    t.next_ppsn = psn24::add(t.next_ppsn, 1);
    t.window.push_back(pkt);
    t.inflight++;
    e.stats_mut().data_sent++;
    send_data(e, c, p, ppsn, pkt, retx);
    const bool timer_running = c.hw                            ? c.hw->rto_armed(p)
                               : has(e.cfg(), bug::shared_rto) ? c.shared_rto_timer->armed()
                                                               : t.rto_timer->armed();
    if (!timer_running) arm_rto(e, c, p);
}

// A path with window headroom (MR-CC-4), preferring low RTT (D17): paths whose
// smoothed RTT is within 25 % (+2 us) of the best path with headroom count as
// equal and take turns from the cursor; a clearly slower path gets data only
// when none of those has headroom. Every path with headroom is used while data
// waits (MR-PATH-5). A path without an RTT sample yet counts as fastest.
int pick_path(endpoint& e, connection& c, int except = -1) {
    const unsigned n = c.num_paths;
    auto eligible = [&](unsigned p) {
        if (static_cast<int>(p) == except) return false;
        if (has(e.cfg(), bug::single_path) && p != 0) return false;
        const auto& t = c.tx[p];
        if (t.failed) return false;  // taken out of use (MR-PATH-6)
        if (has(e.cfg(), bug::window_overrun)) return t.inflight < 300;
        // MR-CC-4: inflight + 1 <= cwnd. MR-SACK-5: at most 256 PPSNs from CumAck,
        // SACKed ones included (the window deque spans CumAck .. next PPSN - 1).
        return t.inflight + 1 <= std::min<double>(t.cwnd, e.cfg().max_inflight) &&
               t.window.size() < e.cfg().max_inflight;
    };
    auto rtt = [&](unsigned p) {
        const auto& est = estimator(c, p, e.cfg());
        return est.has_rtt ? est.srtt : nanos{0};
    };
    if (has(e.cfg(), variant::path_random)) {  // D153: any path with headroom, drawn
        unsigned k = 0;
        for (unsigned p = 0; p < n; ++p) k += eligible(p) ? 1 : 0;
        if (!k) return -1;
        auto draw = impl::rng(e).below(k);
        for (unsigned p = 0; p < n; ++p)
            if (eligible(p) && draw-- == 0) return static_cast<int>(p);
    }
    nanos best = core::k_never;
    for (unsigned p = 0; p < n; ++p)
        if (eligible(p)) best = std::min(best, rtt(p));
    if (best == core::k_never) return -1;
    const nanos limit = best + best / 4 + nanos{2000};
    for (unsigned k = 0; k < n; ++k) {
        const unsigned p = (c.rr + k) % n;
        if (eligible(p) && rtt(p) <= limit) {
            c.rr = p + 1;
            return static_cast<int>(p);
        }
    }
    return -1;  // unreachable: the best path qualifies
}

}  // namespace

// ------------------------------------------------------------------ failover

namespace {
void send_path_reset(endpoint& e, connection& c, unsigned p) {
    auto& t = c.tx[p];
    if (!t.failed || t.reset_acked) return;
    if (t.reset_tries++ >= e.cfg().retry_limit) return;  // failed until the next PROBE_REPLY
    impl::send_ctrl(e, c, ctrl_type::path_reset,
                    {tlv::path_id(static_cast<std::uint8_t>(p)), tlv::initial_ppsn({t.reset_ppsn})}, c.remote_id,
                    impl::ctrl_port(c));
    connection* cp = &c;
    impl::arm_in(e, *t.reset_timer, impl::ctrl_interval(e, c), [&e, cp, p] { send_path_reset(e, *cp, p); });
}

void send_probe(endpoint& e, connection& c, unsigned p) {
    auto& t = c.tx[p];
    if (!t.failed) return;
    const auto nonce = static_cast<std::uint32_t>(e.sched().now().count() * 2654435761u + p);
    t.probe_nonces.push_back(nonce);
    // A PROBE leaves from the probed path's current port (§2).
    impl::send_ctrl(e, c, ctrl_type::probe, {tlv::path_id(static_cast<std::uint8_t>(p)), tlv::nonce(nonce)}, c.remote_id,
                    t.port);
    connection* cp = &c;
    impl::arm_in(e, *t.probe_timer, e.cfg().rto_max, [&e, cp, p] { send_probe(e, *cp, p); });
}
}  // namespace

// §5 "Failed path": nothing more is sent on it; its unacknowledged packets are
// re-sent on the other paths (before new data) with new PPSNs and RETX; the
// sender sends PATH_RESET for it and, from one RTO max on, a PROBE every RTO max.
void fail_path(endpoint& e, connection& c, unsigned p) {
    auto& t = c.tx[p];
    t.failed = true;
    t.rto_timer->cancel();
    if (c.hw) c.hw->rto_cancel(p);
    std::deque<tx_unit> again;
    for (auto& pkt : t.window) {
        if (pkt.acked) continue;
        tx_unit u = pkt.unit;
        u.retx = true;
        u.sent = pkt.tx_count;
        again.push_back(u);
    }
    t.window.clear();
    t.inflight = 0;
    t.base_ppsn = t.next_ppsn;
    c.resend.insert(c.resend.begin(), again.begin(), again.end());
    // D22: the restart PPSN is the sender's; variant reset-next continues the sequence.
    t.reset_ppsn = has(e.cfg(), variant::reset_next)
                       ? t.next_ppsn
                       : static_cast<std::uint32_t>((t.next_ppsn + 0x10000 + (e.sched().now().count() & 0xFFFF)) & 0xFFFFFF);
    t.reset_acked = t.probe_ok = false;
    t.reset_tries = 0;
    t.probe_nonces.clear();
    send_path_reset(e, c, p);
    connection* cp = &c;
    impl::arm_in(e, *t.probe_timer, e.cfg().rto_max, [&e, cp, p] { send_probe(e, *cp, p); });
    impl::pump(e, c);
}

// MR-PATH-7: back in service only after a PROBE_REPLY from the path's own port
// echoing a nonce sent since the failure, and the PATH_RESET_ACK.
void endpoint::impl::on_path_ctrl(endpoint& e, connection& c, const frame& f) {
    const auto fields = read_ctrl_tlvs(f.tlvs);
    if (!fields.path_id || *fields.path_id >= c.num_paths) {
        ++e.stats_mut().ctrl_ignored;
        return;
    }
    const unsigned p = *fields.path_id;
    auto& t = c.tx[p];
    if (!t.failed) return;
    if (f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::probe_reply)) {
        const bool known = fields.nonce && std::find(t.probe_nonces.begin(), t.probe_nonces.end(), *fields.nonce) !=
                                               t.probe_nonces.end();
        if (!known || f.udp.sport != t.port) return;
        t.probe_ok = true;
        if (!t.reset_acked) {  // an unanswered PATH_RESET is tried again after a reply
            t.reset_tries = 0;
            send_path_reset(e, c, p);
        }
    } else {
        if (!fields.initial_ppsn || fields.initial_ppsn->size() != 1 || fields.initial_ppsn->front() != t.reset_ppsn) return;
        t.reset_acked = true;
        t.reset_timer->cancel();
    }
    if (!(t.probe_ok && t.reset_acked)) return;
    // Restart as a new path: initial window, alpha 1, initial RTO.
    const config& cfg = e.cfg();
    t.failed = false;
    t.probe_timer->cancel();
    t.next_ppsn = t.base_ppsn = t.reset_ppsn;
    t.window.clear();
    t.inflight = 0;
    t.hi_acked_tx_seq = 0;
    t.hi_acked_by_epoch.fill(0);
    t.has_rtt = false;
    t.backoff = 0;
    if (c.hw) {
        c.hw->rto_reset(p);
        sync_estimate(c, p);
    }
    t.moves_counter = 0;
    t.rto = cfg.rto_initial;
    t.cwnd = cfg.cwnd_initial;
    t.alpha = 1;
    t.window_open = false;
    pump(e, c);
}

// RTO expiry on path p (MR-RTO-1/3/4, MR-PATH-4).
void on_rto(endpoint& e, connection& c, unsigned p) {
    if (c.state != conn_state::established) {
        if (c.hw) c.hw->rto_cancel(p);
        return;
    }
    const config& cfg = e.cfg();
    auto& t = c.tx[p];
    if (t.inflight == 0) {  // nothing to resend: installed units drop the expiry
        if (c.hw) c.hw->rto_cancel(p);
        return;
    }
    if (c.hw) {  // the units count the expiry
        c.hw->rto_expire(p);
        sync_estimate(c, p);
    } else {
        t.backoff++;
    }
    const bool move = ++t.moves_counter >= cfg.moves_after && !has(cfg, bug::no_port_move);
    if (move) t.moves_counter = 0;
    t.cwnd = cfg.cwnd_min;  // only this path's window (MR-RTO-4)
    unsigned in_service = 0;
    for (const auto& q : c.tx) in_service += !q.failed;
    // §5: the last path in service never fails; the retry limit ends it.
    if (t.backoff >= 2 * cfg.moves_after && (in_service > 1 || has(cfg, bug::fails_last_path)) && !has(cfg, bug::no_port_move) &&
        !has(cfg, bug::no_failover)) {
        carry_out_expiry(e, c, p, move);
        fail_path(e, c, p);  // the 4th consecutive expiry moved the port and fails the path
        return;
    }
    // RFC 6298 (5.6): the timer starts with the retransmission. Paced, that is
    // when the queued resend leaves: pump restarts the timer then (D74), and
    // the expiry takes effect then (D78).
    const auto r = resend_oldest(e, c, p, true, move);
    if (r == resent::ended) return;
    if (r != resent::queued) arm_rto(e, c, p);
}

// The shared-rto defect: one timer; on expiry every path with packets in
// flight resends its oldest and collapses to one packet.
void on_rto_shared(endpoint& e, connection& c) {
    if (c.state != conn_state::established) return;
    c.tx[0].backoff++;
    for (unsigned p = 0; p < c.num_paths; ++p) {
        auto& t = c.tx[p];
        if (!t.inflight) continue;
        carry_out_expiry(e, c, p, false);  // at once: the defect's one timer restarts at the expiry
        t.cwnd = e.cfg().cwnd_min;
        if (resend_oldest(e, c, p, false) == resent::ended) return;
    }
    arm_rto(e, c, 0);
}

void endpoint::impl::pump(endpoint& e, connection& c) {
    if (c.state != conn_state::established) return;
    if (e.batching_) {  // after the batch: see endpoint::begin_batch
        auto& w = e.pump_after_batch_;
        if (std::find(w.begin(), w.end(), c.local_id) == w.end()) w.push_back(c.local_id);
        return;
    }
    const nanos now = e.sched().now();
    const bool limited = paced(e, c);
    // A real-time host's burst of SEND packets (config::tx_burst, D116): the
    // rest after the host's next read, if frames came meanwhile (an RNR).
    const unsigned burst = e.cfg().tx_burst;
    if (c.burst_at != now) {
        c.burst_at = now;
        c.burst_sent = 0;
    }
    for (;;) {
        if (limited && now < c.next_pace) {
            connection* cp = &c;
            if (!c.pace_timer->armed()) c.pace_timer->arm_at(c.next_pace, [&e, cp] { pump(e, *cp); });
            return;
        }
        // SACK/RTO resends of a PPSN first (skipped if acknowledged meanwhile).
        if (!c.same_ppsn.empty()) {
            const auto rq = c.same_ppsn.front();
            c.same_ppsn.pop_front();
            const unsigned p = rq.path;
            auto& t = c.tx[p];
            const std::uint32_t i = psn24::diff(rq.ppsn, t.base_ppsn);
            // Acknowledged (or the path failed) before it left: dropped, and an
            // expiry's with it (D78: the ACK ended the run of expiries).
            if (t.failed || i >= t.window.size()) continue;
            t.window[i].resend_queued = false;
            if (t.window[i].acked && !rq.even_if_acked) continue;
            if (rq.expiry) carry_out_expiry(e, c, p, rq.move);
            if (!resend_same(e, c, p, i)) return;
            if (limited) charge_pacer(e, c, now);
            if (rq.expiry) arm_rto(e, c, p);  // the timer starts with the expiry's resend (D74)
            continue;
        }
        // Failover and RNR re-sends go first, then first transmissions. A
        // paused tag holds only packets going out for the first time (an RNR
        // re-send is the first of its Attempt); failover re-sends still go (§4).
        std::deque<tx_unit>* q = nullptr;
        std::deque<tx_unit>::iterator it;
        auto ready = [&](const tx_unit& u) {
            const auto& m = c.msgs[u.msg];
            if (u.attempt != m.attempt || m.failed || m.done) return false;  // stale: dropped when reached
            // rnr-ignores-pause: new packets of the paused tag go on (bug profile).
            return u.retx || !tag_paused(c, m, now) || has(e.cfg(), bug::rnr_ignores_pause);
        };
        for (auto* cand : {&c.resend, &c.fresh}) {
            for (it = cand->begin(); it != cand->end(); ++it) {
                if (!ready(*it)) continue;
                q = cand;
                break;
            }
            if (q) break;
        }
        // Variant stream-rr (D153): a first transmission of another stream
        // than the last one's, if one is ready within the next k_rr_look.
        if (q == &c.fresh && has(e.cfg(), variant::stream_rr) && c.msgs[it->msg].stream == c.rr_stream) {
            constexpr std::ptrdiff_t k_rr_look = 4096;  // bounds the search behind a long message
            const auto end = c.fresh.end() - it > k_rr_look ? it + k_rr_look : c.fresh.end();
            for (auto o = it + 1; o != end; ++o)
                if (c.msgs[o->msg].stream != c.rr_stream && ready(*o)) {
                    it = o;
                    break;
                }
        }
        // Drop stale units at the heads so the queues do not grow.
        for (auto* cand : {&c.resend, &c.fresh}) {
            while (!cand->empty() && (cand->front().attempt != c.msgs[cand->front().msg].attempt ||
                                      c.msgs[cand->front().msg].failed)) {
                if (q == cand && it == cand->begin()) break;
                cand->pop_front();
            }
        }
        if (!q) return;
        // Only SEND packets count: an RNR is the one frame that can take back
        // what the window allows, and only from a SEND (a WRITE's stream has
        // nothing an arriving frame stops; its windows fill as before, D116).
        const bool counted = burst && is_send(c.msgs[it->msg]);
        if (counted && c.burst_sent >= burst) {
            if (e.tx_turn_ && !e.tx_turn_()) {
                c.burst_sent = 0;  // sent, and nothing came meanwhile: on with the next
            } else {
                connection* cp = &c;
                if (!c.burst_timer->armed()) c.burst_timer->arm_at(now + nanos{1}, [&e, cp] { pump(e, *cp); });
                return;
            }
        }
        const int p = pick_path(e, c);
        if (p < 0) return;
        const tx_unit u = *it;
        if (q == &c.fresh) c.rr_stream = c.msgs[u.msg].stream;
        q->erase(it);
        if (retry_limit_reached(e, c, u.msg, u.sent)) return;  // a failover re-send counts too
        transmit_new(e, c, static_cast<unsigned>(p), u, u.retx);
        if (counted) ++c.burst_sent;
        if (limited) charge_pacer(e, c, now);
    }
}

// ------------------------------------------------------------------ ACK

void endpoint::impl::on_ack(endpoint& e, connection& c, const frame& f) {
    const config& cfg = e.cfg();
    auto& k = e.stats_mut();
    const auto& a = f.ackh;
    if (c.state != conn_state::established || a.path_id >= c.num_paths) {
        ++k.acks_ignored;
        return;
    }
    const unsigned p = a.path_id;
    auto& t = c.tx[p];
    if (t.failed) {  // a sender ignores ACKs for a failed path
        ++k.acks_ignored;
        return;
    }
    if (a.ece() && has(cfg, bug::pause_frames)) impl::send_pause(e);
    const std::uint32_t cum = f.bth.psn;
    // An ACK older than what we already took as acknowledged (CumAck below our
    // base: ACKs reordered, or an earlier ACK covered more) still carries SACK
    // bits; `behind` shifts them onto our window.
    const std::uint32_t behind = psn24::lt(cum, t.base_ppsn) ? psn24::diff(t.base_ppsn, cum) : 0;
    // Ignore ACKs whose CumAck is beyond what was sent on the path.
    if (!behind && psn24::diff(cum, t.base_ppsn) > psn24::diff(t.next_ppsn, t.base_ppsn)) {
        ++k.acks_ignored;
        return;
    }
    ++k.acks_received;
    c.grant = a.grant_rate == 0 ? 1 : a.grant_rate;  // the latest accepted ACK's grant
    if (a.ece()) t.st.ece_received++;
    c.rnr_seqs.count(a.rnr_count);
    const bool missing = rnr_missing(c);

    std::uint32_t newly = 0;
    const std::uint32_t trig = a.trig_ppsn.ppsn();
    auto ack_one = [&](inflight_pkt& pkt, std::uint32_t ppsn) {
        pkt.acked = true;
        t.inflight--;
        ++newly;
        t.hi_acked_tx_seq = std::max(t.hi_acked_tx_seq, pkt.tx_seq);
        auto& hi = t.hi_acked_by_epoch[pkt.epoch & 0xF];
        hi = std::max(hi, pkt.tx_seq);
        if (ppsn == trig && c.hw) {  // the units apply Karn's rule
            c.hw->rto_sample(p, pkt.first_sent, pkt.last_sent, pkt.retransmitted, e.arrival());
            sync_estimate(c, p);
        } else if ((ppsn == trig || has(cfg, variant::rtt_every)) && (!pkt.retransmitted || has(cfg, bug::karn_violation))) {
            // RFC 6298 with Karn's rule: no samples from retransmitted packets.
            auto& est = estimator(c, p, cfg);
            // karn-violation measures a retransmitted packet from its first
            // transmission: the ambiguity Karn's rule exists to avoid.
            // From the ACK's arrival (D80): a real-time host's read lag is not the path's RTT.
            const nanos sent = pkt.retransmitted ? pkt.first_sent : pkt.last_sent;
            nanos r = std::max(e.arrival(), sent) - sent;
            if (has(cfg, variant::fixed_point)) r -= r % k_rtt_unit;
            if (!est.has_rtt) {
                est.srtt = r;
                est.rttvar = r / 2;
                est.has_rtt = true;
            } else {
                est.rttvar = (3 * est.rttvar + (est.srtt > r ? est.srtt - r : r - est.srtt)) / 4;
                est.srtt = (7 * est.srtt + r) / 8;
            }
        }
        auto& m = c.msgs[pkt.unit.msg];
        if (pkt.unit.attempt == m.attempt && !m.pkt_acked[pkt.unit.index]) {
            m.pkt_acked[pkt.unit.index] = true;
            m.acked++;
            if (missing && is_send(m)) m.held = true;  // MR-RNR-6
        }
    };
    // Only a CumAck ahead of the base moves it: an older ACK (behind > 0)
    // walked the base forward through the whole 24-bit space, acknowledging
    // every packet in flight, sent or lost (found by mrct interop through
    // mrct emulate's reordering: a lost WRITE packet completed unsent).
    // stale-ack-walks: the walk as it was (bug profile).
    while ((!behind || has(cfg, bug::stale_ack_walks)) && t.base_ppsn != cum) {
        if (t.window.empty()) break;
        if (!t.window.front().acked) ack_one(t.window.front(), t.base_ppsn);
        t.window.pop_front();
        t.base_ppsn = psn24::add(t.base_ppsn, 1);
    }
    for (unsigned b = a.sack.next_set(std::max(1u, behind)); b < sack256::k_bits; b = a.sack.next_set(b + 1)) {
        const unsigned i = b - behind;  // window index of PPSN cum + b
        if (i >= t.window.size()) break;
        if (!t.window[i].acked) ack_one(t.window[i], psn24::add(t.base_ppsn, i));
    }
    if (newly) {
        // Timer restart (§5 terms): ends the run of consecutive expiries on this path.
        if (c.hw) {
            c.hw->rto_acked(p);
            sync_estimate(c, p);
        } else {
            estimator(c, p, cfg).backoff = 0;
        }
        t.moves_counter = 0;
        restart_or_cancel(e, c, p);
    }

    // MR-CC-2: per path, at the end of each window.
    if (!t.window_open) {
        t.window_open = true;
        t.window_end = t.next_ppsn;
        t.ce_at_window_start = a.ce_count;
        t.acked_in_window = 0;
    } else {
        t.acked_in_window += newly;
        if (t.acked_in_window > 0 && psn24::le(t.window_end, t.base_ppsn)) {
            const auto ce = static_cast<std::uint16_t>(a.ce_count - t.ce_at_window_start);
            double F = std::min(1.0, static_cast<double>(ce) / t.acked_in_window);
            if (has(cfg, bug::ignore_ecn)) F = 0;
            t.alpha = (1 - cfg.aimd_g) * t.alpha + cfg.aimd_g * F;
            const bool fixed = has(cfg, variant::fixed_point);
            if (fixed) t.alpha = std::round(t.alpha * k_alpha_unit) / k_alpha_unit;
            if (F > 0) {
                for (unsigned q = 0; q < c.num_paths; ++q) {
                    if (q != p && !has(cfg, bug::shared_cwnd)) continue;  // MR-CC-3
                    auto& w = c.tx[q];
                    double cut = w.cwnd * (1 - t.alpha / 2);
                    if (fixed) cut = std::floor(cut * k_cwnd_unit) / k_cwnd_unit;
                    w.cwnd = std::max<double>(cfg.cwnd_min, cut);
                }
            } else {
                t.cwnd = std::min<double>(t.cwnd + 1, cfg.max_inflight);
            }
            t.window_end = t.next_ppsn;
            t.ce_at_window_start = a.ce_count;
            t.acked_in_window = 0;
        }
    }

    // Loss (§5 terms): unacked, and a PPSN sent later in the same epoch is
    // acked. Each epoch counts on its own: an ACK may cover packets of two
    // epochs (around a port move), and the older epoch's later packet still
    // shows its earlier ones lost.
    if (!has(cfg, bug::no_fast_retx) && t.hi_acked_tx_seq > 0) {
        for (std::size_t i = 0; i < t.window.size(); ++i) {
            auto& pkt = t.window[i];
            if (pkt.acked || pkt.resend_queued || pkt.tx_seq >= t.hi_acked_by_epoch[pkt.epoch & 0xF]) continue;
            ++k.fast_retransmits;
            if (has(cfg, bug::retx_other_path)) {
                const int q = pick_path(e, c, static_cast<int>(p));
                if (q >= 0) {
                    const tx_unit u = pkt.unit;
                    pkt.acked = true;  // abandoned on this path
                    t.inflight--;
                    transmit_new(e, c, static_cast<unsigned>(q), u, true);
                    continue;
                }
            }
            queue_resend(c, p, i);
            if (has(cfg, bug::go_back_n)) {
                for (std::size_t j = i + 1; j < t.window.size(); ++j)
                    if (t.window[j].tx_seq < t.hi_acked_tx_seq || t.window[j].acked) queue_resend(c, p, j, true);
                break;
            }
        }
    }
    if (missing && !c.rnr_query_outstanding) {
        c.rnr_query_outstanding = true;
        c.rnr_query_tries = 0;
        send_rnr_query(e, c);
    }
    try_complete_sends(e, c);
    pump(e, c);
}

// ------------------------------------------------------------------ NAK, RNR

void endpoint::impl::on_nak(endpoint& e, connection& c, const frame& f) {
    ++e.stats_mut().naks_received;
    const auto& n = f.nakh;
    switch (static_cast<nak_code>(n.code)) {
    case nak_code::unknown_connection:
    case nak_code::connection_closing:
    case nak_code::invalid_path: return fail_connection(e, c);
    case nak_code::psn_out_of_window: return;  // not acknowledged; the RTO recovers
    default: break;
    }
    if (n.path_id >= c.num_paths) return;
    auto& t = c.tx[n.path_id];
    const std::uint32_t i = psn24::diff(n.nak_ppsn.ppsn(), t.base_ppsn);
    if (i >= t.window.size() || t.window[i].acked) return;
    // NAK outcomes (§5): the PPSN is acknowledged; the message fails.
    auto& pkt = t.window[i];
    pkt.acked = true;
    t.inflight--;
    wc_status st = wc_status::remote_operational;
    if (n.code == 0x01) st = wc_status::remote_invalid;
    if (n.code == 0x02) st = wc_status::remote_access;
    if (n.code == 0x0F) st = wc_status::header_mismatch;
    fail_message(c, pkt.unit.msg, st);
    restart_or_cancel(e, c, n.path_id);
    try_complete_sends(e, c);
    pump(e, c);
}

namespace {
void resume_tag(endpoint& e, connection& c, std::uint16_t tag, bool all) {
    std::deque<tx_unit> again;
    for (std::uint32_t idx = 0; idx < c.msgs.size(); ++idx) {
        auto& m = c.msgs[idx];
        if (!m.rnr_current || m.done || m.failed || (!all && m.tag != tag)) continue;
        // MR-RNR-4: re-send the whole message, new PPSNs, RNR_RESEND, Attempt + 1.
        m.rnr_current = false;
        m.attempt = c.hw ? c.hw->next_attempt(m.attempt) : (m.attempt + 1) & 0xF;
        m.acked = 0;
        m.held = false;
        m.pkt_acked.assign(m.npkts, false);
        for (std::uint32_t i = 0; i < m.npkts; ++i) again.push_back({idx, i, m.attempt, false, 0, true});
    }
    c.resend.insert(c.resend.end(), again.begin(), again.end());
    impl::pump(e, c);
}
}  // namespace

void endpoint::impl::resume(endpoint& e, connection& c, std::uint16_t tag) { resume_tag(e, c, tag, false); }

void endpoint::impl::on_rto(endpoint& e, connection& c, unsigned p) { mrct::endpoint::on_rto(e, c, p); }

void endpoint::impl::on_rnr(endpoint& e, connection& c, const frame& f) {
    const config& cfg = e.cfg();
    ++e.stats_mut().rnrs_received;
    const auto& r = f.rnrh;
    if (r.rnr_seq != 0) c.rnr_seqs.received(r.rnr_seq);
    auto sit = c.stream_pending.find(r.stream_id);
    out_message* m = nullptr;
    if (sit != c.stream_pending.end())
        for (auto idx : sit->second)
            if (c.msgs[idx].stream_seq == r.stream_seq) m = &c.msgs[idx];
    // Only for the message's current Attempt; installed units decide that,
    // pause the tag and say when it resumes (units.h).
    const bool live = m && is_send(*m) && !m->done && !m->failed;
    const bool paused = live && (c.hw ? c.hw->rnr_pause(m->tag, r.timer_code, r.attempt, m->attempt & 0xF, e.arrival())
                                      : r.attempt == (m->attempt & 0xF));
    if (paused) {
        m->rnr_current = true;
        if (has(cfg, bug::rnr_cuts_window))  // MR-RNR-5: treats the RNR as congestion
            for (auto& t : c.tx) t.cwnd = cfg.cwnd_min;
    }
    if (paused && !c.hw) {
        // MR-RNR-2: pause only this tag, until the latest-ending timer on it.
        // From its arrival (D80); variant timer-tick: the tick at or after it.
        const nanos until = impl::fire_at(e, e.arrival() + rnr_timer_duration(r.timer_code));
        const bool all = has(cfg, bug::rnr_pauses_all);
        nanos& slot = all ? c.all_paused_until : c.tag_paused_until[m->tag];
        slot = std::max(slot, until);
        auto& tm = c.tag_timers[all ? 0xFFFF : m->tag];
        if (!tm) tm = std::make_unique<sim::timer>(e.sched());
        if (!has(cfg, bug::frozen_rnr)) {  // frozen-rnr: never resumes (MR-RNR-4)
            connection* cp = &c;
            const std::uint16_t tag = m->tag;
            tm->arm_at(slot, [&e, cp, tag, all] { resume_tag(e, *cp, tag, all); });
        }
    }
    if (!rnr_missing(c)) on_rnr_sync(e, c, c.rnr_seqs.highest());
}

// RNR_QUERY is repeated every CTRL interval while a RnrSeq is missing, up to
// the retry limit; then the connection goes into error and held SENDs fail (§4).
void endpoint::impl::send_rnr_query(endpoint& e, connection& c) {
    if (!rnr_missing(c) || c.state != conn_state::established) return;
    if (c.rnr_query_tries++ >= e.cfg().retry_limit) return fail_connection(e, c);
    ++e.stats_mut().rnr_queries;
    send_ctrl(e, c, ctrl_type::rnr_query, {}, c.remote_id, ctrl_port(c));
    connection* cp = &c;
    impl::arm_in(e, *c.rnr_query_timer, ctrl_interval(e, c), [&e, cp] { send_rnr_query(e, *cp); });
}

void endpoint::impl::on_rnr_sync(endpoint& e, connection& c, std::uint16_t count) {
    c.rnr_seqs.count(count);
    if (rnr_missing(c)) {
        // RNR_SYNC left one missing: query again (§4), at the query timer
        // already armed. The query was answered, so the retry count starts
        // over (D106): the missing RNR may still be on its way on a slower
        // path (the receiver sends it from its rejected packet's port, the
        // RNR_SYNC from its CTRL port), and a query answered at once each
        // time must not run out the retry limit.
        c.rnr_query_tries = 0;
        return;
    }
    c.rnr_query_outstanding = false;
    c.rnr_query_tries = 0;
    c.rnr_query_timer->cancel();
    for (auto& m : c.msgs) m.held = false;
    try_complete_sends(e, c);
}

// ------------------------------------------------------------------ completions

void endpoint::impl::try_complete_sends(endpoint& e, connection& c) {
    const bool any_order = has(e.cfg(), bug::stream_order);
    auto finished = [](const out_message& m) { return m.failed || (m.acked == m.npkts && !m.rnr_current && !m.held); };
    // cross-stream-hol: nothing completes behind the first unfinished
    // message of any stream (messages are numbered in posting order).
    std::uint32_t first_unfinished = UINT32_MAX;
    if (has(e.cfg(), bug::cross_stream_hol))
        for (const auto& [stream, q] : c.stream_pending)
            for (const auto idx : q)
                if (!finished(c.msgs[idx])) {
                    first_unfinished = std::min(first_unfinished, idx);
                    break;
                }
    for (auto& [stream, q] : c.stream_pending) {
        for (auto it = q.begin(); it != q.end();) {
            auto& m = c.msgs[*it];
            if (!finished(m) || *it > first_unfinished) {
                if (!any_order) break;  // MR-STR-1: in StreamSeq order
                ++it;
                continue;
            }
            completion wc;
            wc.wr_id = m.wr_id;
            wc.kind = is_send(m) ? wc_kind::send : wc_kind::write;
            wc.status = m.failed ? m.status : wc_status::success;
            wc.stream = m.stream;
            wc.stream_seq = m.stream_seq;
            wc.tag = m.tag;
            wc.length = m.length;
            complete(e, c, wc);
            m.done = true;
            m.data.reset();
            it = q.erase(it);
        }
    }
    try_close(e, c, true);
}

}  // namespace mrct::endpoint
