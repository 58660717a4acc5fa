// DUT as receiver: ACKs, NAKs, silent drops, RNRs, placement before completion.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "assertions/checks.h"
#include "core/serial.h"
#include "core/units.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"

namespace mrct::assertions::checks {

using namespace wire;
using core::nanos;

bool covers(const frame& f, std::uint32_t ppsn) {
    const std::uint32_t cum = f.bth.psn;
    const std::uint32_t d = (ppsn - cum) & 0xFFFFFF;
    if (d >= (1u << 23)) return true;  // below CumAck
    return d < 256 && d != 0 && f.ackh.sack.test(d);
}

namespace {

// A message's bytes that arrived, as [from, to) ranges: how far from byte 0
// they reach without a hole.
std::uint32_t arrived_prefix(std::vector<std::pair<std::uint32_t, std::uint32_t>> got) {
    std::sort(got.begin(), got.end());
    std::uint32_t upto = 0;
    for (const auto& [a, b] : got) {
        if (a > upto) break;
        upto = std::max(upto, b);
    }
    return upto;
}

// The path a PATH_RESET that reached the DUT names, if `r` is one.
std::optional<unsigned> path_reset_to_dut(const trace::record& r) {
    if (!r.reached_dut() || !r.is(ctrl_type::path_reset))
        return std::nullopt;
    if (auto id = read_ctrl_tlvs(r.f().tlvs).path_id) return *id;
    return std::nullopt;
}

// Whether the data that reached the DUT went to one of its connections
// only: the per-path rules below key state by PathID, which several
// connections would confuse, and do not judge such traces.
bool one_dut_connection(const trace::trace& tr) {
    std::set<std::uint32_t> conns;
    for (const auto& r : tr.frames)
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) conns.insert(r.f().bth.dest_qp);
    return conns.size() == 1;
}

// MR-CC-1, §5 "CE accounting": CE_Count counts every CE-marked packet the
// DUT took in on the path, duplicates included, modulo 2^16, from 0 at the
// connection and at each PATH_RESET. Frames reach the DUT in the order the
// trace shows them (one link), so:
//  - an ACK whose trigger is a CE-marked copy that reached the DUT after the
//    DUT's previous ACK on the path, its only copy, shows a count other than
//    that ACK's: the DUT counted it in between. Sound on any wire, a frame
//    lost in the DUT's host included;
//  - in virtual time, where every frame shown reached the DUT, the count lies
//    between the CE-marked copies (not NAKed) that arrived up to the first
//    copy of the trigger and every CE-marked copy that arrived before the ACK.
// Paths that saw a PATH_RESET are not judged after it; nor is a trace with
// data for more than one of the DUT's connections (paths would be confused).
std::optional<outcome> ce_count_wrong(const trace::trace& tr) {
    const auto& fr = tr.frames;
    if (!one_dut_connection(tr)) return std::nullopt;
    std::set<std::pair<unsigned, std::uint32_t>> naked;  // (path, PPSN) the DUT NAKed
    std::map<std::pair<unsigned, std::uint32_t>, unsigned> copies;
    for (const auto& r : fr) {
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) ++copies[{r.f().mrh.path_id, r.f().bth.psn}];
        if (r.d == trace::dir::from_dut && r.is(opcode::nak)) naked.insert({r.f().nakh.path_id, r.f().nakh.nak_ppsn.ppsn()});
    }
    struct path_state {
        bool reset = false;
        std::uint32_t low = 0, high = 0;  // CE-marked copies: surely counted, possibly counted
        std::map<std::uint32_t, std::uint32_t> low_at_first;  // PPSN -> low at its first copy
        std::map<std::uint32_t, std::size_t> ce_copy_at;      // CE-marked PPSN -> its (only) copy's record
        std::optional<std::pair<std::size_t, std::uint16_t>> last_ack;  // record, CE_Count
    };
    std::map<unsigned, path_state> ps;
    for (const auto& r : fr) {
        if (r.is(opcode::ctrl)) {
            if (auto id = path_reset_to_dut(r)) ps[*id].reset = true;
            continue;
        }
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) {
            const auto& f = r.f();
            auto& st = ps[f.mrh.path_id];
            const bool ce = f.ip_ecn() == k_ecn_ce;
            if (ce) {
                ++st.high;
                if (!naked.count({f.mrh.path_id, f.bth.psn})) ++st.low;
                st.ce_copy_at[f.bth.psn] = r.index;
            }
            st.low_at_first.emplace(f.bth.psn, st.low);
            continue;
        }
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
        const auto& a = r.f().ackh;
        auto& st = ps[a.path_id];
        if (st.reset) continue;
        const std::uint32_t x = a.trig_ppsn.ppsn();
        const std::string where = " on path " + std::to_string(a.path_id);
        if (auto c = st.ce_copy_at.find(x); a.ece() && c != st.ce_copy_at.end() && copies[{a.path_id, x}] == 1 &&
                                             st.last_ack && c->second > st.last_ack->first &&
                                             a.ce_count == st.last_ack->second)
            return fail("CE_Count" + where + " did not count CE-marked PPSN " + std::to_string(x) +
                            ", which arrived after the DUT's previous ACK on the path (MR-CC-1)",
                        "more than " + std::to_string(st.last_ack->second), std::to_string(a.ce_count),
                        {st.last_ack->first, c->second, r.index});
        st.last_ack = std::make_pair(r.index, a.ce_count);
        if (tr.timing.realtime) continue;
        const auto first = st.low_at_first.find(x);
        if (first == st.low_at_first.end()) continue;  // the trigger never reached the DUT: not ours to judge here
        const std::uint32_t lo = first->second, hi = st.high;
        if (static_cast<std::uint16_t>(a.ce_count - lo) > hi - lo)
            return fail("CE_Count" + where + " is not the count of CE-marked packets the DUT received there (MR-CC-1)",
                        "between " + std::to_string(lo) + " and " + std::to_string(hi) + " (mod 65536)",
                        std::to_string(a.ce_count), {r.index});
    }
    return std::nullopt;
}

// Drops a path's entries from a map keyed by (path, PPSN): a PATH_RESET
// restarts the path's PPSNs.
template <class V>
void erase_path(std::map<std::pair<unsigned, std::uint32_t>, V>& m, unsigned path) {
    for (auto it = m.begin(); it != m.end();) it = it->first.first == path ? m.erase(it) : std::next(it);
}

// D107: the order of two of the DUT's ACKs of one path is certain on any wire
// only where every copy of the later ACK's trigger packet that reached the
// DUT left the engine after the earlier ACK had arrived: the DUT sent the
// earlier one before it even had the packet. (ACKs of one path leave by
// several source ports, whose order a host may swap within a burst;
// mrct-refnic flushes its sends socket by socket.) ack_order keeps, per
// path, the running highest of a counter the DUT's ACKs carry (CumAck,
// CE_Count) by arrival, and finds an ACK whose counter is below one an ACK
// certainly sent before it carried. Only ACKs whose trigger reached the DUT
// since the path's last PATH_RESET count: one decided before the DUT
// applied the reset may leave after the reset reached it, and the counter
// restarts there. Lt is the counter's serial order.
template <bool (*Lt)(std::uint32_t, std::uint32_t)>
class ack_order {
public:
    struct earlier {
        std::uint32_t highest;  // the highest the path's ACKs had said
        std::size_t index;      // the ACK that said it
    };
    // Every record but the DUT's ACKs, in trace order: PATH_RESETs and the
    // data that reached the DUT.
    void see(const trace::record& r) {
        if (auto id = path_reset_to_dut(r)) {
            acks_.erase(*id);
            erase_path(first_copy_, *id);
        } else if (r.reached_dut() && r.data()) {
            first_copy_.emplace(std::make_pair(unsigned{r.f().mrh.path_id}, r.f().bth.psn), r.t);
        }
    }
    // A DUT ACK of `path` triggered by `trig`, carrying `value`: the earlier
    // ACK whose highest it went below, if any.
    std::optional<earlier> ack(const trace::record& r, unsigned path, std::uint32_t trig, std::uint32_t value) {
        const auto fc = first_copy_.find({path, trig});
        if (fc == first_copy_.end()) return std::nullopt;
        auto& seen = acks_[path];
        auto before = std::lower_bound(seen.begin(), seen.end(), fc->second, [](const seen_ack& s, nanos t) { return s.t < t; });
        if (before != seen.begin() && Lt(value, std::prev(before)->highest))
            return earlier{std::prev(before)->highest, std::prev(before)->index};
        const bool higher = seen.empty() || Lt(seen.back().highest, value);
        seen.push_back({r.t, higher ? value : seen.back().highest, higher ? r.index : seen.back().index});
        return std::nullopt;
    }

private:
    struct seen_ack {
        nanos t;
        std::uint32_t highest;  // the highest of the path's ACKs so far
        std::size_t index;      // the ACK that carried it
    };
    std::map<unsigned, std::vector<seen_ack>> acks_;                  // path -> its ACKs in arrival order
    std::map<std::pair<unsigned, std::uint32_t>, nanos> first_copy_;  // (path, PPSN) -> first copy sent
};

// MR-SACK-1, MR-PATH-3: a path's CumAck never goes back; only a PATH_RESET
// the DUT received restarts it (at the new INITIAL_PPSN, §4). Judged only
// where the order of two of the DUT's ACKs is certain on any wire
// (ack_order). A receiver that finds a path's state by source port, not by
// PathID, shows here: a port move meets fresh state, and its ACK says
// CumAck is back at the path's start. As ce_count_wrong, a trace with data
// for more than one of the DUT's connections is not judged.
std::optional<outcome> cum_ack_backwards(const trace::trace& tr) {
    if (!one_dut_connection(tr)) return std::nullopt;
    ack_order<core::psn24::lt> order;
    for (const auto& r : tr.frames) {
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) {
            order.see(r);
            continue;
        }
        const auto& a = r.f().ackh;
        const std::uint32_t cum = r.f().bth.psn;
        if (auto e = order.ack(r, a.path_id, a.trig_ppsn.ppsn(), cum))
            return fail("CumAck went back on path " + std::to_string(a.path_id) + " with no PATH_RESET: an ACK of the DUT " +
                            "(frame #" + std::to_string(e->index) + ") said CumAck " + std::to_string(e->highest) +
                            " before PPSN " + std::to_string(a.trig_ppsn.ppsn()) +
                            " left the engine; the DUT's ACK for that packet says CumAck " + std::to_string(cum) +
                            " (MR-SACK-1, MR-PATH-3)",
                        ">= " + std::to_string(e->highest), std::to_string(cum), {e->index, r.index});
    }
    return std::nullopt;
}

// MR-SACK-1: an ACK's SACK reports the path's packets the DUT had. Judged
// only where that is certain on any wire: the packet x came on the path
// from the same source port before the first copy of the ACK's trigger
// packet (one flow's frames reach the DUT in order: a link, a NIC queue,
// a socket), and a later ACK of the DUT reports x with no copy of x having
// arrived since (so the copy was not lost in the DUT's host). An ACK whose
// CumAck is below x, x within its 256 bits, and whose bit for x is clear
// then left out a packet the DUT had. Packets the DUT answered with a NAK or
// an RNR are not judged; a PATH_RESET the DUT received restarts the path. As
// ce_count_wrong, a trace with data for more than one of the DUT's
// connections is not judged.
std::optional<outcome> sack_omits(const trace::trace& tr, std::size_t* judged = nullptr) {
    const auto& fr = tr.frames;
    if (!one_dut_connection(tr)) return std::nullopt;
    std::set<std::pair<unsigned, std::uint32_t>> answered;  // (path, PPSN) NAKed or RNR'd
    std::map<std::pair<unsigned, std::uint32_t>, std::vector<std::size_t>> copies;  // every good copy's record, whole trace
    for (const auto& r : fr) {
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) copies[{r.f().mrh.path_id, r.f().bth.psn}].push_back(r.index);
        if (r.d == trace::dir::from_dut && r.is(opcode::nak)) answered.insert({r.f().nakh.path_id, r.f().nakh.nak_ppsn.ppsn()});
        if (r.d == trace::dir::from_dut && r.is(opcode::rnr)) answered.insert({r.f().rnrh.path_id, r.f().rnrh.ppsn.ppsn()});
    }
    struct arrival {
        std::size_t index;
        std::uint32_t ppsn;
        std::uint16_t sport;
    };
    std::map<unsigned, std::vector<arrival>> got;                           // path -> good copies in order
    std::map<std::pair<unsigned, std::uint32_t>, std::size_t> first_copy;   // (path, PPSN) -> its first good copy's record
    for (const auto& r : fr) {
        if (auto id = path_reset_to_dut(r)) {
            got.erase(*id);
            erase_path(first_copy, *id);
            continue;
        }
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) {
            const unsigned p = r.f().mrh.path_id;
            got[p].push_back({r.index, r.f().bth.psn, r.f().udp.sport});
            first_copy.emplace(std::make_pair(p, r.f().bth.psn), r.index);
            continue;
        }
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
        const auto& b = r.f();
        const unsigned p = b.ackh.path_id;
        auto fy = first_copy.find({p, b.ackh.trig_ppsn.ppsn()});
        if (fy == first_copy.end()) continue;
        const std::size_t y = fy->second;
        const std::uint16_t port = fr[y].f().udp.sport;
        const std::uint32_t cum = b.bth.psn;
        const auto& list = got[p];
        // The path's packets before y's first copy, latest first, from y's port.
        auto end = std::lower_bound(list.begin(), list.end(), y, [](const arrival& a, std::size_t i) { return a.index < i; });
        unsigned seen = 0;
        for (auto it = end; it != list.begin() && seen < 512; ++seen) {
            --it;
            if (it->sport != port) continue;
            const std::uint32_t d = (it->ppsn - cum) & 0xFFFFFF;
            if (d == 0 || d >= 256 || answered.count({p, it->ppsn})) continue;
            if (judged) ++*judged;  // a packet the ACK must report: above CumAck, within its bits
            if (b.ackh.sack.test(d)) continue;
            // A later ACK reports x with no copy of x after this one: the DUT had it.
            const auto& xs = copies[{p, it->ppsn}];
            for (std::size_t j = r.index + 1; j < fr.size(); ++j) {
                const auto& q = fr[j];
                if (auto rid = path_reset_to_dut(q); rid && *rid == p) break;
                if (q.d != trace::dir::from_dut || !q.is(opcode::ack) || q.f().ackh.path_id != p || !covers(q.f(), it->ppsn))
                    continue;
                const bool later_copy = std::any_of(xs.begin(), xs.end(), [&](std::size_t k) { return k > it->index && k < q.index; });
                if (later_copy) break;  // the DUT may have had only that one
                return fail("an ACK on path " + std::to_string(p) + " (frame #" + std::to_string(r.index) + ", CumAck " +
                                std::to_string(cum) + ") leaves out PPSN " + std::to_string(it->ppsn) +
                                ", which reached the DUT before the packet it answers (frame #" + std::to_string(it->index) +
                                " before #" + std::to_string(y) + ", one source port) and which a later ACK (#" +
                                std::to_string(q.index) + ") reports with no copy since (MR-SACK-1)",
                            "SACK bit " + std::to_string(d) + " set", "clear", {it->index, y, r.index, q.index});
            }
        }
    }
    return std::nullopt;
}

}  // namespace

// MR-SACK-1 on its own, without timing (sack_omits): for cases that do not
// need fine timing.
outcome sack_reports(const context& c) {
    std::size_t judged = 0;
    if (auto wrong = sack_omits(c.tr(), &judged)) return *wrong;
    if (!judged) return inconclusive("no ACK of the DUT had a packet above its CumAck to report (no gap or reordering it saw)");
    return pass(std::to_string(judged) + " packets above an ACK's CumAck that the DUT had were reported in its SACK");
}

// MR-SACK-1, MR-SACK-2, MR-CC-1, MR-GR-1
outcome acks_conform(const context& c) {
    auto within = c.duration("within");
    if (!within) return error(within.err().message);
    *within += c.wire_rtt();  // the packet's way to the DUT and the ACK's back (D146)
    const auto& fr = c.tr().frames;
    const nanos interval = c.tr().p.ack_delay;
    std::map<unsigned, std::uint32_t> highest;  // highest PPSN received per path
    // CE_Count never goes back on a path (but at a PATH_RESET, where the
    // count restarts at 0, §5), judged as cum_ack_backwards judges CumAck
    // (ack_order: a conforming DUT's ACK from a moved path's new port,
    // decided first, left after the old port's, and failed the passive check).
    ack_order<core::seq16::lt> ce_order;
    // Copies of each (path, PPSN) that reached the DUT and no ACK triggered
    // by that PPSN has answered yet, one ACK answering one copy: a later ACK
    // may answer any of them. (Reset to 0 by any ACK, three copies read
    // late by a held DUT left two unanswered when the fourth, CE-marked,
    // came: its ECE answer was the third ACK after it, and CC-052 failed the
    // reference beside stress-ng.)
    std::map<std::pair<unsigned, std::uint32_t>, unsigned> unanswered;
    std::size_t checked = 0, unresolved = 0, in_order = 0, busy = 0, taken_late = 0;
    const auto& tm = c.tr().timing;
    nanos worst_late{0}, most_behind{0}, most_taken_late{0};
    // Real time: how far behind its wire the DUT was when it sent each ACK:
    // the ACK's time minus its trigger packet's arrival. A DUT starved of its
    // CPU on a shared host answers everything late, in order (D59).
    std::vector<std::pair<std::size_t, nanos>> lag_at;  // (record, lag) of the DUT's ACKs
    if (tm.realtime) {
        std::map<std::pair<unsigned, std::uint32_t>, nanos> arrived;
        for (const auto& r : fr) {
            if (r.reached_dut() && r.data() && r.f().icrc_ok()) arrived[{r.f().mrh.path_id, r.f().bth.psn}] = r.t;
            else if (r.d == trace::dir::from_dut && r.is(opcode::ack))
                if (auto it = arrived.find({r.f().ackh.path_id, r.f().ackh.trig_ppsn.ppsn()}); it != arrived.end())
                    lag_at.push_back({r.index, r.t - it->second});
        }
    }
    // How far behind its wire the DUT was at `deadline`: the first ACK it sent
    // at or after it answering a packet that had arrived before it, and how
    // old that packet then was (any path). A DUT held by its host works
    // through what arrived meanwhile, so after a stall it answers packets from
    // before; one that ignores the ACK interval answers packets that just came
    // (count-triggered ACKs). Seen 64 times slower on a veth (PATH-004): after
    // a 1.1 ms stall the reference's ACKs on three paths came together, their
    // trigger packets an ACK interval old, and later ones in the burst were
    // prompt. The packet's own answer is no witness: a timer that fired late
    // answers the path's latest packet, however old (D53).
    auto behind = [&](nanos deadline, unsigned path, std::uint32_t ppsn) -> std::optional<nanos> {
        for (const auto& [i, l] : lag_at) {
            if (fr[i].t < deadline || fr[i].t - l >= deadline) continue;
            const auto& a = fr[i].f().ackh;
            if (a.path_id == path && a.trig_ppsn.ppsn() == ppsn) continue;
            return l;
        }
        return std::nullopt;
    };
    // Real time: when the DUT took data packet `r` in, as far as its own ACKs
    // show (D112): the latest ACK on the packet's path, before `any` (the
    // first that covers it) and by `horizon`, that answered (TrigPPSN) a
    // packet of the path which reached the DUT with `r` or after it, and did
    // not cover it. The DUT had not taken `r` in when it sent it (an ACK that
    // omits a packet the DUT had breaks MR-SACK-1: sack_omits). A DUT working
    // through a burst: mrct-refnic at 5 % of a CPU read a packet 1.05 ms after
    // it arrived, its ACK of the one before still without it, and covered it
    // 0.99 ms later, within the interval of 1.28 ms. `r`'s own time otherwise.
    auto taken_in = [&](const trace::record& r, nanos horizon, const trace::record* any) {
        const unsigned p = r.f().mrh.path_id;
        auto of_path = [p](const trace::record& q) { return q.reached_dut() && q.data() && q.f().mrh.path_id == p; };
        std::set<std::uint32_t> since;  // PPSNs of the path that reached the DUT with `r` or after it
        for (std::size_t k = r.index; k-- > 0 && fr[k].t >= r.t;)
            if (of_path(fr[k])) since.insert(fr[k].f().bth.psn);
        nanos taken = r.t;
        for (std::size_t j = r.index + 1; j < fr.size() && fr[j].t <= horizon && &fr[j] != any; ++j) {
            const auto& q = fr[j];
            if (of_path(q)) since.insert(q.f().bth.psn);
            else if (q.d == trace::dir::from_dut && q.ok() && q.is(opcode::ack) && q.f().ackh.path_id == p &&
                     since.count(q.f().ackh.trig_ppsn.ppsn()))
                taken = q.t;
        }
        return taken;
    };
    for (const auto& r : fr) {
        if (r.d == trace::dir::from_dut && r.is(opcode::ack)) {
            const auto& a = r.f().ackh;
            if (a.grant_rate == 0)
                return fail("a DUT ACK carries GrantRate 0 (reserved)", "GrantRate >= 1", "0", {r.index});
            if (auto e = ce_order.ack(r, a.path_id, a.trig_ppsn.ppsn(), a.ce_count))
                return fail("CE_Count went backwards on path " + std::to_string(a.path_id) + ": an ACK of the DUT (frame #" +
                                std::to_string(e->index) + ") said " + std::to_string(e->highest) + " before PPSN " +
                                std::to_string(a.trig_ppsn.ppsn()) + " left the engine; the DUT's ACK for that packet says " +
                                std::to_string(a.ce_count) + " (MR-CC-1)",
                            ">= " + std::to_string(e->highest), std::to_string(a.ce_count), {e->index, r.index});
            if (auto& n = unanswered[{a.path_id, a.trig_ppsn.ppsn()}]; n) --n;
            continue;
        }
        ce_order.see(r);
        // A PATH_RESET restarts the path's sequence at its INITIAL_PPSN: the
        // first packet after it is in order, whatever the old sequence's
        // highest (seen with mrct-refnic held 95 ms at a time, D111: the new
        // start read as a new gap, and the DUT's in-order answer as late).
        if (auto id = path_reset_to_dut(r)) {
            highest.erase(*id);
            continue;
        }
        if (!r.reached_dut() || !r.data() || !r.f().icrc_ok()) continue;
        const auto& f = r.f();
        const unsigned p = f.mrh.path_id;
        const std::uint32_t x = f.bth.psn;
        bool gap = false;
        auto h = highest.find(p);
        if (h != highest.end()) {
            const std::uint32_t d = (x - h->second) & 0xFFFFFF;
            if (d < (1u << 23)) {
                gap = d > 1;
                h->second = x;
            }
        } else {
            highest[p] = x;
        }
        const bool ce = f.ip_ecn() == 3;
        const bool now = f.bth.ack_req || ce || gap;
        const unsigned earlier = unanswered[{p, x}]++;  // earlier copies still unanswered
        ++checked;
        // Find the DUT's answer.
        const trace::record* trig = nullptr;  // the first ACK this packet triggered
        const trace::record* any = nullptr;
        bool nak = false;
        // Real time: the answers are looked for beyond the deadline too (a late
        // one may still be in order, below).
        const nanos horizon = r.t + interval + *within + (tm.realtime ? nanos{1'000'000'000} : nanos{0});
        bool superseded = false;  // another copy of the packet reached the DUT before any answer to this one
        for (std::size_t j = r.index + 1; j < fr.size() && fr[j].t <= horizon && !(trig && any); ++j) {
            const auto& q = fr[j];
            if (!trig && q.reached_dut() && q.data() && q.f().mrh.path_id == p && q.f().bth.psn == x) {
                // From here an ACK may answer either copy (this one may have been
                // lost in the DUT's host): the later copy is judged on its own.
                superseded = true;
                break;
            }
            if (q.d != trace::dir::from_dut || !q.ok()) continue;
            if (q.is(opcode::nak) || q.is(opcode::rnr)) {
                if ((q.is(opcode::nak) && q.f().nakh.nak_ppsn.ppsn() == x) || (q.is(opcode::rnr) && q.f().rnrh.ppsn.ppsn() == x))
                    nak = true;
                continue;
            }
            if (!q.is(opcode::ack) || q.f().ackh.path_id != p) continue;
            if (q.f().ackh.trig_ppsn.ppsn() == x && !trig) trig = &q;
            if (covers(q.f(), x) && !any) any = &q;
        }
        if (nak) continue;  // answered by NAK (0x0B etc.): a different clause
        if (superseded) {
            --checked;
            continue;
        }
        // ECE on the ACK a CE-marked packet triggered: no timing involved.
        // Where earlier copies of the packet were still unanswered when this
        // one arrived, each of the next ACKs it triggered may be theirs (a DUT
        // behind its wire answered an unmarked copy after the marked one
        // arrived, seen beside stress-ng): the failure is that none of them
        // carries ECE.
        if (ce && trig && !trig->f().ackh.ece()) {
            unsigned candidates = earlier;
            bool echoed = false;
            for (std::size_t j = trig->index + 1; j < fr.size() && candidates && fr[j].t <= horizon; ++j) {
                const auto& q = fr[j];
                if (q.d != trace::dir::from_dut || !q.is(opcode::ack) || q.f().ackh.path_id != p ||
                    q.f().ackh.trig_ppsn.ppsn() != x)
                    continue;
                --candidates;
                if (q.f().ackh.ece()) {
                    echoed = true;
                    break;
                }
            }
            if (!echoed)
                return fail("the ACK for CE-marked PPSN " + std::to_string(x) + " lacks ECE", "ECE set", "ECE clear",
                            {r.index, trig->index});
        }
        // Real time: where the engine ran later than the allowed delay around
        // this packet, the host was busy and the DUT's answer may have been
        // held by it: not judged (docs/timing.md, windowed).
        auto unresolvable = [&](nanos span) {
            if (!tm.realtime || tm.late_between(r.t, r.t + span) <= *within) return false;
            ++unresolved;
            worst_late = std::max(worst_late, tm.late_between(r.t, r.t + span));
            return true;
        };
        // Real time: an answer that came, but late by `excess`, is excused by
        // holds of the engine or of the DUT beside it, meeting the span, as
        // long as the excess (D62: a DUT timer 5.1 ms late against a 5 ms
        // allowance, beside stress-ng).
        // The DUT's own waits for a CPU count in all (D67): preempted in
        // many short spans, it answered late by their sum (SACK-005 beside
        // stress-ng: 0.5 ms of waits in 1 ms, each about a probe period).
        auto excused = [&](const trace::record* answer, nanos deadline) {
            if (!tm.realtime || !answer || answer->t <= deadline) return false;
            const nanos held = tm.excuse_between(r.t, answer->t).most();
            if (held < answer->t - deadline) return false;
            ++unresolved;
            worst_late = std::max(worst_late, held);
            return true;
        };
        const bool immediate = trig && trig->t <= r.t + *within;
        if (now && !immediate && tm.realtime && trig) {
            // Real time: a userspace DUT working through a burst answers late,
            // but in order. Its answer was still at once if nothing it sent
            // before it acknowledged this packet: it had not got to it (D59).
            bool covered_before = false;
            for (std::size_t j = r.index + 1; j < trig->index && !covered_before; ++j) {
                const auto& q = fr[j];
                covered_before = q.d == trace::dir::from_dut && q.is(opcode::ack) && q.f().ackh.path_id == p && covers(q.f(), x);
            }
            if (!covered_before) {
                ++in_order;
                continue;
            }
        }
        if (now && !immediate) {
            if (unresolvable(*within) || excused(trig, r.t + *within)) continue;
            return fail(std::string("PPSN ") + std::to_string(x) + " on path " + std::to_string(p) + " (" +
                            (f.bth.ack_req ? "AckReq" : ce ? "CE-marked" : "a new gap") + ") was not acknowledged at once",
                        "an ACK with TrigPPSN " + std::to_string(x) + " within " + fmt_time(*within), "none", {r.index});
        }
        bool in_interval = any && any->t <= r.t + interval + *within;
        // Real time: the ACK interval runs from when the DUT took the packet
        // in (taken_in, D112), looked for only where it was late from arrival.
        const nanos taken = !in_interval && tm.realtime ? taken_in(r, horizon, any) : r.t;
        if (!in_interval && any && taken > r.t && any->t <= taken + interval + *within) {
            in_interval = true;
            ++taken_late;
            most_taken_late = std::max(most_taken_late, taken - r.t);
        }
        if (!in_interval && taken + interval + *within <= c.tr().end) {
            if (unresolvable(interval + *within) || excused(any, taken + interval + *within)) continue;
            // Real time: acknowledged late, but at the deadline the DUT was
            // behind its wire (starved of CPU), not lazy: `behind` above.
            if (auto b = behind(taken + interval + *within, p, x); b && *b > *within) {
                ++busy;
                most_behind = std::max(most_behind, *b);
                continue;
            }
            return fail("PPSN " + std::to_string(x) + " on path " + std::to_string(p) + " was not acknowledged within the ACK interval",
                        "an ACK covering it within " + fmt_time(interval + *within), "none", {r.index});
        }
    }
    if (auto wrong = ce_count_wrong(c.tr())) return *wrong;
    if (auto wrong = cum_ack_backwards(c.tr())) return *wrong;
    if (auto wrong = sack_omits(c.tr())) return *wrong;
    if (!checked) return inconclusive("the DUT received no data");
    if (busy + unresolved == checked && busy)
        return inconclusive("every late answer came while the DUT was behind its wire by at least " +
                            fmt_time(most_behind) + "; this check needs " + fmt_time(*within));
    if (unresolved == checked)
        return inconclusive("every late answer fell where the engine ran up to " + fmt_time(worst_late) +
                            " late; this check needs " + fmt_time(*within));
    auto o = pass(std::to_string(checked) + " data packets acknowledged as §5 requires" +
                  (unresolved ? " (" + std::to_string(unresolved) + " late answers not judged: the engine ran up to " +
                                    fmt_time(worst_late) + " late around them)"
                              : std::string()));
    o.measured["unresolved"] = static_cast<double>(unresolved);
    if (busy) {
        o.message += "; " + std::to_string(busy) + " acknowledged late while the DUT was behind its wire (up to " +
                     fmt_time(most_behind) + ", not judged)";
        o.measured["dut_behind"] = static_cast<double>(busy);
    }
    if (in_order) {
        o.message += "; " + std::to_string(in_order) + " answered later than " + fmt_time(*within) +
                     " but before anything acknowledged them (the DUT working through a burst)";
        o.measured["late_in_order"] = static_cast<double>(in_order);
    }
    if (taken_late) {
        o.message += "; " + std::to_string(taken_late) + " acknowledged within the ACK interval from when the DUT's ACKs show it took them in (up to " +
                     fmt_time(most_taken_late) + " after they arrived)";
        o.measured["taken_in_late"] = static_cast<double>(taken_late);
    }
    return o;
}

// NAK codes the DUT sent (MR-HDR-5, MR-OOO-4, MR-SACK-5, MR-CONN-2/3/4).
outcome naks(const context& c) {
    const auto code = c.has("code") ? static_cast<int>(c.integer("code")) : -1;
    std::vector<std::size_t> hits, other;
    for (const auto& r : c.tr().frames)
        if (r.d == trace::dir::from_dut && r.is(opcode::nak)) {
            if (code < 0 || r.f().nakh.code == code) hits.push_back(r.index);
            else other.push_back(r.index);
        }
    const auto at_least = static_cast<std::size_t>(c.integer("at_least"));
    const std::string what = code < 0 ? std::string("NAKs") : "NAK " + std::string(nak_code_name(static_cast<std::uint8_t>(code)));
    if (hits.size() < at_least) {
        // How long the DUT had for its answer (D155: the case's settle after
        // its work, in real time stretched by the holds seen in it; in
        // virtual time until nothing was left to happen, timers included).
        std::optional<nanos> last_in;
        for (const auto& r : c.tr().frames)
            if (r.reached_dut()) last_in = r.t;
        std::string waited;
        if (last_in && c.tr().end >= *last_in)
            waited = (c.tr().timing.realtime ? " by the case's end, " : " by the case's end (nothing left to happen), ") +
                     fmt_time(c.tr().end - *last_in) + " after the last frame the DUT received";
        return fail("the DUT sent " + std::to_string(hits.size()) + " " + what + waited, ">= " + std::to_string(at_least),
                    std::to_string(hits.size()) + (other.empty() ? "" : " (other NAK codes: " + frames_list(other) + ")"), other);
    }
    if (c.has("at_most") && hits.size() > static_cast<std::size_t>(c.integer("at_most")))
        return fail("the DUT sent " + std::to_string(hits.size()) + " " + what, "<= " + c.str("at_most"),
                    std::to_string(hits.size()), hits);
    return pass("the DUT sent " + std::to_string(hits.size()) + " " + what);
}

// MR-HDR-2 / MR-HDR-3: injected broken packets get no answer and are counted.
outcome silent_drop(const context& c) {
    auto window = c.duration("window");
    if (!window) return error(window.err().message);
    const auto& fr = c.tr().frames;
    std::size_t injected = 0;
    for (const auto& r : fr) {
        if (!r.reached_dut() || !r.injected) continue;
        ++injected;
        // Decoded without the ICRC check: the fields of a bad-ICRC packet.
        auto raw = decode_ethernet(r.bytes, {.verify_icrc = false});
        if (!raw.ok() || !is_data_opcode(raw.f.bth.opcode)) continue;
        const std::uint32_t x = raw.f.bth.psn;
        const unsigned p = raw.f.mrh.path_id;
        // Until the real packet with that PPSN arrives, an ACK or NAK naming
        // or covering it can only answer the injected one. In virtual time
        // the DUT answers within `window`; in real time its host's latency
        // is not bounded by it (mrct-refnic's ACK of an accepted bad-ICRC
        // packet came 460 us after it, accept-bad-icrc behind an agent without
        // counters escaped, D159): the watch runs to the case's end.
        const bool to_end = c.tr().timing.realtime;
        for (std::size_t j = r.index + 1; j < fr.size() && (to_end || fr[j].t <= r.t + *window); ++j) {
            const auto& q = fr[j];
            if (q.reached_dut() && q.data() && q.f().mrh.path_id == p && q.f().bth.psn == x && !q.injected)
                break;  // the real packet with that PPSN arrived: answers are its own
            if (q.d != trace::dir::from_dut || !q.ok()) continue;
            const bool answer = (q.is(opcode::ack) && q.f().ackh.path_id == p &&
                                 (q.f().ackh.trig_ppsn.ppsn() == x || covers(q.f(), x))) ||
                                (q.is(opcode::nak) && q.f().nakh.nak_ppsn.ppsn() == x && q.f().nakh.path_id == p);
            if (answer)
                return fail("the DUT answered an injected broken packet (" + r.action + ")",
                            "silent drop: no ACK or NAK for PPSN " + std::to_string(x), "frame #" + std::to_string(q.index) +
                            " answers it", {r.index, q.index});
        }
    }
    if (!injected) return inconclusive("nothing was injected");
    if (c.has("counter")) {
        const auto& k = c.tr().dut.counters;
        auto it = k.find(c.str("counter"));
        if (it == k.end())
            return inconclusive("the DUT reports no counter '" + c.str("counter") + "'");
        if (it->second < injected)
            return fail("the DUT counted " + std::to_string(it->second) + " drops in " + c.str("counter"),
                        ">= " + std::to_string(injected) + " (one per injected packet)", std::to_string(it->second), {});
    }
    return pass(std::to_string(injected) + " injected packets dropped silently" +
                (c.has("counter") ? " and counted in " + c.str("counter") : ""));
}

// MR-RNR-6 (§4): a receiver keeps a rejection "until that message arrives
// again in full, or fails by NAK", and answers RNR_QUERY with the RNR of
// every rejection it keeps. An answer (the DUT's RNRs between the query and
// its RNR_SYNC) carrying the RNR of a message that, before the query, had
// arrived again in full under an Attempt the DUT never rejected, fails. The
// rule binds only where such a message exists when a query arrives: a
// receive posted after the re-send arrived (an agent call held on a busy
// host) draws a lawful RNR for the re-send too, and the check cannot tell.
outcome rejection_dropped(const context& c) {
    const auto& fr = c.tr().frames;
    using msg_key = std::pair<std::uint16_t, std::uint32_t>;  // stream, StreamSeq
    std::map<msg_key, std::set<std::uint8_t>> rejected;        // Attempts the DUT rejected, in the whole run
    for (const auto& r : fr)
        if (r.d == trace::dir::from_dut && r.is(opcode::rnr))
            rejected[{r.f().rnrh.stream_id, r.f().rnrh.stream_seq}].insert(r.f().rnrh.attempt);
    struct arrival {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> parts;  // byte ranges that reached the DUT (a bad ICRC does not decode: not data)
        std::uint32_t total = 0;
    };
    std::map<std::tuple<std::uint16_t, std::uint32_t, std::uint8_t>, arrival> got;
    // The DUT's RNRs so far (stream, StreamSeq, Attempt, RnrSeq): a query's
    // re-sends are copies of these.
    std::set<std::tuple<std::uint16_t, std::uint32_t, std::uint8_t, std::uint16_t>> sent;
    std::size_t queries = 0, bound = 0;
    for (const auto& r : fr) {
        if (r.d == trace::dir::from_dut && r.is(opcode::rnr)) {
            const auto& h = r.f().rnrh;
            sent.insert({h.stream_id, h.stream_seq, h.attempt, h.rnr_seq});
            continue;
        }
        if (r.reached_dut() && r.data() && is_send_opcode(r.f().bth.opcode)) {
            const auto& f = r.f();
            auto& a = got[{f.mrh.stream_id, f.mrh.stream_seq, f.mrh.attempt}];
            a.total = f.seth.msg_len;
            a.parts.push_back({f.mrh.msg_offset, f.mrh.msg_offset + static_cast<std::uint32_t>(f.payload.size())});
            continue;
        }
        if (!r.reached_dut() || !r.is(ctrl_type::rnr_query))
            continue;
        ++queries;
        // Messages the DUT had rejected that arrived again in full, under an Attempt it took.
        std::map<msg_key, std::uint8_t> again;
        for (const auto& [k, a] : got) {
            const msg_key m{std::get<0>(k), std::get<1>(k)};
            auto rj = rejected.find(m);
            if (rj == rejected.end() || rj->second.count(std::get<2>(k))) continue;
            if (arrived_prefix(a.parts) >= a.total) again[m] = std::get<2>(k);
        }
        if (again.empty()) continue;
        ++bound;
        // The query's answer: the RNRs re-sent for it, each a copy of one
        // sent before it (§4: "unchanged", the same RnrSeq), until the next
        // query reaches the DUT. Where they fall against the answer's
        // RNR_SYNC is not what makes them a re-send: a DUT whose RNRs leave
        // by a slower path than its CTRL (answer-late, D155) still kept the
        // rejection if it re-sends its RNR after the SYNC.
        for (std::size_t j = r.index + 1; j < fr.size(); ++j) {
            const auto& x = fr[j];
            if (x.reached_dut() && x.is(ctrl_type::rnr_query))
                break;
            if (x.d != trace::dir::from_dut || !x.is(opcode::rnr)) continue;
            const auto& h = x.f().rnrh;
            if (!sent.count({h.stream_id, h.stream_seq, h.attempt, h.rnr_seq})) continue;  // a new rejection
            auto it = again.find({h.stream_id, h.stream_seq});
            if (it == again.end()) continue;
            return fail("the RNR_QUERY drew the RNR (Attempt " + std::to_string(h.attempt) + ") of stream " +
                            std::to_string(h.stream_id) + " seq " + std::to_string(h.stream_seq) +
                            ", which had arrived again in full under Attempt " + std::to_string(it->second) +
                            " before the query",
                        "no RNR for a message that arrived again in full", "RNR re-sent", {r.index, x.index});
        }
    }
    if (!queries) return inconclusive("no RNR_QUERY reached the DUT");
    if (!bound) {
        auto o = inconclusive("no rejected message had arrived again in full, under an Attempt the DUT took, before an "
                              "RNR_QUERY: the rule did not bind (in real time, a receive posted after the re-send "
                              "arrived makes the DUT reject the re-send too)");
        o.timing_doubt = c.tr().timing.realtime;
        return o;
    }
    return pass(std::to_string(bound) + " RNR_QUERY answers left out every message that had arrived again in full");
}

// MR-RNR-6 (§4): "The receiver answers by re-sending, unchanged, the RNR of
// every rejection it keeps, then RNR_SYNC with its RnrCount." Per RNR_QUERY
// that reached the DUT and drew an RNR_SYNC (the DUT's first after it, before
// the next query reached it), the rejections the DUT surely kept (D158):
// made before the query (an RNR of it before the query, or an ACK before the
// query whose RnrCount covers its RnrSeq: the count comes first, MR-RNR-6),
// with no later Attempt of its message reaching the DUT before the SYNC, in
// part or in full, and no NAK of the DUT's before the SYNC (a rejection also
// ends when its message fails by NAK, which names no message: unjudged). A
// rejection is its RNRs' (stream, StreamSeq, Attempt, RnrSeq). The answer
// must hold an RNR of each before the SYNC: the re-send, and also the first
// RNR where that left only after the query (a slow path: answer-late), or
// one RNR for both (a DUT may send a rejection whose RNR had not left when
// the query came only once). An RNR of it missing before the SYNC but sent
// after it, before the next query, is the order broken as the trace shows
// it: a fabric spraying by source port may swap an RNR (its rejected
// packet's port) and the SYNC (the CTRL port), so in real time that failure
// says so (cross_port_order: the run's lab is asked, D158).
outcome query_answer(const context& c) {
    const auto& fr = c.tr().frames;
    using rejection = std::tuple<std::uint16_t, std::uint32_t, std::uint8_t, std::uint16_t>;  // stream, seq, Attempt, RnrSeq
    std::size_t queries = 0, answered = 0, bound = 0, resent = 0;
    std::optional<outcome> order_doubt;  // the first order a wire not declared in order leaves in doubt
    for (const auto& q : fr) {
        if (!q.reached_dut() || !q.is(ctrl_type::rnr_query)) continue;
        ++queries;
        const auto far = far_end(q);
        auto dut_to_far = [&](const trace::record& x) { return x.d == trace::dir::from_dut && far_end(x) == far; };
        // The answer's RNR_SYNC, and the end of what answers this query.
        std::size_t sync = fr.size(), end = fr.size();
        for (std::size_t j = q.index + 1; j < fr.size(); ++j) {
            const auto& x = fr[j];
            if (x.reached_dut() && x.is(ctrl_type::rnr_query) && far_end(x) == far) {
                end = j;
                break;
            }
            if (sync == fr.size() && dut_to_far(x) && x.is(ctrl_type::rnr_sync)) sync = j;
        }
        if (sync == fr.size()) continue;  // unanswered (lost, or too late): ctrl_repeat and frame_count judge that
        ++answered;
        // What the DUT kept when the query came, as far as the trace shows.
        std::map<rejection, std::size_t> rejections;  // -> its first RNR (before the next query)
        std::optional<std::uint16_t> counted;          // the highest RnrCount its ACKs carried before the query
        std::map<std::pair<std::uint16_t, std::uint32_t>, int> latest_attempt;  // the newest Attempt that reached the DUT
        bool naked = false;
        for (std::size_t j = 0; j < end; ++j) {
            const auto& x = fr[j];
            if (dut_to_far(x) && x.is(opcode::rnr)) {
                const auto& h = x.f().rnrh;
                rejections.emplace(rejection{h.stream_id, h.stream_seq, h.attempt, h.rnr_seq}, j);
            }
            if (j >= sync) continue;
            if (dut_to_far(x) && x.is(opcode::nak)) naked = true;
            if (j < q.index && dut_to_far(x) && x.is(opcode::ack) &&
                (!counted || core::seq16::lt(*counted, x.f().ackh.rnr_count)))
                counted = x.f().ackh.rnr_count;
            if (x.reached_dut() && x.data() && is_send_opcode(x.f().bth.opcode) && far_end(x) == far) {
                auto& a = latest_attempt.try_emplace({x.f().mrh.stream_id, x.f().mrh.stream_seq}, -1).first->second;
                a = std::max<int>(a, x.f().mrh.attempt);
            }
        }
        if (naked) continue;
        std::erase_if(rejections, [&](const auto& kv) {
            const auto& [stream, seq, attempt, rnr_seq] = kv.first;
            const bool before = kv.second < q.index || (counted && !core::seq16::lt(*counted, rnr_seq));
            auto it = latest_attempt.find({stream, seq});
            const bool let_go = it != latest_attempt.end() && it->second > attempt;  // re-sent since: the DUT may have let it go
            return !before || let_go;
        });
        if (rejections.empty()) continue;
        ++bound;
        for (const auto& [k, first] : rejections) {
            const auto& [stream, seq, attempt, rnr_seq] = k;
            // Its RNRs after the query: before the SYNC, and after it.
            std::vector<std::size_t> in, late;
            for (std::size_t j = q.index + 1; j < end; ++j) {
                const auto& x = fr[j];
                if (!dut_to_far(x) || !x.is(opcode::rnr)) continue;
                const auto& h = x.f().rnrh;
                if (rejection{h.stream_id, h.stream_seq, h.attempt, h.rnr_seq} == k) (j < sync ? in : late).push_back(j);
            }
            const bool first_after = first > q.index;  // its RNR had not left when the query came
            const std::size_t needed = first_after ? 2 : 1;
            const std::string which = "the RNR of rejection RnrSeq " + std::to_string(rnr_seq) + " (stream " +
                                      std::to_string(stream) + " seq " + std::to_string(seq) + ", Attempt " +
                                      std::to_string(attempt) + ", first sent as frame #" + std::to_string(first) + ")";
            if (in.size() >= needed || (first_after && in.size() == 1 && late.empty())) {
                ++resent;
                continue;
            }
            if (!late.empty()) {
                const std::size_t copy = late.front();
                const auto& tm = c.tr().timing;
                if (tm.realtime && !tm.wire_in_order) {
                    if (!order_doubt) order_doubt = inconclusive(
                        "RNR_SYNC (frame #" + std::to_string(sync) + ") reached the engine " +
                        fmt_time(fr[copy].t - fr[sync].t) + " before " + which + " (frame #" + std::to_string(copy) +
                        "), in the answer to the RNR_QUERY of frame #" + std::to_string(q.index) +
                        "; the two left from different UDP source ports, and a fabric that sprays by port may swap "
                        "them: on a wire not declared to keep them in order (agent spec fabric=none) the DUT's own "
                        "order cannot be told (D158)");
                    continue;
                }
                auto o = fail("the answer to the RNR_QUERY of frame #" + std::to_string(q.index) + " sent RNR_SYNC (frame #" +
                                  std::to_string(sync) + ") before re-sending " + which + " (frame #" + std::to_string(copy) +
                                  (fr[copy].t > fr[sync].t ? ", " + fmt_time(fr[copy].t - fr[sync].t) + " later)"
                                                           : ", at the same instant)"),
                              "the kept rejections' RNRs, then RNR_SYNC", "RNR_SYNC first", {q.index, sync, copy});
                o.timing_free = true;
                o.cross_port_order = c.tr().timing.realtime;
                return o;
            }
            auto o = fail("the answer to the RNR_QUERY of frame #" + std::to_string(q.index) + " (RNR_SYNC, frame #" +
                              std::to_string(sync) + ") did not re-send " + which +
                              ", a rejection the DUT kept: made before the query, and no later Attempt of its message had "
                              "reached it",
                          "the RNR of every kept rejection re-sent, then RNR_SYNC", "RNR_SYNC without it", {first, q.index, sync});
            o.timing_free = true;
            return o;
        }
    }
    if (!queries) return inconclusive("no RNR_QUERY reached the DUT");
    if (!answered) return inconclusive(std::to_string(queries) + " RNR_QUERY reached the DUT and none drew an RNR_SYNC before the next");
    if (!bound) {
        auto o = inconclusive(std::to_string(answered) +
                              " RNR_QUERY answered, none while the DUT surely kept a rejection (each rejected message "
                              "had been re-sent since, or the DUT had sent a NAK): the rule did not bind");
        o.premise_missing = true;
        return o;
    }
    if (order_doubt) return *order_doubt;
    return pass(std::to_string(bound) + " RNR_QUERY answers re-sent the RNR of each of " + std::to_string(resent) +
                " kept rejections before their RNR_SYNC");
}

// MR-RNR-1 / MR-RNR-6: rejected SENDs get an RNR and their PPSNs are
// acknowledged with a RnrCount that includes the rejection.
outcome rnr_sent(const context& c) {
    const auto& fr = c.tr().frames;
    std::set<std::tuple<std::uint16_t, std::uint32_t, std::uint8_t, std::uint16_t>> seen;
    std::size_t rnrs = 0;
    for (const auto& r : fr) {
        if (r.d != trace::dir::from_dut || !r.is(opcode::rnr)) continue;
        const auto& h = r.f().rnrh;
        ++rnrs;
        // The same rejection sent again (the answer to an RNR_QUERY, §4) was
        // acknowledged after its first copy; it needs no ACK of its own.
        if (!seen.insert({h.stream_id, h.stream_seq, h.attempt, h.rnr_seq}).second) continue;
        // The rejected packet's PPSN must be acknowledged, with RnrCount >=
        // RnrSeq, by the first ACK on its path that covers it after it reached
        // the DUT, whichever of that ACK and the RNR left first: the model
        // orders the count before the ACK, not the RNR frame before the ACK
        // (conforming variant ack-first sends the ACK first, D153).
        const std::uint32_t x = h.ppsn.ppsn();
        std::size_t from = 0;
        for (std::size_t j = 0; j < r.index; ++j) {
            const auto& q = fr[j];
            if (q.reached_dut() && q.data() && q.f().mrh.path_id == h.path_id && q.f().bth.psn == x) {
                from = j;
                break;
            }
        }
        const trace::record* ack = nullptr;
        for (std::size_t j = from; j < fr.size() && !ack; ++j) {
            const auto& q = fr[j];
            if (q.d == trace::dir::from_dut && q.is(opcode::ack) && q.f().ackh.path_id == h.path_id && covers(q.f(), x))
                ack = &q;
        }
        if (!ack)
            return fail("the rejected packet (PPSN " + std::to_string(x) + ", path " + std::to_string(h.path_id) +
                            ") was never acknowledged",
                        "its PPSN acknowledged on its path", "no ACK", {r.index});
        if (core::seq16::lt(ack->f().ackh.rnr_count, h.rnr_seq))
            return fail("the ACK covering a rejected packet carries RnrCount " + std::to_string(ack->f().ackh.rnr_count) +
                            " below the rejection's RnrSeq " + std::to_string(h.rnr_seq),
                        "RnrCount >= " + std::to_string(h.rnr_seq), std::to_string(ack->f().ackh.rnr_count),
                        {r.index, ack->index});
    }
    const auto at_least = static_cast<std::size_t>(c.integer("at_least"));
    if (seen.size() < at_least) {
        auto f = fail("the DUT made " + std::to_string(seen.size()) + " rejections", ">= " + std::to_string(at_least) + " RNRs",
                      std::to_string(seen.size()), {});
        f.count_short = true;  // counts_need_premise: the peer may never have got a SEND to it
        return f;
    }
    if (!rnrs) return inconclusive("the DUT sent no RNR and none was required");
    return pass(std::to_string(rnrs) + " RNRs, each rejected packet acknowledged with RnrCount covering it");
}

// MR-OOO-3: a receive completes only once every byte of its message arrived.
outcome completion_after_placement(const context& c) {
    const auto& fr = c.tr().frames;
    std::size_t checked = 0, sensitive = 0;
    nanos widest{0}, most_uncertain{0};
    for (const auto& wc : c.tr().dut.completions) {
        if (wc.status != "success" || (wc.kind != "recv" && wc.kind != "recv_write_imm")) continue;
        ++checked;
        // Byte ranges of this message that reached the DUT by the completion,
        // and when the last of them arrived after the one before it.
        std::vector<std::pair<std::uint32_t, std::uint32_t>> got;
        std::uint32_t len = 0;
        nanos last{0}, before_last{0};
        for (const auto& r : fr) {
            if (r.t > wc.t) break;
            if (!r.reached_dut() || !r.data() || !r.f().icrc_ok()) continue;
            const auto& f = r.f();
            if (f.mrh.stream_id != wc.stream || f.mrh.stream_seq != wc.stream_seq) continue;
            len = f.has(has_seth) ? f.seth.msg_len : f.reth.dma_len;
            got.push_back({f.mrh.msg_offset, f.mrh.msg_offset + static_cast<std::uint32_t>(f.payload.size())});
            before_last = last;
            last = r.t;
        }
        const std::uint32_t upto = arrived_prefix(got);
        // A completion's time may be late by its poll's round trip (t_err),
        // never early: one recorded before its last byte is early for sure.
        if (upto < len || got.empty())
            return fail("stream " + std::to_string(wc.stream) + " seq " + std::to_string(wc.stream_seq) + " completed at " +
                            fmt_time(wc.t) + " with bytes from " + std::to_string(upto) + " not yet received",
                        "completion after all " + std::to_string(len) + " bytes arrived",
                        "only bytes [0, " + std::to_string(upto) + ") had arrived", {});
        // The other way round it shows only when the last bytes came later than
        // the rest by more than that uncertainty: an early completion at the
        // rest's arrival would then have been recorded before the last byte.
        widest = std::max(widest, last - before_last);
        most_uncertain = std::max(most_uncertain, wc.t_err);
        if (last - before_last > wc.t_err) ++sensitive;
    }
    if (!checked) return inconclusive("the DUT raised no receive completion");
    if (!sensitive)
        return inconclusive("no message's last bytes came later than the rest by more than the completion times' "
                            "uncertainty (widest gap " + fmt_time(widest) + ", poll round trip up to " +
                            fmt_time(most_uncertain) + "): an early completion would not show");
    auto o = pass(std::to_string(checked) + " receive completions, each after its last byte arrived (" +
                  std::to_string(sensitive) + " with the last bytes held long enough to show an early one)");
    o.measured["sensitive"] = static_cast<double>(sensitive);
    return o;
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {

namespace {
// How far a GrantRate may stand from the rate it stands for (D117). GrantRate
// counts whole 100 Mb/s units: a rate that is not a whole number of them is
// off by up to one however it is rounded (at 64 times slower, 100 Gb/s / 2 is
// 7.8 units; the reference advertises 7, another DUT may round to 8), so the
// clause's tolerance is never less than one unit.
double grant_slack(double want_units, double tol) { return std::max(tol * want_units, 1.0); }
// A number of units as a reader wants it: 500, 7.81.
std::string fmt_units(double u) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", u);
    std::string s = b;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}
}  // namespace

// MR-GR-1 / MR-GR-3: the DUT's ACKs advertise the fair share.
outcome grant_advertised(const context& c) {
    auto rate = core::parse_rate_bps(c.str("rate"));
    if (!rate) return error("rate: expected a rate such as 100Gbps");
    auto settle = c.duration("settle");
    if (!settle) return error(settle.err().message);
    const double tol = c.number("tolerance");
    const double want = *rate / static_cast<double>(k_grant_unit_bps);
    std::optional<nanos> first;
    std::size_t n = 0;
    for (const auto& r : c.tr().frames) {
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
        if (!first) first = r.t;
        if (r.t < *first + *settle) continue;
        ++n;
        const double g = r.f().ackh.grant_rate;
        if (g == k_grant_unlimited || std::abs(g - want) > grant_slack(want, tol))
            return fail("a DUT ACK advertises GrantRate " + std::to_string(static_cast<int>(g)) + " x 100 Mb/s",
                        fmt_units(want) + " x 100 Mb/s +/- " + std::to_string(static_cast<int>(tol * 100)) +
                            "% (at least one unit)",
                        std::to_string(static_cast<int>(g)), {r.index});
    }
    if (!n) return inconclusive("the DUT sent no ACK after the settle time");
    return pass(std::to_string(n) + " ACKs advertise about " + c.str("rate"));
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {

// MR-GR-3: with N active senders the receiver grants each inbound rate / N.
// A sender is active while its data reached the DUT within the grant idle
// time; ACKs within `settle` of a change of the active set are not judged
// (the clause allows 2 RTTs after a start, grant idle + 2 RTTs after a stop).
//
// Real time (D110): a DUT counts senders by when it read their data, and on
// a busy host it reads its wire milliseconds late, and in batches whose order
// across senders the wire does not show. So an ACK's grant is judged against
// the counts the wire makes certain, not the one it shows: at least the
// senders the DUT surely had recent data from when it decided (the trigger's
// own, and every sender with a packet within the idle time before the ACK
// left that the DUT had answered before the trigger first reached it: D107's
// order rule), at most the senders whose last data reached it within the
// idle time plus the DUT's longest lag behind its wire (an ACK's time less
// its trigger's first arrival, the most the case saw). A grant outside is a
// failure; a case whose ACKs never had two senders surely active judged
// nothing (an idle time shorter than the DUT's lag: GR-052 is the case with
// one a real wire resolves).
outcome fair_share(const context& c) {
    const auto& fr = c.tr().frames;
    const double tol = c.number("tolerance");
    auto settle = c.duration("settle");
    if (!settle) return error(settle.err().message);
    const nanos idle = c.tr().p.grant_idle;
    const double units = c.tr().p.inbound_rate_bps / static_cast<double>(k_grant_unit_bps);
    // A sender is its address: the far end of its data, and of the DUT's ACKs to it.
    using ip = std::string;
    std::map<ip, std::vector<nanos>> arrivals;  // data reaching the DUT, per sender address
    for (const auto& r : fr)
        if (r.reached_dut() && r.data()) arrivals[far_end(r)].push_back(r.t);
    auto active_at = [&](nanos t) {
        std::set<ip> a;
        for (const auto& [who, ts] : arrivals) {
            auto it = std::upper_bound(ts.begin(), ts.end(), t);
            if (it != ts.begin() && t - *std::prev(it) <= idle) a.insert(who);
        }
        return a;
    };
    auto fail_grant = [&](const trace::record& r, const std::string& count, const std::string& expected) {
        return fail("with " + count + " active senders the DUT granted " + std::to_string(static_cast<long>(r.f().ackh.grant_rate)) +
                        " x 100 Mb/s",
                    expected + " +/- " + std::to_string(static_cast<int>(tol * 100)) + "% (at least one unit)",
                    std::to_string(static_cast<long>(r.f().ackh.grant_rate)), {r.index});
    };
    std::size_t judged = 0, multi = 0;
    double worst = 0;
    if (!c.tr().timing.realtime) {
        for (const auto& r : fr) {
            if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
            const auto now = active_at(r.t);
            if (now.empty() || now != active_at(r.t - *settle)) continue;  // in transition
            const double want = units / static_cast<double>(now.size());
            const double got = r.f().ackh.grant_rate;
            ++judged;
            multi += now.size() > 1;
            worst = std::max(worst, std::abs(got - want) / want);
            if (std::abs(got - want) > grant_slack(want, tol))
                return fail_grant(r, std::to_string(now.size()),
                                  fmt_units(want) + " x 100 Mb/s (inbound / " + std::to_string(now.size()) + ")");
        }
        if (!multi) return inconclusive("no ACK was sent while two or more senders were steadily active");
        outcome o = pass(std::to_string(judged) + " ACKs granted the fair share (" + std::to_string(multi) +
                         " with several senders active)");
        o.measured["max_deviation"] = worst;
        return o;
    }
    // Real time. Each DUT ACK with its trigger's first arrival and sender.
    struct ack {
        std::size_t rec;
        nanos t, trig_at;
        ip to;
    };
    std::map<std::tuple<ip, unsigned, std::uint32_t>, nanos> first;  // (sender, path, PPSN) -> first arrival
    std::vector<ack> acks;
    nanos lag_max{0};
    for (const auto& r : fr) {
        if (r.reached_dut() && r.data()) {
            first.emplace(std::make_tuple(far_end(r), unsigned{r.f().mrh.path_id}, r.f().bth.psn), r.t);
            continue;
        }
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
        const auto to = far_end(r);
        auto it = first.find({to, unsigned{r.f().ackh.path_id}, r.f().ackh.trig_ppsn.ppsn()});
        if (it == first.end()) continue;
        acks.push_back({r.index, r.t, it->second, to});
        lag_max = std::max(lag_max, r.t - it->second);
    }
    std::vector<nanos> lags;
    for (const auto& a : acks) lags.push_back(a.t - a.trig_at);
    std::sort(lags.begin(), lags.end());
    // The DUT's ACKs by time sent, for "answered before the trigger arrived".
    std::vector<const ack*> by_sent;
    for (const auto& a : acks) by_sent.push_back(&a);
    std::sort(by_sent.begin(), by_sent.end(), [](const ack* x, const ack* y) { return x->t < y->t; });
    for (const auto& a : acks) {
        const auto& r = fr[a.rec];
        std::set<ip> sure = {a.to};
        // An ACK b answering a packet within the idle time before a left
        // after that packet: only those sent from a.t - idle on count.
        auto b = std::lower_bound(by_sent.begin(), by_sent.end(), a.t - idle, [](const ack* x, nanos t) { return x->t < t; });
        for (; b != by_sent.end() && (*b)->t < a.trig_at; ++b)
            if (a.t - (*b)->trig_at <= idle) sure.insert((*b)->to);
        std::size_t possible = 0;
        for (const auto& [who, ts] : arrivals) {
            auto it = std::upper_bound(ts.begin(), ts.end(), a.t);
            if (it != ts.begin() && a.t - *std::prev(it) <= idle + lag_max) ++possible;
        }
        const double got = r.f().ackh.grant_rate;
        const double lo = units / static_cast<double>(std::max<std::size_t>(possible, 1)), hi = units / static_cast<double>(sure.size());
        ++judged;
        if (sure.size() < 2) continue;
        ++multi;
        if (got < lo - grant_slack(lo, tol) || got > hi + grant_slack(hi, tol) || got == k_grant_unlimited) {
            auto f = fail_grant(r, "at least " + std::to_string(sure.size()) + " and at most " + std::to_string(possible),
                                fmt_units(lo) + " to " + fmt_units(hi) +
                                    " x 100 Mb/s (inbound / " + std::to_string(possible) + " to inbound / " + std::to_string(sure.size()) + ")");
            f.message += " (" + std::to_string(sure.size()) + " senders surely active in its view: data within the grant idle time " +
                         fmt_time(idle) + " that it had answered before this ACK's trigger reached it; the DUT ran up to " +
                         fmt_time(lag_max) + " behind its wire)";
            f.timing_free = true;  // the bounds already hold the DUT's lag
            return f;
        }
    }
    if (!multi)
        return inconclusive("no ACK of the DUT came while two or more senders were surely active in its view (" +
                            std::to_string(judged) + " ACKs): the DUT ran a median " +
                            fmt_time(lags.empty() ? nanos{0} : lags[lags.size() / 2]) + ", up to " + fmt_time(lag_max) +
                            " behind its wire; this check needs it to answer within the grant idle time, " + fmt_time(idle));
    outcome o = pass(std::to_string(multi) + " ACKs with several senders surely active granted a share the wire allows (" +
                     std::to_string(judged) + " ACKs; the DUT up to " + fmt_time(lag_max) + " behind its wire)");
    o.timing_free = true;
    return o;
}

}  // namespace mrct::assertions::checks
