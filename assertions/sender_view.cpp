#include "assertions/sender_view.h"

#include <algorithm>
#include <deque>
#include <set>

#include "wire/ctrl.h"

namespace mrct::assertions {

namespace {

constexpr std::uint64_t k_mod = 1u << 24;

struct pkt_state {
    nanos last_tx{0};
    std::uint64_t tx_seq = 0;
    std::uint8_t epoch = 0;
    unsigned tx_count = 0;
    bool acked = false, retransmitted = false;
    bool first_flight = false;  // sent before any ACK on its path reached the DUT (D123)
    // When the ACK that first covered it came: whether the DUT had a reason
    // of its own to resend it already (had_reason).
    bool prompted = false;
    std::optional<std::size_t> pending;  // index into detections
    std::size_t last_tx_rec = 0, acked_by = 0;
};

struct path_state {
    bool any = false;
    std::uint64_t max_sent = 0;
    std::uint32_t gen = 0;
    std::map<std::uint64_t, pkt_state> pkts;
    unsigned inflight = 0;
    std::uint64_t tx_seq = 0;
    std::map<std::uint8_t, std::uint64_t> hi_by_epoch;
    std::vector<std::pair<std::size_t, std::uint64_t>> sends;  // (record, PPSN) of every transmission, in order
    nanos last_newack{-1}, empty_start{-1}, last_expiry{-1};
    bool empty_start_first = false;  // the packet that started empty_start was of the first flight
    unsigned consec = 0;
    bool has_rtt = false;
    nanos srtt{0}, rttvar{0};
    // The same estimator with each sample lengthened by the host's hold at
    // the ACK (real time): the most the DUT's own estimator can have reached.
    nanos srtt_held{0}, rttvar_held{0};
    // The least RTTVAR the DUT's estimator can have reached (D147): each
    // update with the least deviation [srtt, srtt_held] and [sample, held]
    // allow. Equal to rttvar where nothing was held (virtual time).
    nanos rttvar_least{0};
    std::uint16_t port = 0, run_port = 0;
    bool seen_ack = false;

    std::uint64_t unwrap(std::uint32_t ppsn) const {
        if (!any) return k_mod + ppsn;
        const std::uint32_t ref = static_cast<std::uint32_t>(max_sent % k_mod);
        std::int64_t d = static_cast<std::int64_t>((ppsn - ref) & (k_mod - 1));
        if (d >= static_cast<std::int64_t>(k_mod / 2)) d -= static_cast<std::int64_t>(k_mod);
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(max_sent) + d);
    }
    void reset() {
        const auto g = gen + 1;
        *this = path_state{};
        gen = g;
    }
};

// The RTO from the wire's samples; (held) from the same samples each
// lengthened by the host's hold at its ACK (path_state::srtt_held), the most
// the DUT's can be; (least) with the least RTTVAR those ranges allow, the
// least the DUT's can be (D147).
enum class rto_bound { wire, held, least };
nanos rto_base(const path_state& s, const trace::params& p, rto_bound b = rto_bound::wire) {
    if (!s.has_rtt) return p.rto_initial;
    const nanos srtt = b == rto_bound::held ? s.srtt_held : s.srtt;
    const nanos rttvar = b == rto_bound::held ? s.rttvar_held : b == rto_bound::least ? s.rttvar_least : s.rttvar;
    return std::clamp(srtt + 4 * rttvar, p.rto_min, p.rto_max);
}

nanos backed_off(nanos base, unsigned doublings, const trace::params& p) {
    for (unsigned i = 0; i < doublings && base < p.rto_max; ++i) base *= 2;
    return std::min(base, p.rto_max);
}

// Whether, before taking the ACK about to be applied, a conforming DUT had a
// reason of its own to resend `key`: the §5 loss rule had found it lost (a
// PPSN sent after its latest transmission, in its epoch, was acknowledged), or
// it was the path's oldest unacknowledged PPSN, the one its timer resends
// (MR-RTO-4). `hi` is the path's highest acknowledged transmission per epoch
// before the ACK, `oldest` its oldest unacknowledged PPSN. A DUT that has not
// yet taken some earlier ACKs has fewer reasons, never more: both only grow
// with the ACKs taken.
bool had_reason(const std::map<std::uint8_t, std::uint64_t>& hi, std::optional<std::uint64_t> oldest, std::uint64_t key,
                const pkt_state& k) {
    if (oldest && *oldest == key) return true;
    auto h = hi.find(k.epoch);
    return h != hi.end() && h->second > k.tx_seq;
}

// had_reason's loss rule for a DUT that takes ACKs late, however late: the
// DUT may have found `key` lost before it took the ACK `ack_rec` that covered
// it if an earlier ACK covered a PPSN the DUT transmitted after `key`'s latest
// transmission (`since_rec`) and before the resend at `now_rec`: for such a
// DUT, that ACK acknowledged the later transmission (a timer's resend crossed
// by the ACK of its first transmission makes every PPSN sent between the two
// lost, §5). Seen beside stress-ng: mrct-refnic held 0.3 ms took the ACK of
// PPSN x after its timer resent x, and resent 20 PPSNs the ACKs it had not yet
// read covered.
bool lost_for_a_late_dut(const path_state& s, std::uint64_t key, std::size_t since_rec, std::size_t now_rec,
                         std::size_t ack_rec) {
    auto it = std::upper_bound(s.sends.begin(), s.sends.end(), std::make_pair(since_rec, ~std::uint64_t{0}));
    for (; it != s.sends.end() && it->first < now_rec; ++it) {
        if (it->second == key) continue;
        auto z = s.pkts.find(it->second);
        if (z == s.pkts.end()) return true;  // forgotten far below CumAck: acknowledged long ago
        if (z->second.acked && z->second.acked_by < ack_rec) return true;
    }
    return false;
}

std::optional<std::uint64_t> oldest_unacked(const std::map<std::uint64_t, pkt_state>& pkts) {
    for (const auto& [key, k] : pkts)
        if (!k.acked) return key;
    return std::nullopt;
}

// Whether an ACK with CumAck `cum` and these SACK bits covers `ppsn`
// (24-bit serial order: below CumAck, or a set bit above it).
bool covers(std::uint32_t cum, const wire::sack256& sack, std::uint32_t ppsn) {
    const std::uint32_t d = (ppsn - cum) & (k_mod - 1);
    if (d >= k_mod / 2) return true;
    return d > 0 && d < 256 && sack.test(d);
}

// The order in which the view takes the trace's records. In virtual time it
// is the trace's order. In real time (tr.crossing > 0) the engine records an
// ACK when it sends it, and the ACK may still be on its way when the DUT sends
// a resend. A resend of a PPSN that an ACK recorded at most `crossing` earlier
// covers is therefore taken as sent before the DUT saw that ACK, provided the
// DUT had a reason of its own to resend it before that ACK (had_reason): the
// ACK, and every record to the DUT after it, wait until that resend has been
// taken. Records from the DUT keep their order, and so do records to the DUT;
// only how the two interleave changes. (Taken in the trace's order, such a
// resend reads as a resend of an acknowledged PPSN, and it shifts which PPSNs
// count as sent after which.) A resend nothing but the covering ACK can have
// prompted (go-back-N's resends of SACKed PPSNs) is no crossing, however soon
// it came (D62). The reasons are found here on a light replay of the trace in
// its own order.
std::vector<std::size_t> processing_order(const trace::trace& tr, std::vector<std::size_t>& crossed,
                                          std::vector<std::pair<std::size_t, std::size_t>>& crossed_held) {
    const std::size_t n = tr.frames.size();
    std::vector<std::size_t> order;
    order.reserve(n);
    if (tr.crossing <= nanos{0}) {
        for (std::size_t i = 0; i < n; ++i) order.push_back(i);
        return order;
    }
    struct recent_ack {
        std::size_t index;
        nanos reach;  // the latest a resend it crossed can be recorded
        std::uint32_t cum;
        wire::sack256 sack;
    };
    // An ACK may reach the DUT's reading up to `crossing` after it was
    // recorded, and later by as long as a hold of the host, or a wait of the
    // DUT's thread for a CPU, covered that moment (held_at): a DUT kept from
    // a CPU when the ACK came read it when it ran again, maybe after its
    // timer's resend (RTO-004 beside stress-ng: mrct-refnic waited 4.1 ms on
    // a run queue, ran its expiry first, resent PPSN x 235 us after the ACK
    // covering x was recorded, and then, by §5's rule, the PPSNs that ACK
    // left unacknowledged).
    auto reach_of = [&tr](nanos t) { return t + tr.crossing + tr.timing.held_at(t); };
    std::map<unsigned, std::deque<recent_ack>> acks;  // per path, those whose reach is not yet past
    std::map<unsigned, path_state> st;                // what was sent and acknowledged, per path
    // (record to the DUT, resend from the DUT it must follow)
    std::vector<std::pair<std::size_t, std::size_t>> waits;
    auto recent = [&](unsigned path, nanos now) -> std::deque<recent_ack>& {  // ACKs whose reach may include now
        auto& list = acks[path];
        while (!list.empty() && list.front().reach < now) list.pop_front();
        return list;
    };
    for (std::size_t i = 0; i < n; ++i) {
        const auto& r = tr.frames[i];
        if (!r.ok()) continue;
        const auto& f = r.f();
        const auto op = f.bth.opcode;
        if (r.d == trace::dir::from_dut && op == static_cast<std::uint8_t>(wire::opcode::ctrl) &&
            f.ctrlh.type == static_cast<std::uint8_t>(wire::ctrl_type::path_reset)) {
            if (auto fields = wire::read_ctrl_tlvs(f.tlvs); fields.path_id) {
                acks.erase(*fields.path_id);  // a new PPSN space
                st[*fields.path_id].reset();
            }
            continue;
        }
        if (r.reached_dut() && op == static_cast<std::uint8_t>(wire::opcode::ack)) {
            const unsigned p = f.ackh.path_id;
            recent(p, r.t).push_back({i, reach_of(r.t), f.bth.psn, f.ackh.sack});
            auto& s = st[p];
            if (!s.any) continue;
            const std::uint64_t cum = s.unwrap(f.bth.psn);
            if (cum > s.max_sent + 1) continue;
            const auto hi_before = s.hi_by_epoch;
            const auto oldest = oldest_unacked(s.pkts);
            auto take = [&](std::uint64_t key, pkt_state& k) {
                if (k.acked) return;
                k.acked = true;
                k.acked_by = i;
                k.prompted = had_reason(hi_before, oldest, key, k);
                auto& hi = s.hi_by_epoch[k.epoch];
                hi = std::max(hi, k.tx_seq);
            };
            for (auto it = s.pkts.begin(); it != s.pkts.end() && it->first < cum; ++it) take(it->first, it->second);
            for (unsigned b = 1; b < 256; ++b)
                if (f.ackh.sack.test(b))
                    if (auto it = s.pkts.find(cum + b); it != s.pkts.end()) take(it->first, it->second);
            while (!s.pkts.empty() && s.pkts.begin()->first + 1024 < cum && s.pkts.begin()->second.acked)
                s.pkts.erase(s.pkts.begin());
            continue;
        }
        if (r.d != trace::dir::from_dut || !wire::is_data_opcode(op)) continue;
        const unsigned p = f.mrh.path_id;
        const std::uint32_t ppsn = f.bth.psn;
        auto& s = st[p];
        const std::uint64_t key = s.unwrap(ppsn);
        auto [it, first] = s.pkts.try_emplace(key);
        pkt_state& k = it->second;
        const bool could_cross =
            !first && k.acked && (k.prompted || lost_for_a_late_dut(s, key, k.last_tx_rec, i, k.acked_by));
        k.tx_seq = ++s.tx_seq;
        k.epoch = f.mrh.path_epoch;
        k.last_tx_rec = i;
        s.sends.emplace_back(i, key);
        if (first) {
            if (!s.any || key > s.max_sent) s.max_sent = key;
            s.any = true;
            continue;
        }
        if (!could_cross) continue;
        for (const auto& a : recent(p, r.t)) {
            if (a.reach < r.t || !covers(a.cum, a.sack, ppsn)) continue;  // (one behind a longer reach)
            waits.emplace_back(a.index, i);
            crossed.push_back(i);
            if (r.t > tr.frames[a.index].t + tr.crossing) crossed_held.emplace_back(i, a.index);
            break;
        }
    }
    // The record from the DUT each record to the DUT must follow: the latest
    // resend that crossed it or an earlier record to the DUT.
    std::vector<std::ptrdiff_t> after(n, -1);
    {
        std::sort(waits.begin(), waits.end());
        std::size_t w = 0;
        std::ptrdiff_t barrier = -1;
        for (std::size_t i = 0; i < n; ++i) {
            while (w < waits.size() && waits[w].first <= i) barrier = std::max(barrier, static_cast<std::ptrdiff_t>(waits[w++].second));
            if (tr.frames[i].d == trace::dir::to_dut) after[i] = barrier;
        }
    }
    std::deque<std::size_t> held;  // records to the DUT, in order
    for (std::size_t i = 0; i < n; ++i) {
        if (tr.frames[i].d == trace::dir::to_dut) {
            if (after[i] > static_cast<std::ptrdiff_t>(i) || !held.empty()) held.push_back(i);
            else order.push_back(i);
            continue;
        }
        order.push_back(i);
        while (!held.empty() && after[held.front()] <= static_cast<std::ptrdiff_t>(i)) {
            order.push_back(held.front());
            held.pop_front();
        }
    }
    for (std::size_t i : held) order.push_back(i);
    return order;
}

}  // namespace

sender_view::sender_view(const trace::trace& tr) {
    std::map<unsigned, path_state> st;
    const auto& prm = tr.p;

    // Real time (D123): how much earlier than its frame left the DUT may
    // have stamped a packet (its RTT sample's start, its timer's). By a hold
    // of its host before the frame left (held_before); and a packet of a
    // path's first flight, which no ACK released, the DUT may have decided
    // as soon as the first SEND or WRITE was posted and handed to its host
    // with the rest of its windows: mrct-refnic stamped the 16 packets of
    // each path's first window when the post came, and they left 2-3 ms
    // later on this project's VM, behind the other paths' windows in its
    // send queue; its RTO was then 3 times an RTT sample 3 ms longer than the
    // wire showed (RTO-004 on the wire, 5 false fails in 20 runs).
    std::optional<nanos> post_floor;
    if (tr.timing.realtime)
        for (const auto& w : tr.dut.posted)
            if (w.kind != "recv" && (!post_floor || w.t < *post_floor)) post_floor = w.t;
    auto stamp_lead = [&](nanos sent, bool first_flight) {
        if (sent < nanos{0} || !tr.timing.realtime) return nanos{0};
        nanos lead = tr.timing.held_before(sent);
        if (first_flight && post_floor && *post_floor < sent) lead = std::max(lead, sent - *post_floor);
        return lead;
    };

    auto note_inflight = [&](nanos t, unsigned p, const path_state& s) {
        inflight.push_back({t, p, s.inflight});
        auto& sum = paths[p];
        sum.max_inflight = std::max(sum.max_inflight, s.inflight);
        if (!s.seen_ack) sum.max_inflight_before_ack = std::max(sum.max_inflight_before_ack, s.inflight);
    };

    for (const std::size_t i : processing_order(tr, crossed, crossed_held)) {
        const auto& r = tr.frames[i];
        if (!r.ok() || (r.d == trace::dir::to_dut && !r.reached_dut())) continue;
        const auto& f = r.f();
        const auto op = f.bth.opcode;
        if (r.d == trace::dir::from_dut && op == static_cast<std::uint8_t>(wire::opcode::ctrl) &&
            f.ctrlh.type == static_cast<std::uint8_t>(wire::ctrl_type::path_reset)) {
            auto fields = wire::read_ctrl_tlvs(f.tlvs);
            if (!fields.path_id) continue;
            // The path restarts as new (§5 failed path): its unacknowledged
            // packets move to other paths with new PPSNs, so from here none
            // is in flight on it (D108).
            const unsigned p = *fields.path_id;
            st[p].reset();
            resets.push_back({r.index, r.t, p});
            if (paths.count(p)) note_inflight(r.t, p, st[p]);
            continue;
        }
        if (r.d == trace::dir::from_dut && wire::is_data_opcode(op)) {
            const unsigned p = f.mrh.path_id;
            auto& s = st[p];
            auto& sum = paths[p];
            tx_event e;
            e.rec = r.index;
            e.t = r.t;
            e.path = p;
            e.ppsn = s.unwrap(f.bth.psn);
            e.gen = s.gen;
            e.epoch = f.mrh.path_epoch;
            e.sport = f.udp.sport;
            e.retx_flag = f.mrh.flags & wire::k_flag_retx;
            e.rnr_resend = f.mrh.flags & wire::k_flag_rnr_resend;
            e.stream = f.mrh.stream_id;
            e.tag = f.mrh.tag;
            e.stream_seq = f.mrh.stream_seq;
            e.offset = f.mrh.msg_offset;
            e.length = static_cast<std::uint32_t>(f.payload.size());
            e.opcode = op;
            e.attempt = f.mrh.attempt;
            e.ip_bytes = static_cast<std::uint32_t>(r.bytes.size() - f.ip_offset - f.trailer.size());
            if (sum.ports.empty() || sum.ports.back() != e.sport) sum.ports.push_back(e.sport);
            const std::uint16_t port_before = s.any ? s.port : e.sport;
            s.port = e.sport;

            auto it = s.pkts.find(e.ppsn);
            if (it != s.pkts.end()) {
                auto& k = it->second;
                e.tx_no = ++k.tx_count;
                if (k.acked) {
                    e.acked_before = true;
                    e.covering_ack = k.acked_by;
                    e.prompted = k.prompted || lost_for_a_late_dut(s, e.ppsn, k.last_tx_rec, r.index, k.acked_by);
                }
                if (k.pending) {
                    e.kind = tx_kind::sack_resend;
                    detections[*k.pending].resend_rec = r.index;
                    k.pending.reset();
                } else if (!k.acked && tr.crossing > nanos{0} && s.last_expiry >= nanos{0} &&
                           r.t - s.last_expiry < prm.least_rto()) {
                    // Real time: two expiries on a path are at least
                    // least_rto apart (MR-RTO-3: rto_min, or rto_initial on a
                    // path without an RTT sample, D140), so a resend this
                    // soon after one is not a timer's. It answers what the
                    // view has not taken yet (an ACK still on its way, D50):
                    // not counted as an expiry, and the run of consecutive
                    // expiries goes on.
                    e.kind = tx_kind::rto_resend;
                    unexplained.push_back(r.index);
                } else if (!k.acked) {
                    e.kind = tx_kind::rto_resend;
                    if (s.consec == 0) s.run_port = port_before;
                    ++s.consec;
                    expiry x;
                    x.path = p;
                    x.ppsn = e.ppsn;
                    x.t = r.t;
                    x.rec = r.index;
                    x.run = s.consec;
                    x.timer_start = std::max({s.last_newack, s.empty_start, s.last_expiry});
                    // Real time: the DUT stamped its own sends no later than
                    // they left, by up to the hold before each (held_before);
                    // it took an ACK no sooner than the engine sent it.
                    x.timer_start_earliest = std::max({s.last_newack, s.empty_start - stamp_lead(s.empty_start, s.empty_start_first),
                                                       s.last_expiry - stamp_lead(s.last_expiry, false)});
                    x.expected_rto = backed_off(rto_base(s, prm), s.consec - 1, prm);
                    x.expected_rto_held = backed_off(rto_base(s, prm, rto_bound::held), s.consec - 1, prm);
                    x.expected_rto_least = backed_off(rto_base(s, prm, rto_bound::least), s.consec - 1, prm);
                    x.sport_before = s.run_port;
                    for (const auto& [key, pk] : s.pkts)
                        if (!pk.acked) {
                            x.oldest = key == e.ppsn;
                            break;
                        }
                    expiries.push_back(x);
                    s.last_expiry = r.t;
                } else {
                    e.kind = tx_kind::rto_resend;  // a resend of something acknowledged: go-back-N
                }
                k.last_tx = r.t;
                k.tx_seq = ++s.tx_seq;
                k.epoch = e.epoch;
                k.retransmitted = true;
                k.last_tx_rec = r.index;
                s.sends.emplace_back(r.index, e.ppsn);
            } else {
                pkt_state k;
                k.last_tx = r.t;
                k.tx_seq = ++s.tx_seq;
                k.epoch = e.epoch;
                k.tx_count = 1;
                k.last_tx_rec = r.index;
                k.first_flight = !s.seen_ack;
                s.sends.emplace_back(r.index, e.ppsn);
                s.pkts.emplace(e.ppsn, k);
                if (s.inflight == 0) {
                    s.empty_start = r.t;
                    s.empty_start_first = k.first_flight;
                }
                ++s.inflight;
                if (!s.any || e.ppsn > s.max_sent) s.max_sent = e.ppsn;
                s.any = true;
            }
            tx.push_back(e);
            note_inflight(r.t, p, s);
            continue;
        }
        if (r.d == trace::dir::to_dut && op == static_cast<std::uint8_t>(wire::opcode::ack)) {
            const unsigned p = f.ackh.path_id;
            auto& s = st[p];
            ack_event a;
            a.rec = r.index;
            a.t = r.t;
            a.path = p;
            a.epoch = f.ackh.path_epoch;
            a.ece = f.ackh.ece();
            a.grant = f.ackh.grant_rate;
            a.rnr_count = f.ackh.rnr_count;
            if (!s.any) {
                a.ignored = true;
                acks.push_back(a);
                continue;
            }
            const std::uint64_t cum = s.unwrap(f.bth.psn);
            if (cum > s.max_sent + 1) {
                a.ignored = true;
                acks.push_back(a);
                continue;
            }
            const std::uint64_t trig = s.unwrap(f.ackh.trig_ppsn.ppsn());
            const auto hi_before = s.hi_by_epoch;
            const auto oldest = oldest_unacked(s.pkts);
            auto ack_one = [&](std::uint64_t key, pkt_state& k) {
                if (k.acked) return;
                k.acked = true;
                k.acked_by = r.index;
                k.prompted = had_reason(hi_before, oldest, key, k);
                --s.inflight;
                ++a.newly;
                auto& hi = s.hi_by_epoch[k.epoch];
                hi = std::max(hi, k.tx_seq);
                if (k.pending) {
                    detections[*k.pending].acked_at = r.t;
                    k.pending.reset();
                }
                // RFC 6298 + Karn, written again on purpose: the checker must
                // not share code with the reference endpoint it judges.
                if (key == trig && !k.retransmitted) {  // Karn: no samples from resends
                    const nanos sample = r.t - k.last_tx;
                    paths[p].rtt_samples.push_back({r.t, sample});
                    // Real time: the DUT may have read this ACK later than
                    // the engine sent it, by the host's hold at that moment.
                    // Its send stamp may lie before the frame left, by the
                    // hold before it (held_before).
                    const nanos hold = tr.timing.realtime ? tr.timing.held_at(r.t) + stamp_lead(k.last_tx, k.first_flight) : nanos{0};
                    const nanos held = sample + hold;
                    if (hold > paths[p].sample_hold_max) {
                        paths[p].sample_hold_max = hold;
                        paths[p].sample_at_hold_max = sample;
                    }
                    if (!s.has_rtt) {
                        s.srtt = sample;
                        s.rttvar = sample / 2;
                        s.srtt_held = held;
                        s.rttvar_held = held / 2;
                        s.rttvar_least = sample / 2;
                        s.has_rtt = true;
                    } else {
                        // Held: the DUT's SRTT lies in [srtt, srtt_held] and its
                        // sample in [sample, held]; the deviation is at most
                        // the farthest apart the two ranges' ends lie.
                        auto dist = [](nanos a, nanos b) { return a > b ? a - b : b - a; };
                        const nanos dev = std::max(dist(s.srtt, held), dist(s.srtt_held, sample));
                        s.rttvar_held = (3 * s.rttvar_held + dev) / 4;
                        // And at least the gap between the two ranges, 0
                        // where they overlap (D147). SRTT's least is srtt:
                        // no DUT sample is shorter than the wire's.
                        const nanos least_dev = std::max({nanos{0}, sample - s.srtt_held, s.srtt - held});
                        s.rttvar_least = (3 * s.rttvar_least + least_dev) / 4;
                        s.srtt_held = (7 * s.srtt_held + held) / 8;
                        s.rttvar = (3 * s.rttvar + dist(s.srtt, sample)) / 4;
                        s.srtt = (7 * s.srtt + sample) / 8;
                    }
                }
            };
            for (auto it = s.pkts.begin(); it != s.pkts.end() && it->first < cum; ++it) ack_one(it->first, it->second);
            for (unsigned i = 1; i < 256; ++i)
                if (f.ackh.sack.test(i))
                    if (auto it = s.pkts.find(cum + i); it != s.pkts.end()) ack_one(it->first, it->second);
            if (a.newly) {
                s.last_newack = r.t;
                s.consec = 0;
            }
            // §5 Loss: x is lost when a PPSN sent on the path in the same epoch
            // after x's latest transmission is acknowledged.
            for (auto& [key, k] : s.pkts) {
                if (k.acked || k.pending) continue;
                auto hi = s.hi_by_epoch.find(k.epoch);
                if (hi != s.hi_by_epoch.end() && hi->second > k.tx_seq) {
                    detection d;
                    d.path = p;
                    d.ppsn = key;
                    d.gen = s.gen;
                    d.t = r.t;
                    d.ack_rec = r.index;
                    d.tx_rec = k.last_tx_rec;
                    k.pending = detections.size();
                    detections.push_back(d);
                }
            }
            // Forget what lies far below CumAck (kept a while to spot go-back-N).
            while (!s.pkts.empty() && s.pkts.begin()->first + 1024 < cum && s.pkts.begin()->second.acked)
                s.pkts.erase(s.pkts.begin());
            auto& sum = paths[p];
            if (!s.seen_ack) sum.first_ack = r.t;
            s.seen_ack = true;
            acks.push_back(a);
            note_inflight(r.t, p, s);
        }
    }
}

std::optional<nanos> sender_view::rtt(unsigned path) const {
    auto it = paths.find(path);
    if (it == paths.end() || it->second.rtt_samples.empty()) return std::nullopt;
    std::vector<nanos> v;
    for (const auto& s : it->second.rtt_samples) v.push_back(s.second);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

std::string sender_view::expiry_figures() const {
    if (expiries.empty()) return "no timer expiry";
    const auto most = std::max_element(expiries.begin(), expiries.end(), [](const expiry& a, const expiry& b) { return a.run < b.run; });
    return std::to_string(expiries.size()) + " timer " + (expiries.size() == 1 ? "expiry" : "expiries") + ", at most " +
           std::to_string(most->run) + " in a row (path " + std::to_string(most->path) + ")";
}

unsigned sender_view::inflight_at(unsigned path, nanos t) const {
    unsigned v = 0;
    for (const auto& p : inflight) {
        if (p.t > t) break;
        if (p.path == path) v = p.inflight;
    }
    return v;
}

unsigned sender_view::max_inflight(unsigned path, nanos from, nanos to) const {
    unsigned v = inflight_at(path, from);
    for (const auto& p : inflight)
        if (p.path == path && p.t >= from && p.t <= to) v = std::max(v, p.inflight);
    return v;
}

}  // namespace mrct::assertions
