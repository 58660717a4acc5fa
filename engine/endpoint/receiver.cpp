// The receiving half of the reference endpoint: per-path CumAck + 256-bit SACK
// state, ACK policy (MR-SACK-2), placement with no reorder buffer (MR-OOO-1/2),
// header-mismatch and access checks (NAK), RNR rejections (MR-RNR-1/6), grants
// (MR-GR-1/3), and receive completions in StreamSeq order (MR-STR-1).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/serial.h"
#include "endpoint/impl.h"
#include "wire/protocol.h"

namespace mrct::endpoint {

using namespace mrct::wire;
using core::psn24;
using impl = endpoint::impl;

namespace {

std::uint16_t grant_for(endpoint& e, const std::map<std::uint32_t, std::unique_ptr<connection>>& conns,
                        endpoint::active_count& a) {
    // MR-GR-3: the inbound rate shared by the connections that delivered data
    // within the grant idle time, in units of 100 Mb/s rounded down, 1..0xFFFE
    // (D52, docs/endpoint.md).
    const nanos now = e.sched().now();
    const nanos idle = e.cfg().grant_idle;
    if (now > a.valid_until || a.idle != idle) {
        a = {0, core::k_never, idle};
        for (const auto& [id, c] : conns)
            if (now - c->last_data <= idle) {
                ++a.n;
                a.valid_until = std::min(a.valid_until, c->last_data + idle);
            }
    }
    const unsigned active = has(e.cfg(), bug::grant_not_shared) ? 1u : std::max(a.n, 1u);
    double units = e.cfg().inbound_rate_bps / active / static_cast<double>(k_grant_unit_bps);
    // Variant grant-under: 92 % of the share, rounded up, so that it stays
    // within MR-GR-3's 10 % however few units the share is (rounded down,
    // 92 % of 15.6 units is 14: 10.4 % under, a fail on the wire's scaled cases).
    if (has(e.cfg(), variant::grant_under)) units = std::ceil(units * 0.92);
    if (has(e.cfg(), variant::grant_over)) units = std::floor(units * 1.08);  // rounded down: at most 8 % over
    return static_cast<std::uint16_t>(std::clamp(units, 1.0, 65534.0));
}

// Data arrived on `c` now: it is active until now + grant_idle.
void note_data(endpoint& e, connection& c, endpoint::active_count& a) {
    const nanos now = e.sched().now();
    const bool was_active = now - c.last_data <= e.cfg().grant_idle;
    c.last_data = now;
    if (now > a.valid_until || a.idle != e.cfg().grant_idle) return;  // recounted at the next ACK
    if (!was_active) {
        ++a.n;
        a.valid_until = std::min(a.valid_until, now + a.idle);
    }
    // An active connection's expiry only moved later: valid_until stays a safe bound.
}

// Adds [off, off+len) to the placed intervals (kept disjoint and merged);
// returns the bytes newly covered, so duplicates place nothing twice.
std::uint32_t add_interval(std::map<std::uint32_t, std::uint32_t>& iv, std::uint32_t off, std::uint32_t len) {
    if (len == 0) return 0;
    const std::uint32_t a = off, b = off + len;
    auto it = iv.upper_bound(a);
    std::uint32_t already = 0;
    if (it != iv.begin() && std::prev(it)->second >= a) {
        // Starts inside or right after an interval: that one grows in place
        // (the usual case, packets in order), so no node is made or freed.
        auto p = std::prev(it);
        if (p->second > a) already += std::min(b, p->second) - a;
        std::uint32_t hi = std::max(b, p->second);
        while (it != iv.end() && it->first <= b) {
            already += std::min(b, it->second) - it->first;
            hi = std::max(hi, it->second);
            it = iv.erase(it);
        }
        p->second = hi;
        return len - already;
    }
    std::uint32_t hi = b;
    while (it != iv.end() && it->first <= b) {
        already += std::min(b, it->second) - it->first;
        hi = std::max(hi, it->second);
        it = iv.erase(it);
    }
    iv.emplace_hint(it, a, hi);
    return len - already;
}

}  // namespace

void endpoint::impl::init_rx(endpoint& e, connection& c) {
    c.rx.clear();
    c.rx.resize(c.num_paths);
    for (unsigned p = 0; p < c.num_paths; ++p) {
        auto& r = c.rx[p];
        r.ack_timer = std::make_unique<sim::timer>(e.sched());
        restart_rx(c, p, c.peer_initial_ppsn[p]);
    }
}

void endpoint::impl::restart_rx(connection& c, unsigned p, std::uint32_t ppsn) {
    auto& r = c.rx[p];
    if (c.hw) c.hw->rx_restart(p, ppsn);
    r.cum_ack = ppsn;
    r.start_ppsn = ppsn;
    r.highest = psn24::add(ppsn, 0xFFFFFF);  // ppsn - 1: the next packet is no gap
    r.got.reset();
    r.ce_count = 0;  // CE accounting restarts with PATH_RESET
    r.unacked = 0;
    r.ack_timer->cancel();
}

namespace {

// Installed units keep CumAck, the SACK and CE_Count: the path's fields
// mirror them after each packet (the only command that changes them; a
// restart sets both alike), for the ACK and for conn_wire.
void mirror_rx(connection& c, unsigned p) {
    const auto u = c.hw->rx_ack(p);
    auto& r = c.rx[p];
    r.cum_ack = u.cum_ack;
    r.got = u.sack;
    r.ce_count = u.ce_count;
}

// `epoch`: the triggering packet's PathEpoch when it is not the path's
// latest packet's (variant trig-first).
void send_ack(endpoint& e, connection& c, unsigned p, std::uint32_t trig, bool ece, std::uint16_t sport,
              const std::map<std::uint32_t, std::unique_ptr<connection>>& conns,
              std::optional<std::uint8_t> epoch = std::nullopt) {
    auto& r = c.rx[p];
    auto s = impl::base(e, c, opcode::ack, sport);  // from the triggering packet's port
    s.bth.psn = r.cum_ack;
    wire::ackh a;
    a.path_epoch = epoch.value_or(r.last_epoch) & 0xF;
    a.flags = ece && !has(e.cfg(), bug::no_ece) ? k_ack_flag_ece : 0;
    a.path_id = static_cast<std::uint8_t>(p);
    a.trig_ppsn = ppsn32::of(trig);
    if (!has(e.cfg(), bug::no_sack)) a.sack = r.got;  // bit 0 is CumAck itself: never set
    a.ce_count = r.ce_count;
    a.grant_rate = has(e.cfg(), bug::grant_unlimited) ? k_grant_unlimited : grant_for(e, conns, e.active_mut());
    if (has(e.cfg(), bug::grant_zero_first) && c.acks_sent == 0) a.grant_rate = 0;
    ++c.acks_sent;
    a.rnr_count = c.rnr_count;
    s.ackh = a;
    impl::send(e, s);
    ++e.stats_mut().acks_sent;
    r.unacked = 0;
    r.ack_timer->cancel();
    if (c.hw) c.hw->rx_acked(p);
}

void send_rnr(endpoint& e, connection& c, std::uint16_t stream, std::uint32_t seq, const rejection& rj) {
    auto s = impl::base(e, c, opcode::rnr, rj.sport);
    s.rnrh = wire::rnrh{1, static_cast<std::uint8_t>(rj.epoch & 0xF), static_cast<std::uint8_t>(e.cfg().rnr_timer_code & 0x1F),
                        0, rj.path, rj.attempt, 0, ppsn32::of(rj.ppsn), stream, rj.tag, seq, rj.rnr_seq, 0};
    if (has(e.cfg(), variant::nak_psn)) s.bth.psn = rj.ppsn;  // D25: 0 in the reference
    impl::send_answer(e, s);
    ++e.stats_mut().rnrs_sent;
}

// Raises receive completions in StreamSeq order (MR-STR-1).
void deliver(endpoint& e, connection& c, std::uint16_t stream, std::uint32_t only_seq, bool any_order) {
    auto raise = [&](std::uint32_t seq, in_message& m) {
        if (!m.failed) {
            completion wc;
            wc.stream = stream;
            wc.stream_seq = seq;
            wc.tag = m.tag;
            wc.length = m.total;
            wc.imm = m.imm;
            if (is_send_opcode(m.opcode)) {
                wc.kind = wc_kind::recv;
                wc.wr_id = c.recvs[m.tag][m.recv_idx].wr_id;
                impl::complete(e, c, wc);
            } else if (m.opcode == static_cast<std::uint8_t>(opcode::write_imm)) {
                wc.kind = wc_kind::recv_write_imm;
                impl::complete(e, c, wc);
            }
        }
        m.delivered = true;
        c.rejections.erase({stream, seq});
    };
    auto ready = [&](const in_message& m) {
        return m.failed || m.complete || (has(e.cfg(), bug::early_completion) && m.eom_seen);
    };
    if (any_order) {
        auto it = c.inbox.find({stream, only_seq});
        if (it != c.inbox.end() && !it->second.delivered && ready(it->second)) raise(only_seq, it->second);
        return;
    }
    auto& next = c.next_deliver[stream];
    for (;;) {
        auto it = c.inbox.find({stream, next});
        if (it == c.inbox.end() || !ready(it->second)) return;
        if (!it->second.delivered) raise(next, it->second);
        c.inbox.erase(it);
        ++next;
    }
}

}  // namespace

void endpoint::impl::send_nak(endpoint& e, std::uint32_t dest_qp, const frame& f, std::uint8_t code) {
    frame_spec s;
    s.eth.src = e.self_.mac;
    s.eth.dst = f.eth.src;
    set_ip(s, e.self_, source_of(f));
    s.udp.sport = f.udp.sport;
    s.udp.dport = k_udp_port;
    s.bth.opcode = static_cast<std::uint8_t>(opcode::nak);
    s.bth.dest_qp = dest_qp;
    s.nakh = wire::nakh{1, static_cast<std::uint8_t>(f.mrh.path_epoch & 0xF), code, f.mrh.path_id, 0,
                        ppsn32::of(f.bth.psn), f.mrh.stream_id, f.mrh.tag, f.mrh.stream_seq};
    if (has(e.cfg(), variant::nak_psn)) s.bth.psn = f.bth.psn;  // D25: 0 in the reference
    send_answer(e, s);
    ++e.c_.naks_sent;
}

void endpoint::impl::send_answer(endpoint& e, const frame_spec& s) {
    if (!has(e.cfg(), variant::answer_late)) return send(e, s);
    e.late_answers_.emplace_back(e.s_.now() + k_answer_late, s);
    if (!e.late_answer_timer_) e.late_answer_timer_ = std::make_unique<sim::timer>(e.s_);
    if (!e.late_answer_timer_->armed()) send_late_answers(e);  // else: due times only grow, the front's timer serves
}

void endpoint::impl::send_late_answers(endpoint& e) {
    const nanos now = e.s_.now();
    while (!e.late_answers_.empty() && e.late_answers_.front().first <= now) {
        const auto s = std::move(e.late_answers_.front().second);
        e.late_answers_.pop_front();
        send(e, s);
    }
    if (!e.late_answers_.empty()) e.late_answer_timer_->arm_at(e.late_answers_.front().first, [&e] { send_late_answers(e); });
}

void endpoint::impl::ack_timer_due(endpoint& e, connection& c, unsigned p) {
    // D53: the latest packet on the path is the trigger; no ECE. The fields
    // were mirrored after the path's last packet; nothing changed them since.
    send_ack(e, c, p, c.rx[p].last_ppsn, false, c.rx[p].last_sport, e.conns_);
}

void endpoint::impl::on_data(endpoint& e, connection* cp, const frame& f) {
    const config& cfg = e.cfg();
    auto& k = e.c_;
    if (!cp) {
        if (has(cfg, bug::unknown_conn_silent)) return;
        return send_nak(e, f.bth.dest_qp, f, static_cast<std::uint8_t>(nak_code::unknown_connection));
    }
    connection& c = *cp;
    if (c.state == conn_state::connecting) {
        ++k.data_before_accept;  // dropped and counted; retransmission recovers it
        return;
    }
    if (c.state == conn_state::closed)
        return send_nak(e, c.remote_id, f, static_cast<std::uint8_t>(nak_code::connection_closing));
    const auto& m = f.mrh;
    if (m.path_id >= c.num_paths) {
        if (has(cfg, bug::no_path_check)) return;
        return send_nak(e, c.remote_id, f, static_cast<std::uint8_t>(nak_code::invalid_path));
    }
    const unsigned p = m.path_id;
    auto& r = c.rx[p];
    if (has(cfg, bug::path_by_port) && !c.hw) {
        // The bug: state found by source port; a port new to the path meets fresh state.
        if (r.port && r.port != f.udp.sport) restart_rx(c, p, r.start_ppsn);
        r.port = f.udp.sport;
    }
    const std::uint32_t ppsn = f.bth.psn;
    const std::uint32_t d = psn24::diff(ppsn, r.cum_ack);
    const auto cls = c.hw ? c.hw->rx_classify(p, ppsn)
                     : d >= psn24::k_half || (d < 256 && r.got.test(d)) ? units::rx_class::duplicate
                     : d >= 256                                          ? units::rx_class::out_of_window
                                                                         : units::rx_class::fresh;
    const bool duplicate = cls == units::rx_class::duplicate;
    if (cls == units::rx_class::out_of_window)
        return send_nak(e, c.remote_id, f, static_cast<std::uint8_t>(nak_code::psn_out_of_window));

    const bool ce = f.ip_ecn() == k_ecn_ce;
    r.last_sport = f.udp.sport;
    r.last_epoch = m.path_epoch;
    r.last_ppsn = ppsn;
    if (ce && !c.hw) ++r.ce_count;  // every CE-marked packet acknowledged, duplicates included
    bool marked = false;  // with units: mark_received() leaves the marking to the PACKET command
    auto ack_policy = [&](bool new_gap) {
        if (c.hw) {
            const bool now = c.hw->rx_packet(p, ppsn, ce, f.bth.ack_req, marked);
            mirror_rx(c, p);
            if (now) send_ack(e, c, p, ppsn, ce, f.udp.sport, e.conns_);
            return;
        }
        const bool lazy = has(cfg, bug::lazy_ack);
        if (ce || has(cfg, variant::ack_each) || (!lazy && (f.bth.ack_req || new_gap)) || ++r.unacked >= cfg.ack_every) {
            send_ack(e, c, p, ppsn, ce, f.udp.sport, e.conns_);
        } else if (!r.ack_timer->armed()) {
            connection* self = &c;
            // The run's first packet (variant trig-first names it in the ACK).
            r.first_ppsn = ppsn;
            r.first_sport = f.udp.sport;
            r.first_epoch = m.path_epoch;
            // The ACK interval runs from the packet's arrival (the host's
            // stamp in real time; now in virtual time), as RTT samples and
            // RNR pauses do (D80): a frame that waited in the socket while a
            // userspace DUT worked elsewhere is not acknowledged later for it.
            // Variant timer-tick: the last tick at or before the interval's end.
            const nanos due = impl::fire_at(e, std::max(e.sched().now(), e.arrival() + cfg.ack_delay), true);
            r.ack_timer->arm_at(due, [&e, self, p] {
                // D53: the latest packet on the path is the trigger; no ECE.
                // Variant trig-first: the run's first packet.
                auto& rr = self->rx[p];
                if (has(e.cfg(), variant::trig_first))
                    send_ack(e, *self, p, rr.first_ppsn, false, rr.first_sport, e.conns_, rr.first_epoch);
                else
                    send_ack(e, *self, p, rr.last_ppsn, false, rr.last_sport, e.conns_);
            });
        }
    };
    auto mark_received = [&]() -> bool {
        if (c.hw) {
            marked = true;
            return false;
        }
        const bool new_gap = psn24::lt(psn24::add(r.highest, 1), ppsn);
        if (psn24::lt(r.highest, ppsn)) r.highest = ppsn;
        r.got.set(d);
        if (const unsigned n = r.got.next_clear(0); n > 0) {  // CumAck slides over the run of received PPSNs
            r.got.shift_down(n);
            r.cum_ack = psn24::add(r.cum_ack, n);
        }
        return new_gap;
    };
    if (duplicate) {
        ++k.duplicates;
        return ack_policy(false);
    }
    ++k.data_received;
    note_data(e, c, e.active_mut());

    const std::uint8_t op = f.bth.opcode;
    const auto key = std::make_pair(m.stream_id, m.stream_seq);
    const bool send_op = is_send_opcode(op);
    const std::uint32_t total = send_op ? f.seth.msg_len : f.reth.dma_len;
    const auto len = static_cast<std::uint32_t>(f.payload_size());
    const bool som = m.flags & k_flag_som, eom = m.flags & k_flag_eom;
    // A NAK or RNR the packet draws, and its ACK if one is due now: the
    // answer first (the reference), or the ACK first (variant ack-first, D153).
    auto answer_and_ack = [&](bool gap, auto&& answer) {
        if (has(cfg, variant::ack_first)) ack_policy(gap);
        answer();
        if (!has(cfg, variant::ack_first)) ack_policy(gap);
    };
    auto fail_with = [&](nak_code code) {
        const bool gap = mark_received();  // NAK outcomes: the PPSN is acknowledged
        auto& im = c.inbox[key];
        im.failed = true;  // nothing of the message completes
        c.rejections.erase(key);
        answer_and_ack(gap, [&] { send_nak(e, c.remote_id, f, static_cast<std::uint8_t>(code)); });
        deliver(e, c, m.stream_id, m.stream_seq, has(cfg, bug::stream_order));
    };

    // Already delivered (a late copy re-sent with a new PPSN): acknowledge only.
    auto nd = c.next_deliver.find(m.stream_id);
    if (!has(cfg, bug::stream_order) && nd != c.next_deliver.end() && core::seq32::lt(m.stream_seq, nd->second)) {
        return ack_policy(mark_received());
    }

    // MR-HDR-5: header mismatch, checked before rejection.
    auto existing = c.inbox.find(key);
    bool mismatch = len > c.mtu || static_cast<std::uint64_t>(m.msg_offset) + len > total || (som && m.msg_offset != 0) ||
                    (eom && m.msg_offset + len != total) || (len < c.mtu && m.msg_offset + len != total) ||
                    (op == static_cast<std::uint8_t>(opcode::write) && m.tag != 0);
    if (existing != c.inbox.end()) {
        const auto& im = existing->second;
        mismatch |= im.opcode != op || im.total != total || (send_op && im.recv_idx != f.seth.recv_idx) ||
                    (f.has(has_immdt) && im.imm && *im.imm != f.immdt);
        if (im.failed) return ack_policy(mark_received());
    }
    if (mismatch && !has(cfg, bug::accept_mismatch)) return fail_with(nak_code::header_mismatch);

    // The arrival-order bugs place each packet at the message's next free byte.
    auto arrival_offset = [&]() -> std::uint32_t {
        auto it = c.inbox.find(key);
        return it == c.inbox.end() ? 0 : it->second.placed_bytes;
    };
    std::uint8_t* dst = nullptr;
    if (send_op) {
        auto& list = c.recvs[m.tag];
        if (f.seth.recv_idx >= list.size()) {
            if (has(cfg, bug::no_rnr)) return ack_policy(mark_received());  // discarded, nobody told
            // MR-RNR-1/6: a new rejection per Attempt, counted before the ACK.
            auto& kept = c.rejections[key];
            const bool fresh = kept.empty() || kept.back().attempt != m.attempt;  // an Attempt other than the latest rejected
            // rnr-count-late: the packet acknowledged at once, before its
            // rejection is counted (the ACK's RnrCount misses it; MR-RNR-6 broken).
            const bool late_count = fresh && has(cfg, bug::rnr_count_late);
            if (late_count) {
                mark_received();
                send_ack(e, c, p, ppsn, ce, f.udp.sport, e.conns_);
            }
            if (fresh) {
                c.rnr_count = static_cast<std::uint16_t>(c.rnr_count + 1);
                if (c.rnr_count == 0) c.rnr_count = 1;  // RnrSeq skips 0
                kept.push_back({m.attempt, c.rnr_count, ppsn, m.path_id, m.path_epoch, m.tag, f.udp.sport});
            }
            if (late_count) return send_rnr(e, c, m.stream_id, m.stream_seq, kept.back());
            // Acknowledged and discarded (marking it sends nothing, so the RNR
            // still leaves first unless ack-first).
            return answer_and_ack(mark_received(), [&] {
                if (fresh) send_rnr(e, c, m.stream_id, m.stream_seq, kept.back());
            });
        }
        const auto& rv = list[f.seth.recv_idx];
        if (total > rv.len) return fail_with(nak_code::invalid_request);
        auto mr = e.mrs_.find(rv.rkey);
        // Never write outside the receive (reachable only when a bug profile skips the mismatch checks).
        const std::uint32_t at = has(cfg, bug::send_arrival_order) ? arrival_offset() : m.msg_offset;
        if (static_cast<std::uint64_t>(at) + len > rv.len) return;
        dst = mr->second.bytes.writable(rv.offset + at, len);
    } else {
        auto mr = e.mrs_.find(f.reth.r_key);
        const std::uint64_t va = f.reth.va;
        if (mr == e.mrs_.end() || va < mr->second.va || va + len > mr->second.va + mr->second.bytes.size()) {
            if (has(cfg, bug::oob_write_silent)) return ack_policy(mark_received());  // discarded, nobody told
            return fail_with(nak_code::remote_access);  // MR-OOO-4
        }
        std::uint64_t at = va - mr->second.va;
        if (has(cfg, bug::write_arrival_order)) {
            at = at - m.msg_offset + arrival_offset();
            if (at + len > mr->second.bytes.size()) return;  // never outside the region
        }
        dst = mr->second.bytes.writable(at, len);
    }
    // MR-OOO-1/2: place at the packet's own address; no reorder buffer.
    if (!f.payload.empty()) std::memcpy(dst, f.payload.data(), f.payload.size());  // a described payload writes nothing
    auto& im = c.inbox[key];
    if (im.total == 0 && im.placed.empty()) {
        im.opcode = op;
        im.tag = m.tag;
        im.total = total;
        im.recv_idx = send_op ? f.seth.recv_idx : 0;
        if (f.has(has_immdt)) im.imm = f.immdt;
    }
    im.placed_bytes += add_interval(im.placed, m.msg_offset, len);
    im.eom_seen |= eom;
    im.complete = im.placed_bytes >= im.total && (im.total > 0 || eom);  // MR-OOO-3: every byte
    if (im.complete && !has(cfg, bug::rnr_kept)) c.rejections.erase(key);  // arrived again in full: no longer kept (§4)
    const bool gap = mark_received();
    ack_policy(gap);
    deliver(e, c, m.stream_id, m.stream_seq, has(cfg, bug::stream_order));
}

void endpoint::impl::on_rnr_query(endpoint& e, connection& c) {
    // Re-send, unchanged, the RNR of every kept rejection, then RNR_SYNC.
    const auto& cfg = e.cfg();
    auto sync = [&] { send_ctrl(e, c, ctrl_type::rnr_sync, {tlv::rnr_count(c.rnr_count)}, c.remote_id, ctrl_port(c), true); };
    if (has(cfg, bug::sync_first)) sync();
    if (!has(cfg, bug::sync_only))
        for (const auto& [key, kept] : c.rejections)
            for (const auto& rj : kept) send_rnr(e, c, key.first, key.second, rj);
    if (!has(cfg, bug::sync_first)) sync();
}

}  // namespace mrct::endpoint
