// Observations through the DUT's control surface: completions and memory.
#include <cstdio>
#include <map>
#include <set>

#include "assertions/checks.h"
#include "core/serial.h"
#include "trace/match.h"
#include "wire/protocol.h"

namespace mrct::assertions::checks {

using core::nanos;

namespace {

const trace::side_obs& side(const context& c, const std::string& s) { return s == "peer" ? c.tr().peer : c.tr().dut; }

// ACKs from `from` on (either side's) whose CumAck went beyond the highest
// their side had said on that path before, by at most a path's cap in flight
// (a PATH_RESET's jump to a new INITIAL_PPSN is not progress), and the last
// such ACK's time: the transfer still moving.
std::pair<unsigned, nanos> acks_advancing(const trace::trace& tr, nanos from) {
    constexpr std::uint32_t k_most = 1024;
    std::map<std::pair<int, unsigned>, std::uint32_t> high;  // (direction, path): highest CumAck
    unsigned n = 0;
    nanos last{0};
    for (const auto& r : tr.frames) {
        if (!r.ok() || r.f().bth.opcode != static_cast<std::uint8_t>(wire::opcode::ack)) continue;
        const std::uint32_t cum = r.f().bth.psn;
        const auto [it, fresh] = high.try_emplace({static_cast<int>(r.d), r.f().ackh.path_id}, cum);
        if (fresh || !core::psn24::lt(it->second, cum)) continue;
        if (core::psn24::diff(cum, it->second) <= k_most && r.t >= from) {
            ++n;
            last = r.t;
        }
        it->second = cum;
    }
    return {n, last};
}

// The data packets that reached the DUT and no later ACK of the DUT on
// their path covered (CumAck or SACK), and how many reached it.
std::pair<std::size_t, std::size_t> unanswered_by_dut(const trace::trace& tr) {
    std::set<std::pair<unsigned, std::uint32_t>> open;  // (path, PPSN) not covered yet
    std::set<std::pair<unsigned, std::uint32_t>> reached;
    for (const auto& r : tr.frames) {
        if (!r.ok()) continue;
        if (r.reached_dut() && r.data() && r.f().icrc_ok()) {
            open.insert({r.f().mrh.path_id, r.f().bth.psn});
            reached.insert({r.f().mrh.path_id, r.f().bth.psn});
        } else if (r.d == trace::dir::from_dut && r.f().bth.opcode == static_cast<std::uint8_t>(wire::opcode::ack)) {
            const unsigned p = r.f().ackh.path_id;
            for (auto it = open.lower_bound({p, 0}); it != open.end() && it->first == p;)
                it = covers(r.f(), it->second) ? open.erase(it) : std::next(it);
        }
    }
    return {open.size(), reached.size()};
}

// Real time: work `what` of `side` never completed, for a reason that may be
// no fault of the DUT's (D111); the inconclusive outcome, if so.
std::optional<outcome> pending_excused(const context& c, const std::string& side, const std::string& what) {
    const auto& tm = c.tr().timing;
    // A transfer still moving at the cap (new data acknowledged in its last
    // half) is a DUT too slow, or held too long, for the time the case gives;
    // a stuck one is judged.
    if (tm.work_budget > nanos{0}) {
        const auto [moving, last] = acks_advancing(c.tr(), c.tr().end - tm.work_budget / 2);
        if (moving >= 2)
            return inconclusive(what + " never completed, but the transfer was still moving: " + std::to_string(moving) +
                                " ACKs acknowledged new data in the case's last " + fmt_time(tm.work_budget / 2) +
                                " (the latest at " + fmt_time(last) + ", the case ended at " + fmt_time(c.tr().end) +
                                "); this check needs the work done or stopped by the case's time cap; it would have said "
                                "fail");
    }
    // The engine's own work: where the DUT had covered every data packet that
    // reached it, what was left was the engine's peer resending what the wire
    // lost on its own timers (backed off under Karn's rule: PATH-004 scaled
    // 64 times with the DUT at 5 % of a CPU waited past the cap for its next
    // expiry): nothing the DUT did or did not do.
    if (side == "peer") {
        const auto [open, reached] = unanswered_by_dut(c.tr());
        if (reached && !open)
            return inconclusive(what + " never completed, but the DUT had acknowledged all " + std::to_string(reached) +
                                " data packets that reached it: the rest waited on the engine's own retransmission "
                                "timers past the case's end; this check needs the DUT to hold the work up; it would "
                                "have said fail");
    }
    // The engine stretched the case's cap by the holds it measured, as far as
    // it may; where that was not enough, the work had less time than the case
    // gives it.
    if (tm.work_capped) {
        const nanos ran = c.tr().end - tm.work_from, held = tm.held_between(tm.work_from, c.tr().end);
        if (ran - held < tm.work_budget)
            return inconclusive(what + " never completed, but the case ran " + fmt_time(ran) +
                                ", of which the engine, the DUT or their host was held " + fmt_time(held) +
                                " in all; this check needs " + fmt_time(tm.work_budget) +
                                " the host did not hold (the case's time cap), and " + fmt_time(ran - held) +
                                " was left; it would have said fail");
    }
    return std::nullopt;
}

// Real time: whether every timer span of the packet that ran out of
// retries (the most sent of its message, any of them if several were sent
// as often: `sent`, by offset, each transmission's time and whether the
// plan dropped it) lay in holds: from
// each transmission to the next, and from the last to the give-up at `end`,
// the engine, the DUT and their host ran free at most the crossing window
// and at most half the span (D140). Each such expiry the holds can have
// caused: the answer could not come. A span the plan's drop of its
// transmission explains counts too, at most `drops` of them (those that
// fail a path: give_up_excused). Periodic holds, a CPU quota's (SACK-051
// with the engine at 2 % of a CPU: 98 ms of each 100 held, its retries
// spread over several holds none as long as they last), are judged here
// span by span, where the two longest holds cannot cover them. The words
// saying so, if so.
std::optional<std::string> expiries_held(const context& c, const std::map<std::uint32_t, std::vector<std::pair<nanos, bool>>>& sent,
                                         nanos end, unsigned drops) {
    const auto& tm = c.tr().timing;
    std::size_t most = 0;
    for (const auto& [off, txs] : sent) most = std::max(most, txs.size());
    if (most < 2) return std::nullopt;
    const nanos slack = c.tr().crossing;
    // Any packet sent that often may be the one that ran out.
    for (const auto& [offset, txs] : sent) {
        if (txs.size() != most) continue;
        unsigned held = 0, by_drop = 0;
        nanos free_most{0};
        bool all = true;
        for (std::size_t i = 0; i < txs.size() && all; ++i) {
            const nanos from = txs[i].first, to = i + 1 < txs.size() ? txs[i + 1].first : end;
            const nanos free = tm.free_between(from, to);
            if (to > from && free <= slack && 2 * free <= to - from) {
                ++held;
                free_most = std::max(free_most, free);
            } else if (txs[i].second && by_drop < drops) {
                ++by_drop;
            } else {
                all = false;
            }
        }
        if (!all || !held) continue;
        return "each of the " + std::to_string(most) + " timer spans of its packet at offset " + std::to_string(offset) +
               " (from each transmission to the next, the last to the give-up) lay in holds of the engine, the DUT or their "
               "host" +
               (by_drop ? " or followed a transmission the plan dropped (" + std::to_string(by_drop) + ")" : std::string{}) +
               ": " + std::to_string(held) + " of them ran free at most " + fmt_time(free_most) +
               "; the answers could not come in time; this check needs a span the holds left free for longer than " +
               fmt_time(slack);
    }
    return std::nullopt;
}

// Real time: work `what` of `side`, posted at `posted`, ended `wc` (out of
// retries, or its connection in error) while the other side went silent
// (the engine, or the DUT, held by the host, or a CPU quota) for as long as
// its retries last at the least: it gave up as the clause says it must (the
// DUT's retries, or the engine's peer's: D111). The inconclusive outcome, if so.
std::optional<outcome> give_up_excused(const context& c, const std::string& side, const std::string& what, nanos posted,
                                       const trace::completion& wc) {
    const auto& st = wc.status;
    if (st != "retry_exceeded" && st != "connection_error") return std::nullopt;
    const auto& prm = side == "dut" ? c.tr().p : c.tr().peer_p;
    // Transmissions of the message the plan itself dropped (its filters and
    // impairments: RNR-009 loses every packet of a stream on path 0, 4 of a
    // packet's 7 before its path fails) took their share of the retries
    // without the holds: only the rest had to run out under them. The
    // message's most-dropped packet counts, and the rest's timer is taken
    // from its least again (rto_min, or rto_initial where shorter: a packet
    // moved to another path may restart its backoff there): the shortest the
    // retries left can last.
    unsigned dropped = 0;
    // Every transmission of the message's packets, by offset: (time, dropped).
    std::map<std::uint32_t, std::vector<std::pair<nanos, bool>>> sent;
    {
        const auto d = side == "dut" ? trace::dir::from_dut : trace::dir::to_dut;
        std::map<std::uint32_t, unsigned> by_offset;
        for (const auto& r : c.tr().frames)
            if (r.d == d && r.ok() && wire::is_data_opcode(r.f().bth.opcode) && r.f().mrh.stream_id == wc.stream &&
                r.f().mrh.stream_seq == wc.stream_seq) {
                sent[r.f().mrh.msg_offset].emplace_back(r.t, r.dropped);
                if (r.dropped) dropped = std::max(dropped, ++by_offset[r.f().mrh.msg_offset]);
            }
    }
    // But no more than fail a path: after 2 x moves_after expiries a
    // conforming sender fails the path and resends elsewhere (§5, Failed
    // path); the plan's drops run out the rest only where no other path was
    // left in service, which the holds can bring about (D138: PATH-012 with
    // the engine at 5 % of a CPU, paths 0-2 failed for want of ACKs, then
    // the plan's dead path 3, the last in service, ran out all 7).
    const unsigned dropped_all = dropped;
    dropped = std::min(dropped, 2 * prm.moves_after);
    trace::params left = prm;
    left.retry_limit = prm.retry_limit > dropped ? prm.retry_limit - dropped : 0;
    nanos budget = left.data_retries_span();
    // A connection in error is the same giving up, on a CTRL request (CLOSE,
    // RNR_QUERY) repeated every rto_initial at the least (PATH-013 with the
    // DUT at 5 % of a CPU).
    if (st == "connection_error") budget = std::min(budget, prm.ctrl_retries_span());
    if (budget <= nanos{0}) return std::nullopt;  // the plan's drops alone ran them out: no hold needed
    // Each expiry the holds caused needed one as long as the timer then ran:
    // the two longest holds, or the DUT's own waits for a CPU in all (D67: a
    // DUT thread kept from a CPU takes its expiries before the ACKs queued
    // meanwhile), can have made the retries run out.
    const auto& tm = c.tr().timing;
    const auto held = tm.excuse_between(posted, wc.t);
    if (held.most() < budget) {
        if (st != "retry_exceeded") return std::nullopt;
        if (auto why = expiries_held(c, sent, wc.t, dropped))
            return inconclusive(what + " ran out of retries, but " + *why + "; it would have said fail");
        return std::nullopt;
    }
    const std::string who = held.dut_waits > held.holds
                                ? waited_words(tm, held.dut_waits) + "between its post and its end"
                                : std::string(side == "dut" ? "the engine or its host" : "the DUT, the engine or their host") +
                                      " was held " + fmt_time(held.holds) + " (two longest holds)";
    const std::string doubled = prm.least_rto() < prm.rto_min
                                    ? "rto_initial doubled per expiry (below rto_min: a path without an RTT sample, D140)"
                                    : "rto_min doubled per expiry";
    const std::string less_drops =
        dropped ? ", less the " + std::to_string(dropped) + " transmissions of one of its packets the plan dropped" +
                      (dropped_all > dropped ? " (of " + std::to_string(dropped_all) + ": those that fail a path)" : "")
                : "";
    return inconclusive(what + (st == "retry_exceeded" ? " ran out of retries" : " ended with its connection in error") +
                        " while " + who + "; this check needs less than " + fmt_time(budget) +
                        (st == "retry_exceeded" ? " (the shortest its retries can last: " + doubled + less_drops + ")"
                                                : " (the shortest its retries can last: a CTRL request every rto_initial, or "
                                                  + doubled + less_drops + ")") +
                        "; it would have said fail");
}

// A side's Send and Write completions by wr_id.
std::map<std::uint64_t, const trace::completion*> work_completions(const trace::side_obs& o) {
    std::map<std::uint64_t, const trace::completion*> by_id;
    for (const auto& wc : o.completions)
        if (wc.kind == "send" || wc.kind == "write") by_id[wc.wr_id] = &wc;
    return by_id;
}

// Real time: work `what` posted as `p` that did not complete with success
// (`wc`: its completion, or none) and that the holds may have cut short:
// never completed (pending_excused) or given up (give_up_excused). The
// inconclusive outcome, if so.
std::optional<outcome> cut_short(const context& c, const std::string& side, const std::string& what, const trace::posted_wr& p,
                                 const trace::completion* wc) {
    if (!wc) return pending_excused(c, side, what);
    if (wc->status != "success") return give_up_excused(c, side, what, p.t, *wc);
    return std::nullopt;
}

}  // namespace

// Every Send and Write posted completes with the given status (within a time).
outcome all_complete(const context& c) {
    const std::string want = c.str("status");
    std::optional<nanos> within;
    if (c.has("within")) {
        auto w = c.duration("within");
        if (!w) return error(w.err().message);
        within = *w;
    }
    const bool realtime = c.tr().timing.realtime;
    std::size_t n = 0;
    for (const std::string s : {"dut", "peer"}) {
        if (c.str("side") != "both" && c.str("side") != s) continue;
        const auto& o = side(c, s);
        const auto by_id = work_completions(o);
        for (const auto& p : o.posted) {
            if (p.kind == "recv") continue;
            ++n;
            const std::string what = s + " " + p.kind + " wr_id " + std::to_string(p.wr_id);
            auto it = by_id.find(p.wr_id);
            // Real time: work the holds cut short (pending, or given up)
            // leaves the case's scenario unfinished: a count of its frames
            // falling short says nothing either (counts_need_premise; RNR-012
            // with the DUT at 5 % of a CPU: the peer gave up before its
            // RNR_QUERY, and the count of RNR_SYNC failed the reference).
            auto unfinished = [](outcome o) {
                o.premise_missing = true;
                return o;
            };
            if (it == by_id.end()) {
                if (realtime)
                    if (auto x = cut_short(c, s, what, p, nullptr)) return unfinished(*x);
                return fail(what + " never completed", "completion with status " + want,
                            "no completion by " + fmt_time(c.tr().end), {});
            }
            if (it->second->status != want) {
                if (realtime && want == "success")
                    if (auto x = cut_short(c, s, what, p, it->second)) return unfinished(*x);
                return fail(what + " completed with " + it->second->status, want, it->second->status, {});
            }
            if (within && it->second->t - p.t > *within)
                return fail(what + " took " + fmt_time(it->second->t - p.t),
                            "within " + c.str("within") + " = " + fmt_time(*within), fmt_time(it->second->t - p.t), {});
        }
    }
    if (!n) return inconclusive("nothing was posted");
    return pass(std::to_string(n) + " work requests completed with " + want);
}

// MR-STR-1
outcome completion_order(const context& c) {
    const auto& o = side(c, c.str("side"));
    std::map<std::pair<bool, std::uint16_t>, const trace::completion*> last;
    std::size_t pairs = 0;
    for (const auto& wc : o.completions) {
        if (wc.status != "success") continue;
        const bool recv = wc.kind == "recv" || wc.kind == "recv_write_imm";
        auto& l = last[{recv, wc.stream}];
        if (l) {
            ++pairs;
            if (!core::seq32::lt(l->stream_seq, wc.stream_seq))
                return fail("stream " + std::to_string(wc.stream) + " completed seq " + std::to_string(wc.stream_seq) +
                                " after seq " + std::to_string(l->stream_seq),
                            "completions in StreamSeq order", "seq " + std::to_string(l->stream_seq) + " then " +
                            std::to_string(wc.stream_seq), {});
        }
        l = &wc;
    }
    if (!pairs) return inconclusive("no stream completed two messages");
    return pass(std::to_string(pairs + last.size()) + " completions in StreamSeq order");
}

// MR-STR-2 / MR-RNR-3: a stream's messages complete by a deadline.
outcome stream_progress(const context& c) {
    const auto& o = side(c, c.str("side"));
    const auto stream = static_cast<std::uint16_t>(c.integer("stream"));
    auto within = c.duration("within");
    if (!within) return error(within.err().message);
    // From when the DUT had every message of the stream: the last post's
    // return. In the simulation posts take no time; on a wire each takes
    // milliseconds, and a slow agent is not the other stream's delay.
    nanos start{0};
    std::size_t posted = 0;
    for (const auto& p : o.posted)
        if (p.kind != "recv" && p.stream == stream) {
            start = std::max(start, p.done);
            ++posted;
        }
    if (!posted) return inconclusive("nothing was posted on stream " + std::to_string(stream));
    std::size_t done = 0, ever = 0, maybe = 0;
    nanos last{0}, last_ever{0}, err{0};
    for (const auto& wc : o.completions)
        if ((wc.kind == "send" || wc.kind == "write") && wc.stream == stream && wc.status == "success") {
            ++ever;
            last_ever = std::max(last_ever, wc.t);
            if (wc.t <= start + *within) {
                ++done;
                last = std::max(last, wc.t);
            }
            // It happened in [t - t_err, t] (a poll's flight, an agent's reap stamp).
            if (wc.t - wc.t_err <= start + *within) ++maybe;
            err = std::max(err, wc.t_err);
        }
    if (done < posted && maybe >= posted) {
        auto d = inconclusive("stream " + std::to_string(stream) + " completed " + std::to_string(done) + " of " +
                              std::to_string(posted) + " messages within " + fmt_time(*within) + " as stamped, all " +
                              std::to_string(posted) + " within it less the completion times' uncertainty (up to " +
                              fmt_time(err) + "): it would have said fail");
        d.timing_doubt = true;
        d.measured["completion_time_err_us"] = core::to_micros(err);
        return d;
    }
    if (done < posted) {
        auto f = fail("stream " + std::to_string(stream) + " completed " + std::to_string(done) + " of " + std::to_string(posted) +
                          " messages within " + fmt_time(*within) +
                          (ever >= posted ? ", the last " + fmt_time(last_ever - start) + " after the last post" : ""),
                      "all " + std::to_string(posted) + " within " + c.str("within"), std::to_string(done), {});
        // All done, only late: in real time, holds of the engine or of the
        // DUT beside it within the span, as long in all as the lateness, can
        // have caused it (D62); shorter ones leave it standing.
        if (ever >= posted) {
            f = over(std::move(f), start, last_ever);
            f.excused_by = last_ever - start - *within;
            f.excused_in_all = true;  // each hold slowed the stream's messages
        }
        return f;
    }
    return pass("stream " + std::to_string(stream) + ": " + std::to_string(done) + " messages done " + fmt_time(last - start) +
                " after the last was posted");
}

// MR-OOO-1 / MR-OOO-2: the bytes landed where they belong (memory compare).
outcome data_integrity(const context& c) {
    std::size_t bytes = 0, checks = 0;
    for (const auto& m : c.tr().memory) {
        if (c.str("side") != "both" && c.str("side") != m.side) continue;
        ++checks;
        const core::bytes_view want = m.expected();
        if (m.actual.size() != want.size())
            return fail("could not read back " + m.side + " memory for wr_id " + std::to_string(m.wr_id), std::to_string(want.size()) + " bytes",
                        std::to_string(m.actual.size()) + " bytes", {});
        for (std::size_t i = 0; i < want.size(); ++i)
            if (m.actual[i] != want[i]) {
                char e[8], a[8];
                std::snprintf(e, sizeof e, "0x%02x", want[i]);
                std::snprintf(a, sizeof a, "0x%02x", m.actual[i]);
                return fail(m.side + " memory of wr_id " + std::to_string(m.wr_id) + " differs at byte " + std::to_string(i) +
                                " (region offset " + std::to_string(m.offset + i) + ")",
                            e, a, {});
            }
        bytes += want.size();
    }
    if (!checks) return inconclusive("no memory to compare");
    return pass(std::to_string(bytes) + " bytes in " + std::to_string(checks) + " regions as expected");
}

// Work requests expected to fail (NAK outcomes, retry limit).
outcome error_completion(const context& c) {
    const auto& o = side(c, c.str("side"));
    const std::string want = c.str("status");
    for (const auto& wc : o.completions)
        if (wc.status == want) return pass("a work request completed with " + want);
    std::string got;
    for (const auto& wc : o.completions) got += (got.empty() ? "" : ", ") + wc.status;
    return fail("no work request completed with " + want, want, got.empty() ? "no completions" : got, {});
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {

// Frames on the DUT's wire matching fields (trace/match.h), counted.
outcome frame_count(const context& c) {
    trace::field_map m;
    for (const auto& [k, v] : c.all())
        if (k.rfind("match.", 0) == 0) m[k.substr(6)] = v;
    const auto d = c.str("dir") == "to_dut" ? trace::dir::to_dut : trace::dir::from_dut;
    std::vector<std::size_t> hits;
    for (const auto& r : c.tr().frames)
        if (r.d == d && !(r.dropped && d == trace::dir::to_dut) && trace::matches(m, r)) hits.push_back(r.index);  // a dropped to_dut frame never reached the DUT
    std::string what;
    for (const auto& [k, v] : m) what += (what.empty() ? "" : ", ") + k + "=" + v;
    what = std::string(trace::dir_name(d)) + " frames with " + (what.empty() ? "any fields" : what);
    const auto at_least = static_cast<std::size_t>(c.integer("at_least"));
    if (hits.size() < at_least) {
        // A premise not met is a scenario that did not arise (a DUT slower
        // than the queue it should fill is not wrong): nothing to judge.
        if (c.boolean("premise"))
            return premise_not_met(std::to_string(hits.size()) + " " + what + ", " +
                                   std::to_string(at_least) + " needed");
        auto o = fail(std::to_string(hits.size()) + " " + what, ">= " + std::to_string(at_least), std::to_string(hits.size()), hits);
        o.count_short = true;
        return o;
    }
    if (c.has("at_most") && hits.size() > static_cast<std::size_t>(c.integer("at_most")))
        return fail(std::to_string(hits.size()) + " " + what, "<= " + c.str("at_most"), std::to_string(hits.size()), hits);
    return pass(std::to_string(hits.size()) + " " + what);
}

}  // namespace mrct::assertions::checks

namespace mrct::assertions::checks {

// Completions a side reported, counted (e.g. "nothing of the message completed").
outcome completion_count(const context& c) {
    const auto& o = side(c, c.str("side"));
    std::size_t n = 0;
    for (const auto& wc : o.completions)
        if ((!c.has("kind") || wc.kind == c.str("kind")) && (!c.has("status") || wc.status == c.str("status"))) ++n;
    const std::string what = c.str("side") + " completions" + (c.has("kind") ? " of kind " + c.str("kind") : "") +
                             (c.has("status") ? " with status " + c.str("status") : "");
    const auto at_least = static_cast<std::size_t>(c.integer("at_least"));
    if (n < at_least) {
        // Real time: a Send or Write the holds cut short (never completed,
        // or given up while the other side was held as long as its retries
        // last) might have been one of the completions counted: the count
        // says nothing then, as all_complete says of the same work (D136;
        // RNR-009 with the engine at 5 % of a CPU: the DUT's SEND ran out of
        // retries while the engine was held 75 ms, and the count of its
        // successes failed the reference).
        const std::string want = c.has("status") ? c.str("status") : "";
        if (c.tr().timing.realtime && (want.empty() || want == "success") &&
            (!c.has("kind") || c.str("kind") == "send" || c.str("kind") == "write")) {
            const auto by_id = work_completions(o);
            std::size_t excused = 0;
            std::string first;
            for (const auto& p : o.posted) {
                if (p.kind == "recv" || (c.has("kind") && p.kind != c.str("kind"))) continue;
                const std::string w = c.str("side") + " " + p.kind + " wr_id " + std::to_string(p.wr_id);
                const auto it = by_id.find(p.wr_id);
                const auto x = cut_short(c, c.str("side"), w, p, it == by_id.end() ? nullptr : it->second);
                if (!x) continue;
                ++excused;
                if (first.empty()) first = x->message;
            }
            if (n + excused >= at_least) {
                auto d = inconclusive(std::to_string(n) + " " + what + ", " + c.str("at_least") + " needed, and " +
                                      std::to_string(excused) + " of the side's work the holds may have cut short: " +
                                      first);
                d.premise_missing = true;  // its scenario did not finish: counts of its frames say nothing either
                return d;
            }
        }
        auto f = fail(std::to_string(n) + " " + what, ">= " + c.str("at_least"), std::to_string(n), {});
        f.count_short = true;  // counts_need_premise
        return f;
    }
    if (c.has("at_most") && n > static_cast<std::size_t>(c.integer("at_most")))
        return fail(std::to_string(n) + " " + what, "<= " + c.str("at_most"), std::to_string(n), {});
    return pass(std::to_string(n) + " " + what);
}

}  // namespace mrct::assertions::checks
