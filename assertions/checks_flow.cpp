// DUT as sender: windows, ECN response, grants, RNR pauses, close.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "assertions/checks.h"
#include "assertions/ctrl_requests.h"
#include "assertions/sender_view.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"
#include "wire/rnr_timer.h"

namespace mrct::assertions::checks {

using namespace wire;
using core::nanos;

// MR-CC-4 / MR-SACK-5
outcome window_limit(const context& c) {
    const auto& sv = c.sender();
    const unsigned cap = c.tr().p.max_inflight, init = c.tr().p.cwnd_initial;
    if (sv.tx.empty()) return inconclusive("the DUT sent no data");
    for (const auto& [p, s] : sv.paths) {
        if (s.max_inflight > cap) {
            std::size_t rec = 0;
            for (const auto& e : sv.tx)
                if (e.path == p && sv.inflight_at(p, e.t) > cap) {
                    rec = e.rec;
                    break;
                }
            return fail("path " + std::to_string(p) + " had " + std::to_string(s.max_inflight) + " packets in flight",
                        "<= " + std::to_string(cap) + " per path", std::to_string(s.max_inflight), {rec});
        }
        if (s.max_inflight_before_ack > init)
            return fail("path " + std::to_string(p) + " sent " + std::to_string(s.max_inflight_before_ack) +
                            " packets before its first ACK",
                        "<= the initial window, " + std::to_string(init), std::to_string(s.max_inflight_before_ack), {});
    }
    unsigned most = 0, before = 0;
    for (const auto& [p, s] : sv.paths) {
        most = std::max(most, s.max_inflight);
        before = std::max(before, s.max_inflight_before_ack);
    }
    // A pass shows a DUT stopping at a limit; one that never had as many
    // packets out before a first ACK as the initial window, nor the cap,
    // showed neither (D75, D100). Beside stress-ng mrct-refnic had 4 to 11
    // packets out before a first ACK came back in SACK-012, and the
    // window-overrun profile passed CC-004, CC-006 and SACK-012 once.
    if (before < init && most < cap) {
        auto o = premise_not_met("no path had its initial window (" + std::to_string(init) +
                                 ") out before its first ACK (at most " + std::to_string(before) + ") nor the cap of " +
                                 std::to_string(cap) + " in flight (at most " + std::to_string(most) +
                                 "): the DUT never had to stop at either");
        o.measured["max_inflight"] = most;
        o.measured["max_inflight_before_ack"] = before;
        return o;
    }
    outcome o = pass("at most " + std::to_string(most) + " packets in flight on a path; initial windows respected");
    o.measured["max_inflight"] = most;
    o.measured["max_inflight_before_ack"] = before;
    return o;
}

namespace {

struct ece_span {
    nanos first{-1}, last{-1};
    std::size_t count = 0, first_rec = 0;
    // Marks went on for longer than `settle`: the window had time to respond.
    bool lasts_beyond(nanos settle) const { return count >= 2 && first + settle < last; }
};

// The case's premise, marks for longer than the settle time, did not arise
// (a held host bunches the DUT's packets, so fewer ACKs come back marked):
// said with what the wire showed (D75).
outcome no_sustained_ece(unsigned p, const ece_span& s, nanos settle) {
    const auto seen = s.count ? fmt_time(s.last - s.first) : std::string("no time");
    return premise_not_met("path " + std::to_string(p) + " saw ECE for " + seen + " (" +
                           std::to_string(s.count) + " marked ACKs), not longer than the settle time, " + fmt_time(settle));
}

ece_span ece_on(const sender_view& sv, unsigned p) {
    ece_span s;
    for (const auto& a : sv.acks)
        if (a.path == p && a.ece && !a.ignored) {
            if (!s.count) {
                s.first = a.t;
                s.first_rec = a.rec;
            }
            s.last = a.t;
            ++s.count;
        }
    return s;
}

}  // namespace

// MR-CC-2: marks on a path shrink that path's window.
outcome window_cut_on_ece(const context& c) {
    const auto& sv = c.sender();
    const auto p = static_cast<unsigned>(c.integer("path"));
    auto settle = c.duration("settle");
    if (!settle) return error(settle.err().message);
    const auto at_most = static_cast<unsigned>(c.integer("at_most"));
    auto span = ece_on(sv, p);
    if (!span.lasts_beyond(*settle)) return no_sustained_ece(p, span, *settle);
    const unsigned most = sv.max_inflight(p, span.first + *settle, span.last);
    if (most > at_most) {
        // The verdict rests on the time from the first ECE to the first moment
        // past the settle time with too much in flight: the DUT had that long
        // to end a window and drain it, and every hold there took from it.
        nanos seen = span.first + *settle;
        for (const auto& pt : sv.inflight)
            if (pt.path == p && pt.t >= seen && pt.inflight > at_most) {
                seen = pt.t;
                break;
            }
        return over(fail("path " + std::to_string(p) + " kept " + std::to_string(most) + " packets in flight under sustained ECE",
                         "<= " + std::to_string(at_most) + " after " + fmt_time(*settle) + " of marks",
                         std::to_string(most), {span.first_rec}),
                    span.first, seen);
    }
    outcome o = pass("under ECE path " + std::to_string(p) + "'s inflight stayed <= " + std::to_string(most));
    o.measured["max_inflight_marked"] = most;
    return o;
}

// MR-CC-3: marks on one path never shrink another's window.
outcome no_cross_path_cut(const context& c) {
    const auto& sv = c.sender();
    const auto p = static_cast<unsigned>(c.integer("marked"));
    auto settle = c.duration("settle");
    if (!settle) return error(settle.err().message);
    const auto at_least = static_cast<unsigned>(c.integer("at_least"));
    auto span = ece_on(sv, p);
    if (!span.lasts_beyond(*settle)) return no_sustained_ece(p, span, *settle);
    std::vector<std::pair<unsigned, unsigned>> most;  // (unmarked path, its largest inflight)
    outcome o;
    for (const auto& [q, s] : sv.paths) {
        if (q == p) continue;
        bool unmarked = true;
        for (const auto& a : sv.acks)
            if (a.path == q && a.ece) unmarked = false;
        if (!unmarked) continue;
        most.emplace_back(q, sv.max_inflight(q, span.first + *settle, span.last));
        o.measured["max_inflight_path" + std::to_string(q)] = most.back().second;
    }
    if (most.empty()) return inconclusive("no unmarked path carried data");
    // Real time (D118): the wire shows a window only where the DUT filled it.
    // A DUT with fewer CPU cycles than its windows allow sends where it
    // prefers (D17: low RTT first; MR-PATH-5 is a SHOULD), so one unmarked
    // path reaching `at_least` shows the DUT was not short of window there,
    // and a path left below it beside that one is not a window it cut. A cut
    // shared across paths (what MR-CC-3 forbids, bug profile shared-cwnd)
    // keeps every unmarked path below. Virtual time: a simulated DUT is never
    // short of cycles, every path is judged.
    const bool realtime = c.tr().timing.realtime;
    const auto reached = std::find_if(most.begin(), most.end(), [&](const auto& m) { return m.second >= at_least; });
    for (const auto& [q, n] : most) {
        if (n >= at_least) continue;
        if (realtime && reached != most.end()) {
            outcome i = inconclusive("path " + std::to_string(q) + " (never marked) held at most " + std::to_string(n) +
                                     " packets in flight while path " + std::to_string(p) + " was marked, but path " +
                                     std::to_string(reached->first) + " (never marked) reached " +
                                     std::to_string(reached->second) + ": the DUT was not short of window and sent where "
                                     "it preferred; nothing shows path " + std::to_string(q) + "'s window cut (D118)");
            i.measured = o.measured;
            return i;
        }
        return over(fail("path " + std::to_string(q) + " (never marked) held at most " + std::to_string(n) +
                             " packets in flight while path " + std::to_string(p) + " was marked",
                         ">= " + std::to_string(at_least), std::to_string(n), {span.first_rec}),
                    span.first, span.last);
    }
    o.v = verdict::pass;
    o.message = std::to_string(most.size()) + " unmarked paths kept their windows while path " + std::to_string(p) + " was marked";
    return o;
}

// MR-GR-2: the rate over any window of max(RTT, 20 packet times) stays at or
// below the latest GrantRate + 5 % (one packet of slack for the window edge).
outcome grant_rate(const context& c) {
    const auto& sv = c.sender();
    const auto& tm = c.tr().timing;
    const double slack = c.number("slack");
    std::optional<nanos> rtt;
    for (const auto& [p, _] : sv.paths)
        if (auto r = sv.rtt(p)) rtt = rtt ? std::min(*rtt, *r) : *r;
    if (!rtt) return inconclusive("no RTT sample on any path");
    // Grant in effect at each time: the latest accepted ACK's.
    std::vector<std::pair<nanos, std::uint16_t>> grants;
    for (const auto& a : sv.acks)
        if (!a.ignored) grants.push_back({a.t, a.grant == 0 ? std::uint16_t{1} : a.grant});
    auto grant_at = [&](nanos t) -> std::optional<std::uint16_t> {
        std::optional<std::uint16_t> g;
        for (const auto& [gt, gv] : grants) {
            if (gt > t) break;
            g = gv;
        }
        return g;
    };
    std::uint32_t max_pkt = 0;
    double mean = 0;
    for (const auto& e : sv.tx) {
        max_pkt = std::max(max_pkt, e.ip_bytes);
        mean += e.ip_bytes;
    }
    if (sv.tx.empty()) return inconclusive("the DUT sent no data");
    mean /= static_cast<double>(sv.tx.size());
    // A sender is unpaced until it accepts its first ACK (§5, grant edges).
    // When that was, the wire shows only from the other side: at the latest
    // when a path sends past its initial window, which needs an ACK (MR-CC-4).
    // On a real wire a DUT busy with an agent call takes its first ACKs late,
    // and its first window leaves unpaced after they were recorded.
    nanos paced_from = core::k_never;
    {
        std::map<unsigned, unsigned> firsts;
        for (const auto& e : sv.tx)
            if (e.kind == tx_kind::first && ++firsts[e.path] > c.tr().p.cwnd_initial) {
                paced_from = e.t;
                break;
            }
        if (!tm.realtime && !grants.empty()) paced_from = std::min(paced_from, grants.front().first);
    }
    // Real time: a packet the host held back (its gap before is long, its gap
    // after short, each by half a packet time at the grant or more) is counted
    // at its slot, one packet time after the one before: the host, not the
    // pacer, moved it next to the following packet (D59). A burst by design
    // is not repaired past its first packet: its other gaps follow short gaps.
    std::vector<nanos> at(sv.tx.size());
    std::size_t repaired = 0;
    for (std::size_t i = 0; i < sv.tx.size(); ++i) {
        at[i] = sv.tx[i].t;
        if (!tm.realtime || i == 0 || i + 1 >= sv.tx.size() || sv.tx[i].t < paced_from) continue;
        const auto g = grant_at(sv.tx[i].t);
        if (!g || *g == k_grant_unlimited) continue;
        const nanos slot{static_cast<std::int64_t>(sv.tx[i].ip_bytes * 8e9 / (*g * static_cast<double>(k_grant_unit_bps)))};
        const nanos before = sv.tx[i].t - at[i - 1], after = sv.tx[i + 1].t - sv.tx[i].t;
        if (before > slot + slot / 2 && after < slot / 2) {
            at[i] = at[i - 1] + slot;
            ++repaired;
        }
    }
    std::size_t windows = 0, unresolved = 0;
    double worst = 0;
    std::optional<outcome> doubtful;  // an excess in a window the engine could not resolve
    for (std::size_t i = 0; i < sv.tx.size(); ++i) {
        const nanos t0 = at[i];
        if (t0 < paced_from) continue;
        auto g = grant_at(t0);
        if (!g || *g == k_grant_unlimited) continue;
        const double bps = *g * static_cast<double>(k_grant_unit_bps);
        const nanos w = std::max(*rtt, nanos{static_cast<std::int64_t>(20 * mean * 8e9 / bps)});
        // A window the run ends inside holds at most what a whole one would:
        // it can still show an excess (a DUT that ignores its grant may be done
        // within one window), never a pass.
        const bool cut = t0 + w > c.tr().end;
        if (!cut && grant_at(t0 + w) != g) continue;  // the grant changed inside: not a window of one grant
        double bytes = 0;
        for (std::size_t j = i; j < sv.tx.size() && at[j] < t0 + w; ++j)
            if (at[j] >= t0) bytes += sv.tx[j].ip_bytes;
        const double allowed = bps * (1 + slack) * core::to_seconds(w) / 8 + max_pkt;
        if (cut && bytes <= allowed) continue;
        // Real time: the window's tolerance as time (slack of it, plus one
        // packet at the grant) is what the host may shift frames by. Where the
        // engine ran later than that inside the window, frames may be
        // bunched by the host, not by the DUT's pacer: not judged (D59).
        const nanos tolerance{static_cast<std::int64_t>(slack * static_cast<double>(w.count()) + max_pkt * 8e9 / bps)};
        const nanos late = tm.realtime ? tm.late_between(t0, t0 + w) : nanos{0};
        const double frac = bytes * 8 / core::to_seconds(w) / bps;
        // A stall of `late` moves at most what the grant sends in that time into
        // the window: an excess beyond that is the pacer's, stall or not.
        const bool beyond_stall = bytes > allowed + bps * core::to_seconds(late) / 8;
        if (late > tolerance && !beyond_stall) {
            ++unresolved;
            if (bytes > allowed && !doubtful) {
                doubtful = inconclusive("an excess at " + fmt_time(t0) + " (" + std::to_string(frac * 100) +
                                        " % of the grant over " + fmt_time(w) + ") fell where the engine ran " +
                                        fmt_time(late) + " late; the window's tolerance is " + fmt_time(tolerance));
                doubtful->frames = {sv.tx[i].rec};
            }
            continue;
        }
        ++windows;
        worst = std::max(worst, frac);
        if (bytes > allowed)
            return fail("the DUT sent " + std::to_string(static_cast<long long>(bytes)) + " IP bytes in " + fmt_time(w) +
                            " from " + fmt_time(t0) + " (" + std::to_string(frac * bps / 1e9) +
                            " Gb/s) under a grant of " + std::to_string(bps / 1e9) + " Gb/s",
                        "<= grant + " + std::to_string(static_cast<int>(slack * 100)) + "%",
                        std::to_string(frac * bps / 1e9) + " Gb/s", {sv.tx[i].rec});
    }
    if (doubtful) {
        doubtful->measured["max_grant_fraction"] = worst;
        doubtful->measured["unresolved_windows"] = static_cast<double>(unresolved);
        return *doubtful;
    }
    if (!windows) return inconclusive("no window ran under a limited grant" +
                                      (unresolved ? " that the engine could resolve (" + std::to_string(unresolved) + " not)"
                                                  : std::string()));
    // A DUT that never came near its grant shows nothing about its pacer: one
    // that overshoots would pass too (a slow DUT on a real wire under a grant
    // meant for silicon).
    const double near = c.number("near");
    outcome o = worst < near ? inconclusive("the DUT never came near its grant: the fullest of " + std::to_string(windows) +
                                            " windows reached " + std::to_string(worst * 100) + " % of it (at least " +
                                            std::to_string(near * 100) + " % needed to judge its pacing)")
                             : pass(std::to_string(windows) + " windows, the fullest at " + std::to_string(worst * 100) +
                                    " % of the grant" +
                                    (unresolved ? "; " + std::to_string(unresolved) + " not judged (engine late)" : ""));
    // Real time: another attempt (D119). What stood in the way was the DUT's
    // pace against the grant, and under --time-scale auto the next attempt
    // runs twice as slow, its grant halved (GR-001 at 100 Gb/s, 64 times
    // slower, is a 1.5 Gb/s grant a DUT on a veth reaches half of).
    if (worst < near && c.tr().timing.realtime) o.timing_doubt = true;
    o.measured["max_grant_fraction"] = worst;
    o.measured["unresolved_windows"] = static_cast<double>(unresolved);
    if (repaired) o.measured["held_back_packets"] = static_cast<double>(repaired);
    return o;
}

namespace {

// RNRs that pause a tag: those for the message's current Attempt (§4).
struct pause {
    std::uint16_t tag = 0, stream = 0;
    std::uint32_t seq = 0;
    std::uint8_t attempt = 0;
    nanos at{0}, until{0}, time{0};
    std::size_t rec = 0;
};

// When the DUT's connection may have ended lawfully, by its wire: a packet
// it sent for the retry limit's time (MR-SACK-6: the connection goes into
// error when that one goes unanswered too), or its retry limit's RNR_QUERY
// with no RNR_SYNC reaching it since the first of them (§4: an unanswered
// RNR_QUERY ends the connection; an RNR_SYNC answers, D106). From then on a
// tag may stay paused for good. The time of the sign and the sign in words.
std::optional<std::pair<nanos, std::string>> lawful_end(const context& c) {
    const unsigned limit = c.tr().p.retry_limit;
    std::optional<std::pair<nanos, std::string>> end;
    auto sooner = [&end](nanos t, std::string why) {
        if (!end || t < end->first) end = std::make_pair(t, std::move(why));
    };
    for (const auto& e : c.sender().tx)
        if (e.tx_no >= limit) {
            sooner(e.t, "the DUT sent path " + std::to_string(e.path) + "'s PPSN " + std::to_string(e.ppsn % (1u << 24)) + " for the " +
                            std::to_string(e.tx_no) + "th time at " + fmt_time(e.t) + " (MR-SACK-6)");
            break;
        }
    unsigned queries = 0;
    for (const auto& r : c.tr().frames) {
        if (!r.is(opcode::ctrl)) continue;
        const auto type = r.f().ctrlh.type;
        if (r.reached_dut() && type == static_cast<std::uint8_t>(ctrl_type::rnr_sync)) queries = 0;
        if (r.d == trace::dir::from_dut && type == static_cast<std::uint8_t>(ctrl_type::rnr_query) && ++queries == limit) {
            sooner(r.t, "the DUT sent its " + std::to_string(limit) + "th RNR_QUERY with no RNR_SYNC back at " + fmt_time(r.t) + " (§4)");
            break;
        }
    }
    return end;
}

// A check that judges pauses, without one: the RNRs that reached the DUT,
// and how many named an Attempt the message had left.
outcome no_pause(const context& c) {
    std::size_t rnrs = 0;
    for (const auto& r : c.tr().frames) rnrs += r.reached_dut() && r.is(opcode::rnr);
    return premise_not_met("the DUT received no RNR for a current Attempt (" +
                           std::to_string(rnrs) + " RNR" + (rnrs == 1 ? "" : "s") + " reached it" +
                           (rnrs ? ", each for an Attempt the message had left" : "") + ")");
}

std::vector<pause> pauses(const context& c) {
    const auto& sv = c.sender();
    // The message's current Attempt: the latest it was sent under, not
    // counting retransmissions (RETX): a lost packet of an earlier Attempt
    // resent by its path's timer keeps that Attempt, and the RNR it draws is
    // for an Attempt the DUT has left (two mrct-refnic through mrct emulate,
    // 1 % loss: issue 24).
    std::map<std::pair<std::uint16_t, std::uint32_t>, std::uint8_t> attempt;
    std::vector<pause> out;
    std::size_t ti = 0;
    for (const auto& r : c.tr().frames) {
        while (ti < sv.tx.size() && sv.tx[ti].rec < r.index) {
            if (!sv.tx[ti].retx_flag) attempt[{sv.tx[ti].stream, sv.tx[ti].stream_seq}] = sv.tx[ti].attempt;
            ++ti;
        }
        if (!r.reached_dut() || !r.is(opcode::rnr)) continue;
        const auto& h = r.f().rnrh;
        auto it = attempt.find({h.stream_id, h.stream_seq});
        if (it == attempt.end() || it->second != h.attempt) continue;  // an earlier Attempt: records only
        pause p;
        p.tag = h.tag;
        p.stream = h.stream_id;
        p.seq = h.stream_seq;
        p.attempt = h.attempt;
        p.at = r.t;
        p.time = rnr_timer_duration(h.timer_code);
        p.until = r.t + p.time;
        p.rec = r.index;
        out.push_back(p);
    }
    return out;
}

// Whether an RNR paused `tag` at some time in [from, to]: its data may
// lawfully wait then (MR-RNR-2), so it is no data the DUT had to send (D133).
bool tag_paused(const std::vector<pause>& ps, std::uint16_t tag, nanos from, nanos to) {
    for (const auto& q : ps)
        if (q.tag == tag && q.at <= to && q.until >= from) return true;
    return false;
}

}  // namespace

// MR-RNR-2: no packet of the tag goes out for the first time during the pause.
//
// Real time (D115): a packet the DUT may have handed to its transmit path
// before it had to act on the RNR, and that path put on the wire late, does
// not fail. Only window room proves when a packet was decided: a new packet
// goes on a path only with room (MR-CC-4), and the room the DUT had by the
// time it had to act came from the ACKs the engine sent before then (the RNR
// plus grace and the crossing window). With A of the path's packets
// acknowledged by those ACKs, its window was at most min(max_inflight,
// cwnd_initial + A) (at most +1 per packet acknowledged, MR-CC-2), so the
// path's first A + that many PPSNs may have been queued; a packet past them
// needed an ACK that reached the DUT after it had to act, and fails.
// Excused packets only: inconclusive (a DUT too slow for the check's grace),
// with the figures, and another attempt may judge (D66).
outcome rnr_pause(const context& c) {
    const auto& sv = c.sender();
    auto grace = c.duration("grace");
    if (!grace) return error(grace.err().message);
    // Real time: the RNR is recorded when the engine sends it; a packet of the
    // tag the DUT sent while the RNR was still on its way crossed it (D50).
    *grace += c.tr().crossing;
    auto ps = pauses(c);
    if (ps.empty()) return no_pause(c);
    const bool realtime = c.tr().timing.realtime;
    const auto& prm = c.tr().p;
    // Each transmission's place among its path's first transmissions (PPSNs)
    // since the path (re)started: built on the first packet judged.
    std::vector<std::uint64_t> place;
    auto place_of = [&](std::size_t i) {
        if (place.empty()) {
            place.resize(sv.tx.size());
            std::map<std::pair<unsigned, std::uint32_t>, std::uint64_t> n;
            for (std::size_t j = 0; j < sv.tx.size(); ++j) {
                const auto& e = sv.tx[j];
                auto& k = n[{e.path, e.gen}];
                place[j] = k;
                if (e.kind == tx_kind::first) ++k;
            }
        }
        return place[i];
    };
    struct queued {
        std::size_t tx = 0;
        std::uint64_t place = 0, acked = 0, window = 0;
        nanos into{0};
    };
    std::optional<queued> latest;  // the latest packet excused
    std::size_t excused = 0;
    for (const auto& p : ps) {
        nanos until = p.until;
        for (const auto& q : ps)
            if (q.tag == p.tag && q.at <= until && q.until > until) until = q.until;
        // Per path, the packets the ACKs sent by the time the DUT had to act
        // acknowledged: the same for every packet of this pause on the path.
        std::map<unsigned, std::uint64_t> acked_by;
        auto acked_on = [&](unsigned path) {
            auto [it, fresh] = acked_by.try_emplace(path, 0);
            if (fresh)
                for (const auto& a : sv.acks)
                    if (a.path == path && !a.ignored && a.t <= p.at + *grace) it->second += a.newly;
            return it->second;
        };
        for (std::size_t i = 0; i < sv.tx.size(); ++i) {
            const auto& e = sv.tx[i];
            if (e.t <= p.at + *grace || e.t >= until) continue;
            if (e.tag != p.tag || !is_send_opcode(e.opcode) || e.kind != tx_kind::first || e.retx_flag) continue;
            if (realtime) {
                const std::uint64_t acked = acked_on(e.path);
                const std::uint64_t window = std::min<std::uint64_t>(prm.max_inflight, prm.cwnd_initial + acked);
                const auto k = place_of(i);
                if (k < acked + window) {
                    ++excused;
                    if (!latest || e.t - p.at > latest->into) latest = queued{i, k, acked, window, e.t - p.at};
                    continue;
                }
            }
            auto f = over(fail("tag " + std::to_string(p.tag) + " sent a new packet " + fmt_time(e.t - p.at) +
                                   " into a pause of " + fmt_time(p.time),
                               "no new packet on tag " + std::to_string(p.tag) + " until " + fmt_time(until),
                               "stream " + std::to_string(e.stream) + " seq " + std::to_string(e.stream_seq) + " at " +
                                   fmt_time(e.t),
                               {p.rec, e.rec}),
                          p.at, e.t);
            // Past the bound the packet needed an ACK the engine sent after
            // the RNR, which the DUT read after it: no hold of the engine or
            // of the DUT changes that order (D115). Not in a passive capture,
            // where per-path delays after the capture point may reorder them.
            if (realtime && c.tr().timing.assumed_hold <= nanos{0}) f.timing_free = true;
            return f;
        }
    }
    if (latest) {
        const auto& e = sv.tx[latest->tx];
        auto o = inconclusive(std::to_string(excused) + " new packets of a paused tag went out up to " + fmt_time(latest->into) +
                              " after its RNR, past the " + fmt_time(*grace) +
                              " allowed (grace and the crossing window), each within its path's window from before then: "
                              "the DUT may have queued them before it had to act on the RNR, and its transmit path "
                              "took that long to send them (the latest: path " + std::to_string(e.path) + "'s PPSN #" +
                              std::to_string(latest->place + 1) + ", with " + std::to_string(latest->acked) +
                              " acknowledged by then and a window of at most " + std::to_string(latest->window) + ")");
        o.measured["queued_after_rnr"] = static_cast<double>(excused);
        o.measured["queued_latest_us"] = static_cast<double>(latest->into.count()) / 1e3;
        o.frames = {e.rec};
        o.timing_doubt = true;
        return o;
    }
    return pass(std::to_string(ps.size()) + " RNR pauses honoured");
}

// MR-RNR-4: the tag resumes by itself, re-sending the rejected message.
outcome rnr_resume(const context& c) {
    const auto& sv = c.sender();
    auto ps = pauses(c);
    if (ps.empty()) return no_pause(c);
    nanos worst{0};
    std::optional<outcome> first_late;  // a late resume holds of the host may explain
    std::vector<nanos> due;             // each pause's latest resume: its RNR's arrival + within
    std::size_t unjudged = 0;           // pauses whose resume was due after the record ended
    // Pauses never resumed whose resume was due after the DUT's connection
    // may have ended lawfully (in a lossy passive lab, where nobody
    // answers for the DUT's peer).
    const auto ended = lawful_end(c);
    std::size_t after_end = 0;
    for (const auto& p : ps) {
        auto within = c.duration("within", {{"rnr_time", static_cast<double>(p.time.count())}});
        if (!within) return error(within.err().message);
        due.push_back(p.at + *within + c.wire_rtt());  // the RNR's way to the DUT and the resume's back (D146)
    }
    // The first packet after `after` of pause q's message under its next Attempt.
    auto resend_of = [&sv](const pause& q, nanos after) -> const tx_event* {
        const std::uint8_t next = static_cast<std::uint8_t>((q.attempt + 1) & 0xF);
        for (const auto& e : sv.tx)
            if (e.t > after && e.stream == q.stream && e.stream_seq == q.seq && e.attempt == next) return &e;
        return nullptr;
    };
    for (std::size_t pi = 0; pi < ps.size(); ++pi) {
        const auto& p = ps[pi];
        const std::uint8_t next = static_cast<std::uint8_t>((p.attempt + 1) & 0xF);
        const tx_event* resend = resend_of(p, p.at);
        // A later RNR for the same message covers this one.
        bool superseded = false;
        for (const auto& q : ps)
            if (&q != &p && q.stream == p.stream && q.seq == p.seq && q.at > p.at) superseded = true;
        if (!resend) {
            if (superseded) continue;
            // Not re-sent by the end: late by at least end - due. Real time:
            // holds of the host that long around the pause may explain it
            // (as a late resume, D62), and a record that ended before the
            // resume was due (a capture cut short) judges nothing. Virtual
            // time runs a case until its DUT is idle: a DUT with a resume
            // pending would still have been running.
            if (c.tr().timing.realtime && c.tr().end <= due[pi]) {
                ++unjudged;
                continue;
            }
            if (ended && ended->first < due[pi]) {
                ++after_end;
                continue;
            }
            auto f = over(fail("tag " + std::to_string(p.tag) + " never resumed after an RNR of " + fmt_time(p.time) +
                                   " (stream " + std::to_string(p.stream) + " seq " + std::to_string(p.seq) + " not re-sent)",
                               "Attempt " + std::to_string(next) + " with RNR_RESEND within " + c.str("within"),
                               "nothing by " + fmt_time(c.tr().end) + ", " + fmt_time(c.tr().end - due[pi]) + " after it was due",
                               {p.rec}),
                          p.at, c.tr().end);
            f.excused_by = c.tr().end - due[pi];
            if (!assertions::excused(f, c.tr().timing)) return f;
            if (!first_late) first_late = std::move(f);
            continue;
        }
        // The tag resumes with its first re-sent message (§4: the sender
        // "re-sends exactly the messages of that tag that had an RNR"): the
        // later ones follow it, each after the ones before it have gone at
        // the DUT's pace (RNR-002 at 64 times slower beside stress-ng: the
        // second 128 KiB message re-sent 5 ms after the first, which resumed
        // on time). So a message's deadline is met when its tag resumed by
        // then (the first re-sent message of the tag after the last RNR on
        // it before this resend: an earlier resume the tag was paused again
        // after does not count), and the message was re-sent at all.
        nanos last_rnr = p.at;
        for (const auto& q : ps)
            if (q.tag == p.tag && q.at < resend->t) last_rnr = std::max(last_rnr, q.at);
        nanos tag_resumed = resend->t;
        for (const auto& q : ps)
            if (q.tag == p.tag)
                if (const auto* e = resend_of(q, last_rnr)) tag_resumed = std::min(tag_resumed, e->t);
        const nanos after = tag_resumed - p.at;
        worst = std::max(worst, after);
        // §4: the tag stays paused until the latest-ending RNR timer on it
        // expires, so a later RNR on the tag (another message's, or this
        // one's resent sibling's) that reached the DUT before this resend
        // moves the deadline out to its own.
        nanos deadline = due[pi];
        bool extended = false;
        for (std::size_t qi = 0; qi < ps.size(); ++qi) {
            const auto& q = ps[qi];
            if (qi == pi || q.tag != p.tag || q.at <= p.at || q.at >= resend->t) continue;
            if (due[qi] > deadline) {
                deadline = due[qi];
                extended = true;
            }
        }
        if (tag_resumed > deadline) {
            // Real time: a resume late by less than the two longest holds of
            // the host meeting the pause (one where the DUT's timer started,
            // one where it was due) may be the host's (D62, as rto_timing).
            auto f = over(fail("tag " + std::to_string(p.tag) + " resumed " + fmt_time(after) + " after an RNR of " +
                                   fmt_time(p.time) +
                                   (extended ? " (a later RNR on the tag extended the pause to " + fmt_time(deadline - p.at) + ")"
                                             : ""),
                               "within " + c.str("within") + " = " + fmt_time(due[pi] - p.at) + " of the latest RNR on the tag",
                               fmt_time(after), {p.rec, resend->rec}),
                          p.at, tag_resumed);
            f.excused_by = tag_resumed - deadline;
            if (!assertions::excused(f, c.tr().timing)) return f;
            if (!first_late) first_late = std::move(f);
            continue;
        }
        if (!resend->rnr_resend || resend->kind != tx_kind::first)
            return fail("the re-sent message lacks RNR_RESEND or reuses a PPSN", "RNR_RESEND set, new PPSN",
                        std::string(resend->rnr_resend ? "" : "RNR_RESEND clear ") +
                            (resend->kind != tx_kind::first ? "old PPSN" : ""),
                        {p.rec, resend->rec});
    }
    if (first_late) return *first_late;  // every late resume met holds as long as its lateness: apply_timing says so
    if (unjudged == ps.size()) return inconclusive("every RNR's resume was due after the record ended");
    const std::string not_judged =
        after_end ? std::to_string(after_end) + " never resumed, due after the connection may have ended: " + ended->second : "";
    if (unjudged + after_end == ps.size())
        return inconclusive(std::to_string(ps.size()) + " pauses, none judged: " + (unjudged ? std::to_string(unjudged) +
                            " due after the record ended; " : "") + not_judged);
    outcome o = pass(std::to_string(ps.size() - unjudged - after_end) + " pauses, each resumed on time (latest after " + fmt_time(worst) +
                     ")" + (after_end ? "; " + not_judged : ""));
    o.measured["max_resume_us"] = core::to_micros(worst);
    return o;
}

// MR-RNR-3: other tags and streams keep flowing during a pause. A pause is
// judged when the DUT had data of other tags left to send: some of it went
// out for the first time during or after the pause (after it, only data of a
// tag no RNR paused meanwhile: D133). Failing means it all
// waited for the pause to end (or for `min_packets`, too little went).
outcome other_tags_flow(const context& c) {
    const auto& sv = c.sender();
    const auto min_packets = static_cast<std::size_t>(c.integer("min_packets"));
    auto ps = pauses(c);
    if (ps.empty()) return no_pause(c);
    // When the DUT had each message: its post returned (real time: a post
    // takes milliseconds, and a message posted after the pause could not
    // flow during it). The k-th message the plan posted on a stream is the
    // k-th StreamSeq the DUT used on it.
    std::map<std::uint16_t, std::vector<nanos>> posted;  // stream -> when each message was there
    for (const auto& w : c.tr().dut.posted)
        if (w.kind != "recv") posted[w.stream].push_back(w.done);
    std::map<std::uint16_t, std::map<std::uint32_t, nanos>> had;  // stream -> seq -> when the DUT had it
    for (const auto& e : sv.tx) {
        auto& seqs = had[e.stream];
        if (seqs.count(e.stream_seq)) continue;
        const auto k = seqs.size();
        const auto& list = posted[e.stream];
        seqs[e.stream_seq] = k < list.size() ? list[k] : nanos{0};
    }
    std::size_t total = 0, judged = 0;
    std::optional<outcome> first_held;
    for (const auto& p : ps) {
        std::size_t during = 0, after = 0;
        std::size_t first_after = 0;
        for (const auto& e : sv.tx) {
            if (e.kind != tx_kind::first || e.tag == p.tag || e.t <= p.at) continue;
            if (e.t < p.until) ++during;
            else if (had[e.stream][e.stream_seq] < p.until && !tag_paused(ps, e.tag, p.at, p.until) && !after++)
                first_after = e.rec;  // waiting during the pause, not for one of its own tag (D133)
        }
        if (!during && !after) continue;  // nothing of other tags was left to send
        ++judged;
        if (during < min_packets && after) {
            // Real time: the DUT sends other tags as its windows open, on the
            // engine's ACKs; holds of the engine or the DUT covering half the
            // pause in all may have left it too little time (D68). Only
            // such holds excuse it; the first failure no hold excuses stands.
            auto f = over(fail("only " + std::to_string(during) + " new packets of other tags left during tag " +
                                   std::to_string(p.tag) + "'s pause of " + fmt_time(p.time) + "; " +
                                   std::to_string(after) + " waited until it ended",
                               ">= " + std::to_string(min_packets) + " new packets of other tags during the pause",
                               std::to_string(during), {p.rec, first_after}),
                          p.at, p.until);
            f.excused_by = (p.until - p.at) / 2;
            f.excused_in_all = true;
            if (!assertions::excused(f, c.tr().timing)) return f;
            if (!first_held) first_held = std::move(f);
            continue;
        }
        total += during;
    }
    if (first_held) return *first_held;  // every short pause met holds over half of it: apply_timing says so
    if (!judged) return inconclusive("no pause came while other tags had data to send");
    return pass(std::to_string(total) + " packets of other tags flowed during " + std::to_string(judged) + " pauses");
}

// MR-RNR-5: an RNR changes no congestion window. Per path, the inflight the
// DUT reaches in the second half of `span` after the RNR is compared with the
// span before: a window cut shows as a collapse while the DUT still has data
// to send (new packets after the span, of a tag that no RNR pauses in the
// second half: D133). Paths with fewer than 8 packets in flight are not judged. A
// collapse counts only if the DUT's pace fell with it: its new packets of
// other tags per unit time on the paths judged, after against before. A DUT
// that its window limits sends at window / RTT, and a cut shows in both; one
// that its own speed limits (a userspace stack on a shared host) keeps its
// window unfilled, and its inflight is its pace times the time its ACKs take
// (mrct-refnic's rose and fell between 13 and 53 on every path of RNR-007 at
// 128 times slower, at an unchanged pace). A cut to one packet a path brings
// the pace down to one packet a path per RTT. A path whose timer expired or
// that was marked ECE around the RNR had its window cut by the rules
// (MR-RTO-4, MR-CC-2), and is not judged.
//
// Real time (decisions D68): only a hold of about half the span can move the
// verdict. A DUT held that long sends nothing in the second half (a false
// collapse); the engine held that long delays the ACKs of what was in flight
// at the RNR past the half (a cut window looks kept). So an RNR whose window,
// [RNR - span, RNR + span], met a hold of the engine or its host longer than
// span / 4, or whose second half met DUT waits for a CPU that long in all, is
// left out, and the others are judged; with all left out the check cannot tell.
outcome rnr_keeps_window(const context& c) {
    const auto& sv = c.sender();
    auto span = c.duration("span");
    if (!span) return error(span.err().message);
    const double keep = c.number("keep");
    auto ps = pauses(c);
    if (ps.empty()) return no_pause(c);
    const auto& tm = c.tr().timing;
    const nanos need = *span / 4;
    std::size_t judged = 0, left_out = 0, lawful = 0;
    nanos worst{0};
    std::optional<nanos> first_judged;
    for (const auto& p : ps) {
        const nanos from = p.at - *span, to = p.at + *span;
        // One long hold anywhere around the RNR; or, in the second half
        // (where the collapse is judged), the DUT's waits for a CPU in all.
        // Not every hold in all: an agent call counts as the DUT busy for its
        // whole round trip, and the setup's posts overlap RNR-006/007's RNRs
        // by design, while the DUT sends between its reads of them (counted
        // so, quiet runs were left out every time).
        const nanos half = p.at + *span / 2;
        const nanos held = tm.realtime ? std::max(tm.late_between(from, to), tm.dut_waited_between(half, to)) : nanos{0};
        // The busy paths: 8 or more in flight before the RNR, data of
        // their own left after the span. Data of a tag that an RNR pauses in
        // the second half is not data the DUT could have sent there: on a
        // wire the WRITEs may all be gone before the last RNRs, and what is
        // left is a SEND waiting out its own pause (RNR-007, two tags).
        struct busy_path {
            unsigned path, before, after;
            unsigned sent_before = 0, sent_after = 0;  // new packets of other tags, the span before and the second half
        };
        std::vector<busy_path> busy;
        bool cut_lawfully = false;
        for (const auto& [path, _] : sv.paths) {
            const unsigned before = sv.max_inflight(path, from, p.at);
            if (before < 8) continue;  // too few packets to tell a cut from noise
            busy_path b{path, before, 0};
            bool more = false, expired = false;
            for (const auto& e : sv.tx) {
                if (e.path != path) continue;
                expired |= e.kind == tx_kind::rto_resend && e.t >= from && e.t <= to;
                if (e.kind != tx_kind::first || e.tag == p.tag) continue;
                more |= e.t > to && !tag_paused(ps, e.tag, half, to);
                b.sent_before += e.t >= from && e.t < p.at;
                b.sent_after += e.t >= half && e.t <= to;
            }
            if (!more) continue;
            // A timer expiry (MR-RTO-4) or an ECE (MR-CC-2) on the path around
            // the RNR cuts its window by the rules: not the RNR's doing.
            // Beside stress-ng a held engine's late ACKs made both of
            // RNR-006's paths expire 2 ms before its RNR (scaled).
            bool marked = false;
            for (const auto& a : sv.acks) marked |= a.path == path && a.ece && !a.ignored && a.t >= from && a.t <= to;
            if (expired || marked) {
                cut_lawfully = true;
                continue;
            }
            // The second half of the span: packets already in flight at the RNR have drained by then.
            b.after = sv.max_inflight(path, half, to);
            busy.push_back(b);
        }
        if (busy.empty()) {
            lawful += cut_lawfully;
            continue;
        }
        if (held > need) {  // this RNR's windows are the host's, not the DUT's
            ++left_out;
            worst = std::max(worst, held);
            continue;
        }
        judged += busy.size();
        if (!first_judged) first_judged = p.at;
        // Judged over the busy paths together: a DUT may move its traffic
        // between paths under its grant (mrct-refnic left two of four idle
        // for 7 ms after an RNR, no window cut), and a cut window shows in
        // the sum. The path the RNR came on is also judged alone: a DUT that
        // takes the RNR as congestion on that path only.
        busy_path all{0, 0, 0};
        for (const auto& b : busy) {
            all.before += b.before, all.after += b.after;
            all.sent_before += b.sent_before, all.sent_after += b.sent_after;
        }
        const int rnr_path = c.tr().frames[p.rec].path_id();
        const busy_path* own = nullptr;
        for (const auto& b : busy)
            if (static_cast<int>(b.path) == rnr_path) own = &b;
        // The pace after is over half the span, the one before over the whole.
        auto fell = [&](const busy_path& b) {
            return b.after < keep * b.before && 2.0 * b.sent_after < keep * b.sent_before;
        };
        const bool all_fell = fell(all);
        if (all_fell || (own && fell(*own))) {
            const busy_path& f = all_fell ? all : *own;
            const std::string whose = all_fell ? "the busy paths'" : "path " + std::to_string(f.path) + "'s";
            const std::string what = whose + " inflight" + (all_fell ? "" : " (the RNR's path)") + " fell from " +
                                     std::to_string(f.before) + " to " + std::to_string(f.after) + (all_fell ? " in all" : "") +
                                     ", and " + (all_fell ? "their" : "its") + " new packets from " +
                                     std::to_string(f.sent_before) + " in " + fmt_time(*span) + " to " +
                                     std::to_string(f.sent_after) + " in " + fmt_time(*span / 2);
            return over(fail(what + " after an RNR on tag " + std::to_string(p.tag),
                             ">= " + std::to_string(static_cast<int>(keep * 100)) + "% of " + std::to_string(f.before),
                             std::to_string(f.after), {p.rec}),
                        half, to);  // a collapse rests on the second half only
        }
    }
    if (!judged && left_out) {
        auto o = inconclusive("around each of the " + std::to_string(left_out) +
                              " RNRs with a busy path the engine, its host or the DUT was held longer than this check "
                              "needs, " + fmt_time(need) + " (span / 4: holds over half the span move the windows it "
                              "compares); up to " + fmt_time(worst));
        o.timing_doubt = true;
        o.measured["engine_late_us"] = core::to_micros(worst);
        o.measured["needs_us"] = core::to_micros(need);
        return o;
    }
    if (!judged) {
        // In real time a DUT held by its host may not fill a window before
        // the RNR: another attempt (a coarser time base, D69) may.
        auto o = inconclusive(lawful ? "around each of the " + std::to_string(lawful) +
                                           " RNRs with a busy path a timer expiry or an ECE cut that path's window "
                                           "(MR-RTO-4, MR-CC-2): no window was left to show the RNR's effect"
                                     : "no path was busy around an RNR (8 packets in flight before it, data left after it)");
        o.timing_doubt = tm.realtime;
        return o;
    }
    // The verdict rests on the windows judged; each was checked free of holds
    // above the need here, so the first one stands for them.
    auto o = over(pass(std::to_string(judged) + " paths kept their windows across RNRs" +
                       (left_out ? " (" + std::to_string(left_out) + " RNRs left out: the host held them up to " +
                                       fmt_time(worst) + ")"
                                 : "")),
                  *first_judged - *span, *first_judged + *span);
    return o;
}

// MR-CONN-3: CLOSE only once everything is acknowledged. "Everything" is
// the data the DUT had to send, not only what it had sent: a packet it
// first sends after its CLOSE was unacknowledged when it closed (D124).
outcome close_after_ack(const context& c) {
    const auto& sv = c.sender();
    // First transmissions of data after time t, in trace order.
    const auto first_sent_after = [&](nanos t) {
        std::vector<const tx_event*> out;
        for (const auto& e : sv.tx)
            if (e.kind == tx_kind::first && e.t > t) out.push_back(&e);
        return out;
    };
    // The premise: data was unacknowledged when the DUT surely had the close
    // request (the plan's close call had returned): in flight, or not yet
    // sent. Otherwise a DUT that closes at once and one that waits send the
    // same CLOSE: nothing is tested (on a wire, a call held 70 ms by a busy
    // host came after the last ACK, and close-early passed CONN-030).
    if (const auto& asked = c.tr().dut.close_done) {
        unsigned in_flight = 0;
        for (const auto& [p, _] : sv.paths) in_flight += sv.inflight_at(p, *asked);
        if (!in_flight && first_sent_after(*asked).empty()) {
            auto o = premise_not_met("the DUT had every packet acknowledged by " +
                                     fmt_time(*asked) + ", when its close call had returned, and sent no new data after; "
                                     "a CLOSE then says nothing about waiting for ACKs");
            // In real time the call's round trip (a host busy elsewhere)
            // decides it: another attempt may find data in flight (D66).
            o.timing_doubt = c.tr().timing.realtime;
            return o;
        }
    }
    // A path the DUT failed (its PATH_RESET) has nothing in flight from
    // then on: its packets moved to other paths with new PPSNs (sender_view,
    // D108). If it returned to service, its new packets count.
    for (const auto& r : c.tr().frames) {
        if (r.d != trace::dir::from_dut || !r.is(opcode::ctrl) ||
            r.f().ctrlh.type != static_cast<std::uint8_t>(ctrl_type::close))
            continue;
        for (const auto& [p, _] : sv.paths) {
            const unsigned n = sv.inflight_at(p, r.t);
            if (n)
                return fail("the DUT sent CLOSE with " + std::to_string(n) + " packets unacknowledged on path " + std::to_string(p),
                            "CLOSE only when everything is acknowledged", std::to_string(n) + " in flight", {r.index});
        }
        // Nothing in flight, but data still to send: the CLOSE did not wait
        // for it (the DUT's own order on the wire, whatever its host did).
        if (const auto later = first_sent_after(r.t); !later.empty()) {
            const auto& e = *later.front();
            return fail("the DUT sent CLOSE at " + fmt_time(r.t) + " with data still unsent: " + std::to_string(later.size()) +
                            " new data packets followed it, the first at " + fmt_time(e.t) + " (path " +
                            std::to_string(e.path) + ", stream " + std::to_string(e.stream) + " seq " +
                            std::to_string(e.stream_seq) + " offset " + std::to_string(e.offset) + ")",
                        "CLOSE only when everything is acknowledged", std::to_string(later.size()) + " sent after",
                        {r.index, e.rec});
        }
        return pass("CLOSE sent at " + fmt_time(r.t) + " with nothing in flight and no data after it");
    }
    return inconclusive("the DUT sent no CLOSE");
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {

// MR-PATH-5 (SHOULD): per-packet spraying over every agreed path. With equal
// RTTs and no path out of window, each path carries at least `min_fraction`
// of an even share of first transmissions.
outcome spraying(const context& c) {
    const auto& sv = c.sender();
    const double min_fraction = c.number("min_fraction");
    const unsigned n = c.tr().p.num_paths;
    std::map<unsigned, std::size_t> per;
    std::size_t total = 0;
    for (const auto& e : sv.tx)
        if (e.kind == tx_kind::first) {
            ++per[e.path];
            ++total;
        }
    if (total < 4 * n) return inconclusive("too few packets (" + std::to_string(total) + ") to judge spraying over " + std::to_string(n) + " paths");
    const double even = static_cast<double>(total) / n;
    for (unsigned p = 0; p < n; ++p)
        if (static_cast<double>(per[p]) < min_fraction * even) {
            auto f = fail("path " + std::to_string(p) + " carried " + std::to_string(per[p]) + " of " + std::to_string(total) +
                              " packets",
                          ">= " + std::to_string(static_cast<int>(min_fraction * 100)) + "% of an even share (" +
                              std::to_string(static_cast<int>(even)) + ")",
                          std::to_string(per[p]), {});
            // A path left out entirely is the DUT's whatever the host did; a
            // thin one may have timed out behind the host's holds (spray_need).
            f.timing_free = per[p] == 0;
            // Or a DUT that prefers its faster paths (as the reference does,
            // D17: beyond 25 % over the best; the clause is a SHOULD) may
            // have measured one of its RTT samples a quarter or more longer
            // than the wire shows, for the host's sake or its own send
            // stamp's (D123), and left it as slower (D99, D142).
            const auto it = sv.paths.find(p);
            if (per[p] > 0 && it != sv.paths.end() && it->second.sample_hold_max > nanos{0} &&
                4 * it->second.sample_hold_max >= it->second.sample_at_hold_max) {
                const auto& ps = it->second;
                auto d = inconclusive("the host held the DUT " + fmt_time(ps.sample_hold_max) + " at one of path " +
                                      std::to_string(p) + "'s RTT samples (" + fmt_time(ps.sample_at_hold_max) +
                                      " on the wire): a DUT that prefers its faster paths may have measured it at " +
                                      fmt_time(ps.sample_at_hold_max + ps.sample_hold_max) +
                                      " and left the path for the host's sake; it would have said fail: " + f.message);
                d.timing_doubt = true;
                d.measured["path" + std::to_string(p) + "_packets"] = static_cast<double>(per[p]);
                d.measured["sample_hold_us"] = core::to_micros(ps.sample_hold_max);
                d.measured["sample_us"] = core::to_micros(ps.sample_at_hold_max);
                return d;
            }
            // Over the DUT's traffic: the holds the host probe saw and the
            // DUT's own waits count too, not only the engine's lateness.
            return over(std::move(f), sv.tx.front().t, sv.tx.back().t);
        }
    return pass(std::to_string(total) + " packets sprayed over all " + std::to_string(n) + " paths");
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {


// §4: CONNECT, CLOSE, RNR_QUERY and PATH_RESET are repeated every max(initial
// RTO, the largest RTO among the paths in service) until answered, up to the
// retry limit. Judged from the wire: two transmissions of one unanswered
// request are at least `at_least` apart (the interval is never below the
// initial RTO), and no request goes out more than retry_limit times.
outcome ctrl_repeat(const context& c) {
    auto gap = c.duration("at_least");
    if (!gap) return error(gap.err().message);
    const unsigned limit = c.tr().p.retry_limit;
    ctrl_book book;
    const auto& tm = c.tr().timing;
    std::optional<outcome> first;  // real time: the first too-close pair a hold excuses
    std::size_t requests = 0, repeats = 0;
    nanos shortest = nanos::max();
    for (const auto& r : c.tr().frames) {
        if (!r.is(opcode::ctrl)) continue;
        const auto st = book.take(r);
        if (!st) continue;
        const auto name = ctrl_type_name(static_cast<std::uint8_t>(st->type));
        if (!st->repeat) ++requests;
        else {
            ++repeats;
            const auto d = r.t - st->before.last;
            shortest = std::min(shortest, d);
            if (d < *gap) {
                // Copies this close on the wire can be the host's doing: a
                // DUT held while sending the first copy, its repeat timer
                // already running, sends the two closer by the hold. The
                // span reaches back a whole spacing before the first copy.
                auto f = over(fail(std::string(name) + " repeated " + fmt_time(d) + " after the previous one, unanswered",
                                   ">= " + fmt_time(*gap) + " between repeats (max(initial RTO, largest RTO))", fmt_time(d),
                                   {st->before.last_rec, r.index}),
                              st->before.last - *gap, r.t);
                f.excused_by = *gap - d;
                // The failure reported is the first pair no hold excuses.
                if (!excused(f, tm)) return f;
                if (!first) first = std::move(f);
            }
        }
        if (st->now.sent > limit)
            return fail(std::string(name) + " sent " + std::to_string(st->now.sent) + " times unanswered",
                        "<= the retry limit, " + std::to_string(limit), std::to_string(st->now.sent), {r.index});
    }
    if (first) return *first;
    if (!repeats) return inconclusive("no CTRL request was repeated (" + std::to_string(requests) + " sent)");
    return pass(std::to_string(repeats) + " repeats of " + std::to_string(requests) + " CTRL requests, at least " +
                fmt_time(shortest) + " apart");
}

}  // namespace mrct::assertions::checks
