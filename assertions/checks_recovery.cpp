// DUT as sender: loss recovery, timers, port moves, failover.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "assertions/checks.h"
#include "assertions/sender_view.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"

namespace mrct::assertions::checks {

using namespace wire;
using core::nanos;

namespace {

std::string ppsn_str(std::uint64_t u) { return std::to_string(u % (1u << 24)); }

bool wanted_path(const context& c, unsigned p) {
    if (!c.has("paths")) return true;
    auto v = c.int_list("paths");
    return std::find(v.begin(), v.end(), static_cast<std::int64_t>(p)) != v.end();
}

// The DUT's failures of its paths as the wire shows them (§5, Failed path;
// D138): per path, in record order, its PATH_RESETs, its data, and the
// PROBE_REPLYs and PATH_RESET_ACKs that reached it. A PATH_RESET fails the
// path (one while it is failed repeats an unanswered one: the same
// failure); data from the DUT on it shows it back in service; so does,
// where the rule takes it (`by_ctrl`), a PROBE_REPLY and a PATH_RESET_ACK
// both sent to the DUT since the failure (the engine's send, the earliest
// the DUT can have them). Which rule favours the DUT depends on the
// question: `failover` asks whether another path was in service (data only:
// a path brought back but idle counts as failed, so its premise is unmet
// rather than failed), `last_path_kept` whether every other path was failed
// (by either: a path counts as back as early as it can be).
class path_failures {
public:
    path_failures(const trace::trace& tr, unsigned n) : events_(n) {
        for (const auto& r : tr.frames) {
            if (!r.ok()) continue;
            const auto& f = r.f();
            if (r.d == trace::dir::from_dut && is_data_opcode(f.bth.opcode)) {
                if (f.mrh.path_id < n) events_[f.mrh.path_id].push_back({r.index, kind::data});
                continue;
            }
            if (f.bth.opcode != static_cast<std::uint8_t>(opcode::ctrl)) continue;
            const auto t = read_ctrl_tlvs(f.tlvs);
            if (!t.path_id || *t.path_id >= n) continue;
            const auto type = f.ctrlh.type;
            auto& ev = events_[*t.path_id];
            if (r.d == trace::dir::from_dut && type == static_cast<std::uint8_t>(ctrl_type::path_reset))
                ev.push_back({r.index, kind::reset});
            else if (r.reached_dut() && type == static_cast<std::uint8_t>(ctrl_type::probe_reply))
                ev.push_back({r.index, kind::reply});
            else if (r.reached_dut() && type == static_cast<std::uint8_t>(ctrl_type::path_reset_ack))
                ev.push_back({r.index, kind::reset_ack});
        }
    }
    unsigned paths() const { return static_cast<unsigned>(events_.size()); }
    // Whether path q was failed just before record `rec`: the record of the
    // PATH_RESET that failed it (the first of its repeats), if so.
    std::optional<std::size_t> failed_before(unsigned q, std::size_t rec, bool by_ctrl) const {
        std::optional<std::size_t> failed;
        bool replied = false, acked = false;
        for (const auto& e : events_[q]) {
            if (e.rec >= rec) break;
            switch (e.k) {
                case kind::reset:
                    if (!failed) failed = e.rec, replied = acked = false;
                    break;
                case kind::data: failed.reset(); break;
                case kind::reply: replied = replied || failed; break;
                case kind::reset_ack: acked = acked || failed; break;
            }
            if (by_ctrl && failed && replied && acked) failed.reset();
        }
        return failed;
    }
    // Whether every path but p was failed just before record `rec`.
    bool others_failed_before(unsigned p, std::size_t rec, bool by_ctrl) const {
        for (unsigned q = 0; q < paths(); ++q)
            if (q != p && !failed_before(q, rec, by_ctrl)) return false;
        return true;
    }

private:
    enum class kind { reset, data, reply, reset_ack };
    struct event {
        std::size_t rec;
        kind k;
    };
    std::vector<std::vector<event>> events_;
};

// How long a path held packets unacknowledged at most, replayed from the wire
// as a per-path timer would run it (started by a first transmission onto an
// empty path, restarted by an ACK that acknowledges something new and by each
// expiry's resend), up to the end of the trace: what a case that needed a
// timer to expire shows when none did (the premise did not arise, D75).
// What a path's retransmission timer reacts to, in wire order: its first
// transmissions, its resends (an expiry's or another), the ACKs it
// accepted, and the DUT's PATH_RESETs of it (a failed path has nothing in
// flight and no timer: MR-PATH-6, D108). Shared by the checks that replay the
// timer from the wire.
struct timer_event {
    enum kind_t { first, expiry_resend, other_resend, ack, reset };
    std::size_t rec;
    nanos t;
    kind_t kind;
    unsigned newly;  // ack: PPSNs it acknowledged for the first time
};

std::vector<timer_event> timer_events(const sender_view& sv, unsigned p) {
    std::vector<timer_event> evs;
    for (const auto& e : sv.tx)
        if (e.path == p)
            evs.push_back({e.rec, e.t,
                           e.kind == tx_kind::first        ? timer_event::first
                           : e.kind == tx_kind::rto_resend ? timer_event::expiry_resend
                                                           : timer_event::other_resend,
                           0});
    for (const auto& a : sv.acks)
        if (a.path == p && !a.ignored) evs.push_back({a.rec, a.t, timer_event::ack, a.newly});
    for (const auto& r : sv.resets)
        if (r.path == p) evs.push_back({r.rec, r.t, timer_event::reset, 0});
    std::sort(evs.begin(), evs.end(), [](const timer_event& a, const timer_event& b) { return a.rec < b.rec; });
    return evs;
}

struct unacked_span {
    unsigned path = 0;
    nanos longest{0};
    std::size_t packets = 0;  // first transmissions on the path
};

unacked_span longest_unacked(const context& c, unsigned p) {
    unacked_span u;
    u.path = p;
    unsigned inflight = 0;
    // The timer's start while it runs (a plain pair, not an optional: g++
    // 12 saw the optional's value as maybe uninitialized at -O2).
    bool running = false;
    nanos start{0};
    for (const auto& e : timer_events(c.sender(), p)) {
        if (running) u.longest = std::max(u.longest, e.t - start);
        switch (e.kind) {
        case timer_event::first:
            ++u.packets;
            if (inflight++ == 0) running = true, start = e.t;
            break;
        case timer_event::expiry_resend: running = true, start = e.t; break;
        case timer_event::ack:
            inflight -= std::min(inflight, e.newly);
            if (e.newly) running = inflight > 0, start = e.t;
            break;
        case timer_event::reset:
            inflight = 0;
            running = false;
            break;
        case timer_event::other_resend: break;
        }
    }
    if (running) u.longest = std::max(u.longest, c.tr().end - start);
    return u;
}

}  // namespace

// MR-SACK-3: each detected loss -> one resend of exactly that PPSN on the same
// path, RETX set, without waiting for a timer.
outcome fast_retransmit(const context& c) {
    const auto& sv = c.sender();
    auto within = c.duration("within");
    if (!within) return error(within.err().message);
    *within += c.wire_rtt();  // the ACK's way to the DUT and the resend's back (D146)
    std::size_t answered = 0, excused = 0;
    // Real time: a resend late by more than its deadline is excused only by
    // holds as long as the excess (the DUT took the ACK late, D62); the
    // failure reported is the first no such hold excuses, else the first.
    const auto& tm = c.tr().timing;
    std::optional<outcome> first;
    for (const auto& d : sv.detections) {
        if (!d.resend_rec) {
            if (d.acked_at) {
                ++excused;
                continue;
            }
            // Not resent on the same path with the same PPSN: say where it went.
            const auto& lost = sv.tx[0];
            (void)lost;
            std::string elsewhere;
            const trace::record& txr = c.tr().frames[d.tx_rec];
            for (const auto& e : sv.tx)
                if (e.t > d.t && e.stream == txr.f().mrh.stream_id && e.stream_seq == txr.f().mrh.stream_seq &&
                    e.offset == txr.f().mrh.msg_offset && (e.path != d.path)) {
                    elsewhere = "; the packet was resent on path " + std::to_string(e.path) + " as PPSN " + ppsn_str(e.ppsn) +
                                " (frame #" + std::to_string(e.rec) + ")";
                    break;
                }
            return fail("loss of PPSN " + ppsn_str(d.ppsn) + " on path " + std::to_string(d.path) + " detected at " +
                            fmt_time(d.t) + " was never resent on that path" + elsewhere,
                        "a resend on path " + std::to_string(d.path) + ", PPSN " + ppsn_str(d.ppsn) + ", RETX, within " +
                            fmt_time(*within),
                        "none" + elsewhere, {d.tx_rec, d.ack_rec});
        }
        const auto& r = c.tr().frames[*d.resend_rec];
        const nanos delay = r.t - d.t;
        if (delay > *within) {
            auto f = over(fail("PPSN " + ppsn_str(d.ppsn) + " on path " + std::to_string(d.path) + " was resent " + fmt_time(delay) +
                                   " after the ACK that showed it lost (a timer, not the SACK, recovered it)",
                               "resend within " + fmt_time(*within), "resend after " + fmt_time(delay),
                               {d.tx_rec, d.ack_rec, *d.resend_rec}),
                          d.t, r.t);
            f.excused_by = delay - *within;
            if (!assertions::excused(f, tm)) return f;
            if (!first) first = std::move(f);
            continue;
        }
        if (!(r.f().mrh.flags & k_flag_retx))
            return fail("the resend of PPSN " + ppsn_str(d.ppsn) + " on path " + std::to_string(d.path) + " lacks RETX",
                        "RETX set", "RETX clear", {*d.resend_rec});
        ++answered;
    }
    if (first) return *first;
    if (!answered) return inconclusive("no loss was detected by SACK in this run" +
                                       (excused ? " (" + std::to_string(excused) + " acknowledged before a resend)" : std::string()));
    outcome o = pass(std::to_string(answered) + " detected losses, each resent on its path with its PPSN and RETX within " +
                     fmt_time(*within));
    o.measured["detections"] = static_cast<double>(answered);
    return o;
}

// MR-SACK-3 and MR-RTO-4 without timing: a packet sent again while its path is
// in service goes out on the same PathID with the same PPSN and RETX set (a
// port move keeps both). Only a failed path's packets move, with new PPSNs,
// to other paths (§5, failed path): the DUT's PATH_RESET for the path shows
// the failure. A re-send after RNR (Attempt + 1) is a new attempt, not a
// resend. Applied to every case where the DUT sends (plan defaults).
outcome resend_identity(const context& c) {
    const auto& sv = c.sender();
    std::map<unsigned, std::vector<nanos>> resets;  // path -> when the DUT sent PATH_RESET for it
    for (const auto& r : c.tr().frames)
        if (r.d == trace::dir::from_dut && r.is(opcode::ctrl) &&
            r.f().ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset))
            if (auto p = read_ctrl_tlvs(r.f().tlvs).path_id) resets[*p].push_back(r.t);
    auto failed_after = [&](unsigned path, nanos t) {
        auto it = resets.find(path);
        return it != resets.end() && std::any_of(it->second.begin(), it->second.end(), [&](nanos x) { return x >= t; });
    };
    // A packet is its message's (stream, seq, offset) under one Attempt. A
    // message re-sent after an RNR is under the next Attempt: new packets.
    // Attempt is 4 bits, so a message RNR'd 16 times comes back to an
    // Attempt it had: the latest Attempt seen is what counts, not every one.
    using key = std::tuple<std::uint16_t, std::uint32_t, std::uint32_t>;  // stream, seq, offset
    // Per packet: its first copy seen, and the copy seen without RETX (the
    // original), if any. In real time the engine sees the DUT's frames in
    // the order they arrived: a fabric between them (a lab's switch or
    // emulator, ports on paths of their own) may deliver a resend before
    // its original (D145). Only a second copy without RETX is then a
    // resend lacking it. In virtual time the order is the DUT's own: the
    // original is the first copy, and any later copy without RETX fails.
    struct seen {
        const tx_event* o = nullptr;
        std::optional<std::size_t> clear;  // the record of a copy without RETX
        bool moved = false;                // a failover's new PPSN: every copy is a resend
    };
    const bool arrival_order = c.tr().timing.realtime;
    std::map<key, seen> first;
    std::size_t same = 0, moved = 0;
    for (const auto& e : sv.tx) {
        auto [it, fresh] = first.try_emplace(key{e.stream, e.stream_seq, e.offset}, seen{&e, {}, false});
        if (fresh || it->second.o->attempt != e.attempt) {  // new, or the next Attempt: a new packet
            it->second = seen{&e, {}, false};
            if (!e.retx_flag) it->second.clear = e.rec;
            continue;
        }
        seen& s = it->second;
        const tx_event& o = *s.o;
        if (e.path == o.path && e.gen == o.gen && e.ppsn == o.ppsn) {
            ++same;
            if (!e.retx_flag) {
                if (arrival_order && !s.clear && !s.moved) {  // the original, overtaken by a resend
                    s.clear = e.rec;
                    continue;
                }
                return fail("a resend of PPSN " + ppsn_str(e.ppsn) + " on path " + std::to_string(e.path) + " lacks RETX",
                            "RETX set on every retransmission", "RETX clear",
                            {s.clear && arrival_order ? *s.clear : o.rec, e.rec});
            }
            continue;
        }
        if (failed_after(o.path, o.t)) {  // failover: the original path was failed
            ++moved;
            s = seen{&e, {}, true};        // later resends follow the new PPSN
            continue;
        }
        return fail("stream " + std::to_string(e.stream) + " seq " + std::to_string(e.stream_seq) + " offset " +
                        std::to_string(e.offset) + ", first sent on path " + std::to_string(o.path) + " as PPSN " +
                        ppsn_str(o.ppsn) + ", was sent again on path " + std::to_string(e.path) + " as PPSN " +
                        ppsn_str(e.ppsn) + " while path " + std::to_string(o.path) + " was in service",
                    "the resend on path " + std::to_string(o.path) + " with PPSN " + ppsn_str(o.ppsn) + " and RETX",
                    "path " + std::to_string(e.path) + ", PPSN " + ppsn_str(e.ppsn), {o.rec, e.rec});
    }
    auto out = pass(std::to_string(same) + " resends on their own path and PPSN, " + std::to_string(moved) +
                    " moved off failed paths");
    out.measured["resends"] = static_cast<double>(same);
    out.measured["failover_resends"] = static_cast<double>(moved);
    return out;
}

// MR-SACK-4
outcome no_go_back_n(const context& c) {
    const auto& sv = c.sender();
    const auto& tm = c.tr().timing;
    std::size_t resends = 0;
    // A resend the covering ACK alone can have prompted (the DUT had no
    // reason of its own to resend the PPSN before it: D62) fails whatever
    // the engine's timing. Otherwise, in real time, the failure reported is
    // the first one no hold of the host explains (a hold as long as the time
    // from the ACK to the resend, less the crossing window: crossing_need);
    // only if every one may be such a crossing is the first reported, and
    // doubted (D59).
    std::optional<outcome> first;
    for (const auto& e : sv.tx) {
        if (e.kind == tx_kind::first) continue;
        ++resends;
        if (!e.acked_before) continue;
        const nanos acked = c.tr().frames[e.covering_ack].t;
        if (!e.prompted) {
            auto f = fail("PPSN " + ppsn_str(e.ppsn) + " on path " + std::to_string(e.path) + " was resent " +
                              fmt_time(e.t - acked) + " after an ACK covered it, with nothing before that ACK to " +
                              "prompt a resend (not found lost, not its path's oldest): only the ACK can have",
                          "no resend of acknowledged PPSNs", "resend at " + fmt_time(e.t), {e.covering_ack, e.rec});
            f.timing_free = true;
            return f;
        }
        auto f = over(fail("PPSN " + ppsn_str(e.ppsn) + " on path " + std::to_string(e.path) +
                               " was resent although an ACK had already covered it",
                           "no resend of acknowledged PPSNs", "resend at " + fmt_time(e.t), {e.covering_ack, e.rec}),
                      acked, e.t);
        // The DUT's own waits for a CPU in between count in all (D67): each
        // kept the ACK unread in its socket that much longer.
        const nanos lag = std::max(tm.late_between(acked, e.t), tm.dut_waited_between(acked, e.t));
        if (!tm.realtime || lag <= e.t - acked - c.tr().crossing) return f;
        if (!first) first = std::move(f);
    }
    if (first) return *first;
    // A resend taken as sent before the ACK covering it only because a hold,
    // or a wait of the DUT, covered the ACK's moment (sender_view::crossed_held):
    // a DUT that resends covered PPSNs looks the same then. The failure the
    // trace's order shows, for apply_timing to doubt by those holds.
    if (!sv.crossed_held.empty() && tm.realtime) {
        const auto [rec, ack] = sv.crossed_held.front();
        const auto& r = c.tr().frames[rec];
        const auto& f = r.f();
        const nanos acked = c.tr().frames[ack].t;
        return over(fail("PPSN " + std::to_string(f.bth.psn) + " on path " + std::to_string(f.mrh.path_id) +
                             " was resent " + fmt_time(r.t - acked) +
                             " after an ACK covered it; it crossed that ACK only if the DUT read the ACK that late (" +
                             std::to_string(sv.crossed_held.size()) + " such resends)",
                         "no resend of acknowledged PPSNs", "resend at " + fmt_time(r.t), {ack, rec}),
                    acked, r.t);
    }
    if (!resends) {
        if (c.boolean("allow_no_resends")) return pass("the DUT resent nothing, so nothing acknowledged");
        return inconclusive("the DUT resent nothing in this run");
    }
    std::string crossed;
    if (!sv.crossed.empty())
        crossed = " (" + std::to_string(sv.crossed.size()) + " crossed on the wire an ACK that covered them, taken as sent before it)";
    return pass(std::to_string(resends) + " resends, none of an acknowledged PPSN" + crossed);
}

// MR-SACK-6
outcome retry_limit(const context& c) {
    const auto& sv = c.sender();
    const unsigned limit = c.tr().p.retry_limit;
    std::map<std::tuple<std::uint16_t, std::uint32_t, std::uint32_t, std::uint8_t>, std::vector<std::size_t>> tx;
    for (const auto& e : sv.tx) tx[{e.stream, e.stream_seq, e.offset, e.attempt}].push_back(e.rec);
    std::size_t most = 0;
    std::vector<std::size_t> worst;
    for (const auto& [k, v] : tx)
        if (v.size() > most) {
            most = v.size();
            worst = v;
        }
    if (most > limit)
        return fail("a packet was transmitted " + std::to_string(most) + " times", "at most " + std::to_string(limit) +
                    " transmissions (retry limit)", std::to_string(most), worst);
    bool error_wc = false;
    for (const auto& wc : c.tr().dut.completions)
        if (wc.status == "retry_exceeded") error_wc = true;
    // Given up before the limit: a work request failed for retries while no
    // packet had gone out as often as the limit says (§5 defaults: "retry
    // limit 7 transmissions per packet"), D141. The trace holds every frame
    // of the DUT's, the plan's drops included. In real time a frame the
    // engine's socket dropped leaves no verdict standing (case_judge), but
    // one lost before any socket counts it (a veth's backlog, a NIC's ring)
    // would go unseen: one short of the limit is doubted, not failed.
    if (most < limit) {
        if (!error_wc)
            return inconclusive("no packet reached the retry limit (most transmissions: " + std::to_string(most) + ")");
        if (c.tr().timing.realtime && most + 1 == limit)
            return inconclusive("a work request failed with retry exceeded after " + std::to_string(most) +
                                " transmissions of its packet seen on the wire, one short of the limit of " +
                                std::to_string(limit) +
                                ": in real time one may have been lost before the engine's receive path counted it; "
                                "it would have said fail");
        return fail("a work request failed with retry exceeded, but no packet was transmitted more than " +
                        std::to_string(most) + (most == 1 ? " time" : " times"),
                    std::to_string(limit) + " transmissions of a packet before its message fails (retry limit)",
                    std::to_string(most), worst);
    }
    if (!error_wc)
        return fail("a packet reached the retry limit but no work request failed", "an error completion (retry exceeded)",
                    "none", worst);
    if (!c.tr().dut.conn_error)
        return fail("the retry limit was reached but the connection is not in error", "connection in error",
                    "connection usable", worst);
    return pass("retry limit of " + std::to_string(limit) + " reached, error completion raised, connection in error");
}

std::optional<nanos> rto_timing_tolerance(const context& c) {
    auto abs = c.duration("abs");
    if (!abs) return std::nullopt;
    const double rel = c.number("rel");
    std::optional<nanos> least;
    for (const auto& x : c.sender().expiries) {
        if (!wanted_path(c, x.path) || x.timer_start.count() < 0) continue;
        const nanos tol{static_cast<std::int64_t>(rel * static_cast<double>(x.expected_rto.count())) + abs->count()};
        if (!least || tol < *least) least = tol;
    }
    return least;
}

// MR-RTO-3 / MR-RTO-4: each expiry's timing against RFC 6298 computed from
// the Karn-valid samples on the wire, doubled per consecutive expiry.
outcome rto_timing(const context& c) {
    const auto& sv = c.sender();
    const double rel = c.number("rel");
    auto abs = c.duration("abs");
    if (!abs) return error(abs.err().message);
    std::size_t n = 0;
    outcome o;
    for (const auto& x : sv.expiries) {
        if (!wanted_path(c, x.path)) continue;
        if (x.timer_start.count() < 0) continue;
        ++n;
        const nanos observed = x.t - x.timer_start;
        const double tol = rel * static_cast<double>(x.expected_rto.count()) + static_cast<double>(abs->count());
        // An expiry early for its bound fails unless a hold of the DUT
        // before the frame that started its timer explains it (below); else
        // a hold only makes a timer late (and the DUT restarts it no sooner
        // than the ACK's record, which is when the engine sent it). A late one rests on
        // the span the timer ran: holds there, of the engine (ACKs sent late)
        // or of the DUT beside it, as long in all as the excess, excuse it.
        //
        // Real time: the DUT reads an ACK later than the engine sent it by
        // any hold of its host (or wait for a CPU) at that moment, and its
        // RTT samples, so its RTO, are longer by that than the wire shows
        // (RTO-004 scaled beside stress-ng: 13.4 ms where the wire gave 6.4).
        // The sender view runs the estimator a second time with each sample
        // lengthened so (expected_rto_held): an expiry within that bound
        // cannot be told from a conforming one; one beyond it is excused only
        // by holds as long as the rest.
        const nanos excess = observed - x.expected_rto;
        if (std::fabs(static_cast<double>(excess.count())) > tol) {
            const std::string what = "path " + std::to_string(x.path) + " expiry " + std::to_string(x.run) + " (PPSN " +
                                     ppsn_str(x.ppsn) + ") fired after " + fmt_time(observed);
            const nanos tol_ns{static_cast<std::int64_t>(tol)};
            // What a hold of the host explains: inconclusive, with the
            // expiry, the figure that explains it and what it would have said.
            auto doubt = [&](const std::string& why, const std::string& figure, nanos value) {
                auto d = inconclusive(why + " (+/- " + fmt_time(tol_ns) + "); it would have said fail: " + what);
                d.timing_doubt = true;
                d.measured["rto_us_path" + std::to_string(x.path)] = core::to_micros(observed);
                d.measured[figure] = core::to_micros(value);
                d.frames = {x.rec};
                return d;
            };
            if (excess > nanos{0} && observed <= x.expected_rto_held + tol_ns)
                return doubt("the host held the DUT while it read the ACKs of path " + std::to_string(x.path) +
                                 "'s RTT samples: its RTO may have been up to " + fmt_time(x.expected_rto_held) +
                                 " where the wire shows " + fmt_time(x.expected_rto),
                             "rto_held_bound_us", x.expected_rto_held);
            // Early: a DUT stamps its send when it decides it, and a hold
            // before the frame left puts the wire behind the timer it
            // started (timer_start_earliest). And RFC 6298's RTO is not
            // monotone in the samples: where the engine's ACKs were held
            // unevenly the wire's samples alternate short and long while the
            // DUT's, each within its hold of the wire's, may have been evenly
            // long, with a smaller RTTVAR (expected_rto_least, D147). An
            // expiry no earlier than the least bound from the earliest start
            // cannot be told from a conforming one.
            if (excess < nanos{0}) {
                const nanos least = std::min(x.expected_rto, x.expected_rto_least);
                const nanos tol_least{static_cast<std::int64_t>(rel * static_cast<double>(least.count())) + abs->count()};
                if (x.t - x.timer_start_earliest >= least - tol_least) {
                    std::string why;
                    if (least < x.expected_rto)
                        why = "the engine's ACKs carrying path " + std::to_string(x.path) +
                              "'s RTT samples were held unevenly: the DUT's samples, each within its hold of the wire's, "
                              "allow an RTO as short as " + fmt_time(least) + " where the wire's give " + fmt_time(x.expected_rto);
                    if (x.timer_start_earliest < x.timer_start)
                        why += std::string(why.empty() ? "" : "; and ") + "the host held the DUT up to " +
                               fmt_time(x.timer_start - x.timer_start_earliest) + " before the frame that started path " +
                               std::to_string(x.path) + "'s timer left: its timer may have run from then, " +
                               fmt_time(x.t - x.timer_start_earliest) + " against an RTO of " + fmt_time(least);
                    auto d = doubt(why, "rto_least_bound_us", least);
                    if (x.timer_start_earliest < x.timer_start)
                        d.measured["held_before_start_us"] = core::to_micros(x.timer_start - x.timer_start_earliest);
                    return d;
                }
            }
            auto f = over(fail(what,
                        "RTO " + fmt_time(x.expected_rto) + " (RFC 6298 from Karn-valid samples, x2 per expiry) +/- " +
                            fmt_time(tol_ns),
                        fmt_time(observed), {x.rec}),
                        x.timer_start, x.t);
            if (excess < nanos{0}) f.timing_free = true;
            else f.excused_by = observed - std::max(x.expected_rto, x.expected_rto_held) - tol_ns;
            return f;
        }
        if (!x.oldest)
            return fail("path " + std::to_string(x.path) + "'s expiry resent PPSN " + ppsn_str(x.ppsn) +
                            ", not the oldest unacknowledged one (MR-RTO-4)",
                        "the oldest unacknowledged PPSN", "PPSN " + ppsn_str(x.ppsn), {x.rec});
        o.measured["rto_us_path" + std::to_string(x.path)] = core::to_micros(observed);
    }
    if (!n) {
        // Which path came nearest to needing its timer.
        std::optional<unacked_span> most;
        for (unsigned p = 0; p < c.tr().p.num_paths; ++p) {
            if (!wanted_path(c, p)) continue;
            const auto u = longest_unacked(c, p);
            if (!most || u.longest > most->longest) most = u;
        }
        if (!most) return premise_not_met("no retransmission timer expired in this run");
        auto d = premise_not_met("no retransmission timer expired in this run; the longest a path "
                                 "held packets unacknowledged was " + fmt_time(most->longest) + " (path " +
                                 std::to_string(most->path) + ", " + std::to_string(most->packets) + " packets sent on it)");
        d.measured["longest_unacked_us"] = core::to_micros(most->longest);
        return d;
    }
    o.v = verdict::pass;
    o.message = std::to_string(n) + " expiries, each at its path's own RTO";
    return o;
}

// MR-RTO-1 / MR-RTO-2: the path's timer follows its own RTT. Replays the
// path's timer from the wire: it runs while the path has packets in flight,
// restarts on an ACK that acknowledges something new and on each expiry. If
// it runs longer than the bound without an expiry or a restart, the DUT's
// timer for this path is not its own (e.g. another path's progress keeps
// restarting one shared timer).
outcome rto_independence(const context& c) {
    const auto& sv = c.sender();
    const auto p = static_cast<unsigned>(c.integer("path"));
    auto bound = c.duration("at_most");
    if (!bound) return error(bound.err().message);
    unsigned inflight = 0;
    std::optional<nanos> start;
    std::size_t start_rec = 0, expiries = 0;
    unsigned backoff = 0;  // consecutive expiries: each doubles the allowed time (MR-RTO-3)
    nanos worst{0};
    auto allowed = [&] {
        nanos b = *bound;
        for (unsigned i = 0; i < backoff && b < c.tr().p.rto_max; ++i) b *= 2;
        return std::min(b, std::max(*bound, c.tr().p.rto_max));
    };
    // Real time (D77, as D73 for rto_timing): the DUT's RTO may be longer than the wire's samples
    // give by the holds at their ACKs. The timer running from `start` is the
    // one the path's next expiry shows; what its held estimate adds to the
    // wire's RTO widens the bound for that timer. Virtual time: nothing.
    auto held_extra = [&]() -> nanos {
        for (const auto& x : sv.expiries)
            if (x.path == p && x.t > *start) return std::max(nanos{0}, x.expected_rto_held - x.expected_rto);
        return nanos{0};
    };
    auto overdue = [&](nanos now, std::size_t rec) -> std::optional<outcome> {
        if (!start || now - *start <= allowed()) return std::nullopt;
        const std::string what = "path " + std::to_string(p) + " had packets unacknowledged from " + fmt_time(*start) +
                                 " for " + fmt_time(now - *start) + " without a timeout";
        const nanos extra = held_extra();
        if (now - *start <= allowed() + extra) {
            auto d = inconclusive("the host held the DUT while it read the ACKs of path " + std::to_string(p) +
                                  "'s RTT samples: its RTO may have been up to " + fmt_time(extra) +
                                  " longer than the wire shows, so the bound up to " + fmt_time(allowed() + extra) +
                                  "; it would have said fail: " + what);
            d.timing_doubt = true;
            d.measured["unacked_us"] = core::to_micros(now - *start);
            d.measured["held_bound_us"] = core::to_micros(allowed() + extra);
            d.frames = {start_rec, rec};
            return d;
        }
        // Holds in the span, as long in all as the overrun, can have kept a
        // DUT beside the engine from its expiry (or the engine from the ACKs
        // that restart it): only they excuse it.
        auto f = over(fail(what + ": its timer is not its own",
                             "an expiry within " + c.str("at_most") + (backoff ? " x 2^" + std::to_string(backoff) : "") +
                                 " = " + fmt_time(allowed()),
                             "none for " + fmt_time(now - *start), {start_rec, rec}),
                        *start, now);
        f.excused_by = now - *start - allowed() - extra;
        return f;
    };
    for (const auto& e : timer_events(sv, p)) {
        if (auto f = overdue(e.t, e.rec)) return *f;
        switch (e.kind) {
        case timer_event::first:
            if (inflight++ == 0) {
                start = e.t;
                start_rec = e.rec;
            }
            break;
        case timer_event::expiry_resend:
            ++expiries;
            if (!backoff) worst = std::max(worst, e.t - *start);
            ++backoff;
            start = e.t;
            start_rec = e.rec;
            break;
        case timer_event::ack:
            inflight -= std::min(inflight, e.newly);
            if (e.newly) {
                backoff = 0;
                start = inflight ? std::optional<nanos>(e.t) : std::nullopt;
                start_rec = e.rec;
            }
            break;
        case timer_event::reset:  // the path failed: its packets left it, its timer with them
            inflight = 0;
            backoff = 0;
            start.reset();
            break;
        case timer_event::other_resend: break;
        }
    }
    if (auto f = overdue(c.tr().end, start_rec)) return *f;
    if (!expiries) {
        const auto u = longest_unacked(c, p);
        auto d = premise_not_met("path " + std::to_string(p) +
                                 "'s timer never had to expire (" + std::to_string(u.packets) +
                                 " packets sent on it; the longest it held packets unacknowledged was " + fmt_time(u.longest) +
                                 ", within the bound " + fmt_time(*bound) + ")");
        d.measured["packets_on_path"] = static_cast<double>(u.packets);
        d.measured["longest_unacked_us"] = core::to_micros(u.longest);
        return d;
    }
    outcome o = pass(std::to_string(expiries) + " expiries on path " + std::to_string(p) + ", the longest after " +
                     fmt_time(worst) + " (bound " + fmt_time(*bound) + ")");
    o.measured["max_timeout_us"] = core::to_micros(worst);
    return o;
}

// MR-PATH-4
outcome port_move_after_rtos(const context& c) {
    const auto& sv = c.sender();
    const unsigned after = c.tr().p.moves_after;
    std::size_t moves = 0;
    for (const auto& x : sv.expiries) {
        if (!wanted_path(c, x.path)) continue;
        const auto& e = *std::find_if(sv.tx.begin(), sv.tx.end(), [&](const tx_event& t) { return t.rec == x.rec; });
        if (x.run % after == 0) {
            if (e.sport == x.sport_before && x.run == after)
                return fail("path " + std::to_string(x.path) + "'s resend after " + std::to_string(x.run) +
                                " consecutive expiries still uses port " + std::to_string(e.sport),
                            "a new source port on this resend", "port " + std::to_string(e.sport), {x.rec});
            ++moves;
        } else if (x.run == 1 && e.sport != x.sport_before) {
            return fail("path " + std::to_string(x.path) + " moved to a new port after a single expiry",
                        "port " + std::to_string(x.sport_before), "port " + std::to_string(e.sport), {x.rec});
        }
    }
    if (!moves)
        return premise_not_met("no path had " + std::to_string(after) + " consecutive expiries (" +
                               sv.expiry_figures() + ")");
    return pass(std::to_string(moves) + " port moves, each on the resend of the " + std::to_string(after) + "nd expiry");
}

// MR-PATH-6 / MR-PATH-7: a failed path is reset and left alone until a probe
// reply and PATH_RESET_ACK bring it back.
outcome failover(const context& c) {
    const auto p = static_cast<unsigned>(c.integer("path"));
    std::optional<nanos> reset_at;
    std::size_t reset_rec = 0;
    bool probe_reply = false, reset_ack = false;
    std::size_t new_data_after = 0;
    for (const auto& r : c.tr().frames) {
        if (!r.ok()) continue;
        const auto& f = r.f();
        if (f.bth.opcode == static_cast<std::uint8_t>(opcode::ctrl)) {
            auto t = read_ctrl_tlvs(f.tlvs);
            if (!t.path_id || *t.path_id != p) continue;
            if (r.d == trace::dir::from_dut && f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset) && !reset_at) {
                reset_at = r.t;
                reset_rec = r.index;
            }
            if (r.reached_dut() && f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::probe_reply)) probe_reply = true;
            if (r.reached_dut() && f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset_ack)) reset_ack = true;
            continue;
        }
        if (reset_at && r.d == trace::dir::from_dut && is_data_opcode(f.bth.opcode) && f.mrh.path_id == p) {
            if (!(probe_reply && reset_ack))
                return fail("path " + std::to_string(p) + " carried data after it failed, before a PROBE_REPLY and PATH_RESET_ACK",
                            "no data on the failed path until it is probed and reset", "data at " + fmt_time(r.t),
                            {reset_rec, r.index});
            ++new_data_after;
        }
    }
    if (!reset_at) {
        // Did the path ever have 4 consecutive expiries, while another path
        // was in service? §5 (Failed path): "The last path in service never
        // fails; the retry limit ends it." (D138: PATH-012 with the engine at
        // 5 % of a CPU, no ACK for 95 ms at a time: the DUT failed paths 0-2
        // first, then kept path 3 through 6 expiries, as it must.)
        const auto& sv = c.sender();
        const path_failures pf(c.tr(), c.tr().p.num_paths);
        const unsigned fails_at = 2 * c.tr().p.moves_after;
        unsigned most = 0, last_path_runs = 0;
        for (const auto& x : sv.expiries) {
            if (x.path != p) continue;
            most = std::max(most, x.run);
            if (x.run != fails_at) continue;
            if (!pf.others_failed_before(p, x.rec, false))
                return fail("path " + std::to_string(p) + " had " + std::to_string(fails_at) +
                                " consecutive expiries while another path was in service, but was never failed",
                            "PATH_RESET after the 4th consecutive expiry", "no PATH_RESET", {x.rec});
            ++last_path_runs;
        }
        if (last_path_runs)
            return premise_not_met("path " + std::to_string(p) + " had " + std::to_string(most) +
                                   " consecutive expiries, but only as the last path in service (every other path "
                                   "failed), which never fails (§5)");
        // The case's premise (a failed path) did not arise: a count of the
        // failure's frames (PROBE, PATH_RESET_ACK) says nothing either (D111:
        // PATH-011 with mrct-refnic at 5 % of a CPU, its timers held through
        // the route's 12 ms outage scaled 64 times).
        return premise_not_met("path " + std::to_string(p) + " did not fail in this run (at most " + std::to_string(most) +
                               " consecutive expiries on it)");
    }
    if (c.has("within")) {
        // From the first expiry of the run that ended in the failure.
        auto within = c.duration("within");
        if (!within) return error(within.err().message);
        std::optional<nanos> run_start;
        for (const auto& x : c.sender().expiries)
            if (x.path == p && x.t <= *reset_at && x.run == 1) run_start = x.t;
        if (run_start && *reset_at - *run_start > *within)
            return fail("path " + std::to_string(p) + " failed " + fmt_time(*reset_at - *run_start) + " after its first expiry",
                        "PATH_RESET within " + c.str("within") + " = " + fmt_time(*within), fmt_time(*reset_at - *run_start),
                        {reset_rec});
    }
    return pass("path " + std::to_string(p) + " failed at " + fmt_time(*reset_at) + " and stayed out of use until probed" +
                (new_data_after ? " (back in service afterwards)" : ""));
}

// MR-PATH-6, §5 (Failed path): "The last path in service never fails; the
// retry limit ends it." A PATH_RESET from the DUT is a failure of its path
// unless the path is already failed (a repeat of an unanswered PATH_RESET);
// a failed path is back in service once a PROBE_REPLY and a PATH_RESET_ACK
// for it were sent to the DUT (MR-PATH-7; taken at the engine's send, the
// earliest the DUT can have them: in real time the doubt goes the DUT's way),
// or once the DUT sends data on it. The case's premise: the DUT came down to
// one path in service (D138).
outcome last_path_kept(const context& c) {
    const unsigned n = c.tr().p.num_paths;
    const path_failures pf(c.tr(), n);
    unsigned most_failed = 0;
    std::optional<unsigned> kept;  // the path left in service when most_failed reached n - 1
    for (const auto& r : c.tr().frames) {
        if (!r.ok() || r.d != trace::dir::from_dut || r.f().bth.opcode != static_cast<std::uint8_t>(opcode::ctrl) ||
            r.f().ctrlh.type != static_cast<std::uint8_t>(ctrl_type::path_reset))
            continue;
        const auto t = read_ctrl_tlvs(r.f().tlvs);
        if (!t.path_id || *t.path_id >= n) continue;
        const unsigned p = *t.path_id;
        if (pf.failed_before(p, r.index, true)) continue;  // the same failure, its PATH_RESET repeated
        if (n > 1 && pf.others_failed_before(p, r.index, true)) {
            std::vector<std::size_t> others;  // the PATH_RESETs that failed the others
            for (unsigned x = 0; x < n; ++x)
                if (x != p) others.push_back(*pf.failed_before(x, r.index, true));
            others.push_back(r.index);
            return fail("the DUT failed path " + std::to_string(p) + " at " + fmt_time(r.t) + " while every other of its " +
                            std::to_string(n) + " paths was failed: it failed its last path in service",
                        "the last path in service never fails; the retry limit ends it (§5, Failed path)",
                        "PATH_RESET of path " + std::to_string(p), others);
        }
        unsigned failed = 1;  // p, from this record
        std::optional<unsigned> left;
        for (unsigned x = 0; x < n; ++x)
            if (x != p) {
                if (pf.failed_before(x, r.index, true)) ++failed;
                else left = x;
            }
        if (failed > most_failed) {
            most_failed = failed;
            if (failed + 1 == n) kept = left;
        }
    }
    if (!kept)
        return premise_not_met("the DUT never came down to its last path in service (at most " + std::to_string(most_failed) +
                               " of its " + std::to_string(n) + " paths failed at once)");
    return pass("the DUT failed " + std::to_string(n - 1) + " of its " + std::to_string(n) + " paths and kept path " +
                std::to_string(*kept) + ", the last in service");
}

}  // namespace mrct::assertions::checks
