// A case judged: what the run left (completions, counters, memory, the
// engine's own timing in real time) collected into the trace, then the
// case's assertions over it, and the verdict.
#include <algorithm>
#include <map>
#include <tuple>
#include <string_view>
#include <unordered_set>

#include "core/text.h"
#include "run/case_exec.h"

namespace mrct::run::detail {

// ------------------------------------------------------------ results
void case_exec::collect() {
    if (rt_) {
        rt_->sync();
        counters_from_ = s_.now();
    }
    tr_->dut.counters = dut_->counters();
    if (rt_) {
        rt_->sync();
        counters_to_ = s_.now();
    }
    auto& w = wiring_;
    tr_->peer.counters = dut::endpoint_counters(w.peer->stats());
    tr_->dut.conn_error = dut_->in_error(w.dut_conn);
    tr_->peer.conn_error = w.peer->in_error(w.peer_conn);
    tr_->dut.established = tr_->peer.established = true;
    // Expected memory: WRITEs, and SENDs matched to the receives they consume.
    auto expected = steps_.memory_expectations();
    // Only messages that completed successfully at the sender are expected in memory.
    auto ok_at_sender = [&](const std::string& receiver, std::uint64_t wr) {
        const auto& o = receiver == "dut" ? tr_->peer : tr_->dut;
        for (const auto& wc : o.completions)
            if (wc.wr_id == wr) return wc.status == "success";
        return false;
    };
    for (auto& m : expected) {
        if (!ok_at_sender(m.side, m.wr_id)) continue;
        if (m.side == "dut") {
            auto got = dut_->read_mem(w.dut_rkey, m.offset, m.expected().size());
            if (got) m.actual = std::move(*got);
        } else {
            auto mem = w.peer->mr_bytes(w.peer_rkey);
            m.actual.assign(mem.begin() + static_cast<std::ptrdiff_t>(m.offset),
                            mem.begin() + static_cast<std::ptrdiff_t>(m.offset + m.expected().size()));
        }
        tr_->memory.push_back(std::move(m));
    }
    // A fabric between the engine and the DUT that the lab declared
    // (wire_rtt=) adds its round trip to the crossing window (D146).
    if (rt_) tr_->crossing = k_realtime_crossing + dut_->declared_wire_rtt();
    auto& p = tr_->p;
    p = protocol_params(w.dut_cfg);
    p.num_paths = std::min(w.dut_cfg.num_paths, w.peer_cfg.num_paths);
    p.mtu = std::min(w.dut_cfg.mtu, w.peer_cfg.mtu);
    tr_->peer_p = protocol_params(w.peer_cfg);
}

namespace {
// The frames the engine sent the DUT that reached it, sent up to `by`: what
// the DUT's frames_in should count (D148).
std::uint64_t reached_dut_by(const trace::trace& tr, nanos by) {
    std::uint64_t n = 0;
    for (const auto& r : tr.frames) n += r.reached_dut() && r.t <= by;
    return n;
}
}  // namespace

// Real time (D148): the frames the DUT counted sending up to the read may
// still be on their way (the crossing window) or waiting behind a hold of the
// engine, the DUT or their host: the wire runs on until the crossing window,
// the wire's round trip as the DUT's quickest answer measures it (a fabric
// the lab did not declare, D146) and the holds seen since the read have
// passed, at most k_counted_frames_cap. Then the DUT's counters are read
// again: every frame the engine sent before the first read, or before this
// one by that margin, has reached the DUT. Where frames_in still falls short
// of them, the DUT may be reading a backlog its host left it: the engine
// waits longer and reads again, k_recount_waits, and only a count still
// short after them is judged.
void case_exec::await_counted_frames() {
    if (!rt_ || counters_to_ < nanos{0}) return;
    const nanos cap = counters_to_ + k_counted_frames_cap;
    // A fabric the lab did not declare: its round trip, as the DUT's
    // quickest answer measures it (D146), on top of the crossing window.
    wire_rtt_seen_ = dut_->quickest_answer(assertions::quickest_answer(*tr_).value_or(nanos{0}));
    auto wait = [&](nanos from, nanos extra) {
        for (;;) {
            const nanos until = std::min(cap, from + extra + held_since(from));
            if (s_.now() >= until) return true;
            advance(until);
            if (cut_seen()) return false;
        }
    };
    if (!wait(counters_to_, tr_->crossing + wire_rtt_seen_)) return;
    for (std::size_t read = 0;; ++read) {
        drain();
        rt_->sync();
        recount_from_ = s_.now();
        const nanos held_since_first_read = held_since(counters_from_);
        const auto again = dut_->counters();
        frames_in_again_.reset();
        frames_out_again_.reset();
        if (auto it = again.find("frames_in"); it != again.end()) frames_in_again_ = it->second;
        if (auto it = again.find("frames_out"); it != again.end()) frames_out_again_ = it->second;
        rt_->sync();
        if (tr_->end < s_.now()) tr_->end = s_.now();
        // Sent early enough to have reached the DUT by this read.
        recount_cutoff_ = std::max(counters_from_, recount_from_ - tr_->crossing - wire_rtt_seen_ - held_since_first_read);
        if (!frames_in_again_ || read == k_recount_waits.size() || s_.now() >= cap || !dut_->fault().empty()) return;
        if (*frames_in_again_ >= reached_dut_by(*tr_, recount_cutoff_)) return;
        if (!wait(s_.now(), k_recount_waits[read])) return;
    }
}

void count_lab_loss(trace::trace& tr, nanos cutoff) {
    auto& tm = tr.timing;
    tm.sent_before_read = tm.recorded_from_dut = tm.received_for_sure = tm.copies_from_dut = 0;
    tm.lab_lost_to_dut = tm.lab_lost_from_dut = tm.lab_dup_to_dut = tm.lab_dup_from_dut = 0;
    tm.data_copies_from_dut = tm.resent_unseen_from_dut = tm.lab_netted_from_dut = 0;
    tm.dut_frames_in_contradicted = false;
    const std::uint64_t sent = reached_dut_by(tr, core::k_never);
    tm.sent_before_read = reached_dut_by(tr, cutoff);
    // The DUT's frames by their bytes: a copy the lab made is the same
    // bytes again (D149).
    std::unordered_set<std::string_view> distinct, distinct_data;
    // The DUT's data packets by their place in a message and Attempt: sent
    // as a first transmission (RETX clear) at least once, or only resent.
    using packet = std::tuple<std::uint16_t, std::uint32_t, std::uint32_t, unsigned>;  // stream, seq, offset, Attempt
    std::map<packet, bool> first_seen;
    // The DUT's frames recorded before frames_out was read the second time:
    // each left the DUT before that read, so it counted them all.
    std::uint64_t recorded_before_end_read = 0;
    for (const auto& r : tr.frames) {
        if (r.d == trace::dir::from_dut) {
            ++tm.recorded_from_dut;
            recorded_before_end_read += tm.frames_in_read_at < nanos{0} || r.t < tm.frames_in_read_at;
            const std::string_view b(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
            distinct.insert(b);
            if (r.data()) {
                const auto& m = r.f().mrh;
                const bool first = !(m.flags & wire::k_flag_retx);
                // A first transmission again, byte for byte (a resend sent
                // twice is the same bytes twice, RETX set both times: the DUT's own).
                if (first && !distinct_data.insert(b).second) ++tm.data_copies_from_dut;
                bool& clear = first_seen[packet{m.stream_id, m.stream_seq, m.msg_offset, m.attempt}];
                clear = clear || first;
            }
        }
    }
    tm.copies_from_dut = tm.recorded_from_dut - distinct.size();
    tm.received_for_sure = assertions::received_for_sure(tr);
    if (tm.dut_frames_in) {
        if (*tm.dut_frames_in < tm.received_for_sure) tm.dut_frames_in_contradicted = true;
        else if (*tm.dut_frames_in < tm.sent_before_read) tm.lab_lost_to_dut = tm.sent_before_read - *tm.dut_frames_in;
        // More received than the engine ever sent it: the lab made copies
        // (the DUT counts every frame from the engine's addresses, D149).
        if (*tm.dut_frames_in > sent) tm.lab_dup_to_dut = *tm.dut_frames_in - sent;
    }
    if (tm.dut_frames_out) {
        // What the engine's receive path or interfaces dropped says so itself (D144).
        const std::uint64_t seen = tm.recorded_from_dut + tm.frames_lost + tm.if_rx_dropped;
        if (*tm.dut_frames_out > seen) tm.lab_lost_from_dut = *tm.dut_frames_out - seen;
    }
    // More recorded before the second read than the DUT counted sending by
    // then, and as many frames the same bytes as another: the lab's copies
    // (D149). Only copies count, so frames of an earlier case still on their
    // way (not counted by this case's DUT) are not taken for copies; nor do
    // frames recorded after the read was asked for (a DUT still sending, such
    // as one answering a query every CTRL interval, may have sent them after
    // it counted).
    if (tm.dut_frames_out_end && recorded_before_end_read > *tm.dut_frames_out_end)
        tm.lab_dup_from_dut = std::min(recorded_before_end_read - *tm.dut_frames_out_end, tm.copies_from_dut);
    // A loss and a copy of the DUT's frames net out in frames_out (D149's
    // limit). Each leaves its trace in the DUT's data (D151): a first
    // transmission recorded twice, byte for byte (a DUT's resend sets RETX,
    // MR-SACK-3), and a data packet recorded only as a resend, its first
    // transmission never received (beyond what the engine's own drops
    // explain). Where the counts show no
    // surplus, as many of each as the other are the lab's doing. A DUT that
    // sends a packet twice unprompted, with no loss, still fails
    // resend_identity: nothing here excuses it.
    std::uint64_t unseen = 0;
    for (const auto& [_, clear] : first_seen) unseen += !clear;
    const std::uint64_t explained = tm.frames_lost + tm.if_rx_dropped;
    tm.resent_unseen_from_dut = unseen > explained ? unseen - explained : 0;
    if (tm.dut_frames_out_end && !tm.lab_dup_from_dut)
        tm.lab_netted_from_dut = std::min(tm.data_copies_from_dut, tm.resent_unseen_from_dut);
}

std::string lab_loss(const trace::timing_figures& tm) {
    if (!tm.realtime) return {};
    std::vector<std::string> what;
    if (tm.lab_lost_to_dut)
        what.push_back("the DUT counted " + std::to_string(*tm.dut_frames_in) + " frames received (frames_in) of the " +
                       std::to_string(tm.sent_before_read) + " the engine sent it in time to be counted");
    if (tm.lab_lost_from_dut)
        what.push_back("it counted " + std::to_string(*tm.dut_frames_out) + " frames sent (frames_out) where the engine received " +
                       std::to_string(tm.recorded_from_dut));
    std::vector<std::string> copies;
    if (tm.lab_dup_to_dut)
        copies.push_back("the DUT counted " + std::to_string(*tm.dut_frames_in) + " frames received (frames_in), " +
                         std::to_string(tm.lab_dup_to_dut) + " more than the engine sent it");
    if (tm.lab_dup_from_dut)
        copies.push_back("the engine received " + std::to_string(tm.recorded_from_dut) + " frames from the DUT where it counted " +
                         std::to_string(*tm.dut_frames_out_end) + " sent (frames_out), " + std::to_string(tm.copies_from_dut) +
                         " of them the same bytes as another");
    auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v) out += (out.empty() ? "" : ", and ") + x;
        return out;
    };
    std::string out;
    if (!what.empty())
        out = "the lab lost frames between the engine and the DUT where no interface of the engine's counts them: " + join(what) +
              " (D148)";
    if (!copies.empty())
        out += std::string(out.empty() ? "" : "; ") + "the lab duplicated frames between the engine and the DUT: " + join(copies) +
               " (D149)";
    if (tm.lab_netted_from_dut)
        out += std::string(out.empty() ? "" : "; ") +
               "the lab duplicated frames and lost others, the two netting out in the DUT's frames_out: " +
               std::to_string(tm.data_copies_from_dut) +
               " of the DUT's first transmissions (RETX clear) reached the engine twice, byte for byte, and " +
               std::to_string(tm.resent_unseen_from_dut) +
               " only as resends (RETX set), their first transmission never received (D151)";
    std::vector<std::string> order;
    if (tm.reordered_from_dut)
        order.push_back(std::to_string(tm.reordered_from_dut) +
                        " of the DUT's new data packets reached the engine after a later one of the same path and source port");
    if (tm.reordered_to_dut)
        order.push_back(std::to_string(tm.reordered_to_dut) +
                        " of the engine's data packets reached the DUT after a later one of the same path and source port, as "
                        "its ACKs show (left out of the later one's ACK, then acknowledged with nothing below them sent again, "
                        "each sent once)");
    if (!order.empty())
        out += std::string(out.empty() ? "" : "; ") + "the lab reordered frames within a flow: " + join(order) +
               "; the trace's order is not the order frames were sent or seen (D150)";
    return out;
}

// Real time: how well the engine kept time (trace::timing_figures, docs/timing.md).
void case_exec::note_timing() {
    if (!rt_) return;
    auto& tm = tr_->timing;
    tm.realtime = true;
    tm.rx_stamped = dut_->rx_stamped();
    tm.wall_zero_unix_ns = std::chrono::duration_cast<nanos>(rt_->system_time_of(nanos{0}).time_since_epoch()).count();
    tm.frames_lost = dut_->frames_lost();
    const auto drops = dut_->interface_drops();
    tm.if_rx_dropped = drops.rx;
    tm.if_tx_dropped = drops.tx;
    tm.if_names = drops.ifaces;
    tm.wire_rtt_declared = dut_->declared_wire_rtt();
    tm.wire_in_order = dut_->declared_in_order();
    tm.answer_min = assertions::quickest_answer(*tr_).value_or(nanos{0});
    tm.reordered_from_dut = assertions::reordered_from_dut(*tr_);
    tm.reordered_to_dut = assertions::reordered_to_dut(*tr_);
    tm.answer_min_run = dut_->quickest_answer(tm.answer_min);
    const auto late = rt_->lateness_since();
    tm.events = late.events;
    tm.event_late_max = late.max;
    tm.event_late_p99 = late.p99;
    tm.step_late_max = late_.step_late_max;
    tm.rx_delay_max = late_.rx_delay_max;
    tm.turn_max = rt_->longest_turn();
    const auto calls = dut_->agent_call_times();
    tm.agent_calls = calls.calls;
    tm.agent_call_max = calls.max;
    tm.agent_call_median = calls.median;
    tm.poll_rtt_max = calls.poll_max;
    // An agent's own uncertainty of its stamps (time_err_ns) is part of it.
    for (const auto& wc : tr_->dut.completions) tm.poll_rtt_max = std::max(tm.poll_rtt_max, wc.t_err);
    tm.late = engine_spans();
    tm.counters_read_from = counters_from_;
    tm.counters_read_to = counters_to_;
    tm.frames_in_read_at = recount_from_;
    // A poll answered later than usual: the agent, and with it the DUT it
    // serves on this host, was held for the difference (D59).
    if (!calls.polls.empty()) {
        std::vector<nanos> rtts;
        for (const auto& [_, r] : calls.polls) rtts.push_back(r);
        std::nth_element(rtts.begin(), rtts.begin() + static_cast<std::ptrdiff_t>(rtts.size() / 2), rtts.end());
        const nanos usual = rtts[rtts.size() / 2];
        for (const auto& [sent, r] : calls.polls)
            if (r - usual > trace::timing_figures::k_late_floor) tm.late.push_back({sent, r - usual});
    }
    // Where the DUT may share the host, every other call counts too: a
    // software DUT serving a 1 MiB post on its data path's thread reads no
    // frame meanwhile (mrct-refnic sent on an RNR-paused tag 1.2-4.5 ms
    // after the RNR left while it served RNR-050's posts beside stress-ng,
    // with no hold of the host the probe saw). Each may have held the DUT for
    // its round trip less the quickest call's (the wire and the least work
    // any call took), not less the median poll's: a DUT that reads its clock
    // when a call arrives and is held before it sends what the call asked for
    // is behind by all of it (D97: mrct-refnic's CONNECT left 740 us after
    // its repeat timer started, so the repeat came 60 us later on the wire;
    // RNR-014 beside stress-ng without pid=, a connect call of 813 us against
    // a median poll of 96 us).
    if (dut_->shares_host() && !calls.others.empty()) {
        nanos quickest = nanos::max();
        for (const auto* v : {&calls.polls, &calls.others})
            for (const auto& [_, r] : *v) quickest = std::min(quickest, r);
        for (const auto& [sent, r] : calls.others)
            if (r - quickest > trace::timing_figures::k_late_floor) tm.late.push_back({sent, r - quickest});
    }
    // A sleeping thread the host held: the DUT beside the engine was held too.
    if (probe_) {
        tm.host_probed = true;
        tm.host_wakeups = probe_->wakeups();
        tm.host_cpus = static_cast<unsigned>(probe_->cpus().size());
        tm.dut_waits_read = probe_->dut_sampled();
        tm.host_pressure_read = probe_->pressure_sampled();
        for (const auto& h : probe_->holds()) {
            const trace::timing_figures::late_span s{rt_->sim_time_of(h.due), h.late, h.err};
            tm.late.push_back(s);
            if (h.cpu == sim::host_probe::k_dut_wait) {
                tm.dut_waits.push_back(s);
                tm.dut_wait_max = std::max(tm.dut_wait_max, h.late);
            } else if (h.cpu == sim::host_probe::k_host_pressure) {
                tm.dut_waits.push_back(s);
                tm.pressure_wait_max = std::max(tm.pressure_wait_max, h.late);
            } else {
                tm.host_hold_max = std::max(tm.host_hold_max, h.late);
            }
        }
        probe_.reset();  // the traffic is over: no more wake-ups while the checks run
    }
    std::sort(tm.late.begin(), tm.late.end(), [](const auto& a, const auto& b) { return a.due < b.due; });
    tm.index_holds();
    // The DUT's frame counts against the trace (D148): its frames_out at the
    // first read, its frames_in at the last (await_counted_frames). A frame
    // sent to the DUT is taken as counted by the last read if it left before
    // the first, or before the last by the crossing window, the wire's round
    // trip and the holds since the first.
    if (counters_from_ >= nanos{0}) {
        tm.dut_frames_in = frames_in_again_;
        tm.dut_frames_out_end = frames_out_again_;
        const auto& c = tr_->dut.counters;
        if (auto it = c.find("frames_out"); it != c.end()) tm.dut_frames_out = it->second;
        count_lab_loss(*tr_, recount_from_ >= nanos{0} ? recount_cutoff_ : counters_from_);
    }
}

static_assert(sim::host_probe::k_period == trace::timing_figures::k_dut_wait_resolution,
              "the DUT's waits are known to within the probe's period");

std::vector<trace::timing_figures::late_span> engine_spans(const lateness& late, const sim::realtime_driver& rt) {
    auto spans = late.spans;
    for (const auto& [due, l] : rt.late_events(trace::timing_figures::k_late_floor)) spans.push_back({due, l});
    for (const auto& [began, length] : rt.late_turns(trace::timing_figures::k_late_floor)) spans.push_back({began, length});
    return spans;
}

std::vector<trace::timing_figures::late_span> case_exec::engine_spans() const { return detail::engine_spans(late_, *rt_); }

nanos case_exec::held_since(nanos from) const {
    auto spans = engine_spans();
    if (probe_)
        for (const auto& h : probe_->holds()) spans.push_back({rt_->sim_time_of(h.due), h.late});
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.due < b.due; });
    return trace::timing_figures::covered(spans, from, s_.now());
}

// What each side sent of the handshake, as evidence: CTRL frames by type, and
// how long the first answer took after the first request.
case_exec::handshake_evidence case_exec::handshake_seen() const {
    std::map<std::string, unsigned> from_dut, to_dut;
    handshake_evidence h;
    std::optional<nanos> first_out, first_in;
    std::map<std::string, unsigned> undecoded;  // the DUT's frames that did not decode, by why
    for (const auto& rec : tr_->frames) {
        if (rec.d == trace::dir::from_dut && !rec.ok() && rec.dec.dropped)
            ++undecoded[std::string(wire::drop_reason_name(rec.dec.dropped->reason))];
        if (!rec.ok() || rec.f().bth.opcode != static_cast<std::uint8_t>(wire::opcode::ctrl)) continue;
        const bool out = rec.d == trace::dir::from_dut;
        ++(out ? from_dut : to_dut)[std::string(wire::ctrl_type_name(rec.f().ctrlh.type))];
        h.dropped += rec.dropped ? 1 : 0;
        h.frames.push_back(rec.index);
        if (!rec.dropped) (out ? first_out : first_in) = (out ? first_out : first_in).value_or(rec.t);
    }
    auto list = [](const std::map<std::string, unsigned>& m) {
        std::string s;
        for (const auto& [name, n] : m) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + name;
        return s.empty() ? std::string("no CTRL frame") : s;
    };
    h.text = "from the DUT: " + list(from_dut) + "; to the DUT: " + list(to_dut);
    if (!undecoded.empty()) {
        h.text += "; frames from the DUT that did not decode: " + list(undecoded);
        // Over agent+udp the header is rebuilt as a socket implies (D42).
        if (undecoded.count("bad_icrc"))
            h.text += " (a UDP socket does not show the IP header: the ICRC is checked over IPv4 DF=1 and "
                      "Identification 0 (D42), so a DUT that sends another, MR-HDR-6, fails it there; agent+pcap "
                      "decodes the header it sent)";
    }
    if (first_out && first_in && *first_in > *first_out)
        h.text += " (the first answer " + assertions::fmt_time(*first_in - *first_out) + " after the first request)";
    return h;
}

void case_exec::fail_handshake(case_result& r, const std::string& why) {
    const auto h = handshake_seen();
    assertion_result ar;
    ar.o.frames = h.frames;
    ar.name = "handshake";
    ar.clauses = c_.clauses;
    ar.at = p_.handshake.front().at;
    ar.o.v = verdict::fail;
    ar.o.expected = "the connection opens despite the handshake's filters";
    ar.o.actual = h.text + " (" + std::to_string(h.dropped) + " dropped by the filters)";
    ar.o.message = why + " with the handshake's filters in force; " + ar.o.actual;
    r.v = verdict::fail;
    // Real time: the CONNECTs ran out while a side was held as long as their
    // retries last (setup_held, D113): its peer had no chance to answer in
    // time. CONN-007 with the engine at 5 % of a CPU (D139): the DUT's 7
    // CONNECTs went out in 6.6 ms, the engine was held 91 ms and answered all
    // 7 at once, after the DUT had given up.
    if (rt_)
        if (auto held = detail::setup_held(tr_->timing, connect_from_, s_.now(), protocol_params(wiring_.dut_cfg),
                                   protocol_params(wiring_.peer_cfg)))
            doubt_handshake(ar, r, *held);
    r.asserts.push_back(ar);
    r.reason = ar.name + ": " + ar.o.message;
}

void doubt_handshake(assertion_result& ar, case_result& r, const std::string& held) {
    ar.o.v = verdict::inconclusive;
    ar.o.timing_doubt = true;
    ar.o.message = held + "; this check needs the CONNECTs answered while their sender still repeats them; it would "
                          "have said fail: " + ar.o.message;
    r.v = verdict::inconclusive;
}

// Real time: where a check found the case's premise did not arise (an RNR
// the peer never had to send: the DUT, held by its host, sent its SEND after
// the receive was posted), a frame_count of the scenario's frames falling
// short says nothing of the DUT either (D111).
void counts_need_premise(std::vector<assertion_result>& asserts) {
    std::string why;
    for (const auto& a : asserts)
        if (a.o.premise_missing) {
            why = a.name + ": " + a.o.message;
            break;
        }
    if (why.empty()) return;
    for (auto& a : asserts)
        if (a.o.v == verdict::fail && a.o.count_short) {
            a.o.message = "the case's premise did not arise (" + why + "); a count of its frames says nothing; it would " +
                          "have said fail: " + a.o.message;
            a.o.v = verdict::inconclusive;
            a.o.premise_missing = true;
        }
}

// Real time: a CONNECT is repeated every rto_initial up to the retry limit
// (§4); a side held that long while they went out gave its peer no chance
// to answer (GR-052 with mrct-refnic at 5 % of a CPU: each CONNECT's 7 x 1
// ms retries against 95 ms holds). The longer of the two sides' spans is
// needed, in holds that meet the window the CONNECTs took from the start of
// the connect, twice that span (the first may leave late): not anywhere in
// the 2 s, where the short holds of a busy host add up and would excuse a
// DUT that never answers.
// The DUT's own waits for a CPU in that window count in all (D67): each
// one delayed its CONNECTs, or its answers, by its length.
std::optional<std::string> setup_held(const trace::timing_figures& tm, nanos from, nanos to, const trace::params& dut,
                                      const trace::params& peer) {
    const nanos need = std::max(dut.ctrl_retries_span(), peer.ctrl_retries_span());
    const auto held = tm.excuse_between(from, std::min(to, from + 2 * need));
    if (!tm.realtime || held.most() <= nanos{0} || held.most() < need) return std::nullopt;
    const std::string least = "as long as a CONNECT's retries last at the least (" + assertions::fmt_time(need) + ")";
    if (held.dut_waits > held.holds) return assertions::waited_words(tm, held.dut_waits) + "while the CONNECTs went out, " + least;
    return "the engine, the DUT or their host was held " + assertions::fmt_time(held.holds) + " while the CONNECTs went out " +
           "(two longest holds), " + least;
}

std::string interface_loss(const trace::timing_figures& tm) {
    if (!tm.realtime || (!tm.if_rx_dropped && !tm.if_tx_dropped)) return {};
    std::string what;
    if (tm.if_rx_dropped) what = std::to_string(tm.if_rx_dropped) + " received";
    if (tm.if_tx_dropped) what += (what.empty() ? "" : " and ") + std::to_string(tm.if_tx_dropped) + " outgoing";
    return "the engine's interface " + tm.if_names + " dropped " + what +
           " frames during the case, below any socket (rx_dropped, rx_missed_errors, rx_fifo_errors, rx_over_errors; "
           "tx_dropped, tx_fifo_errors): frames the DUT sent may be missing from the record, or frames sent to it may "
           "never have reached it";
}

void settle_setup(case_result& r, bool every_attempt_held, unsigned attempts) {
    if (r.v != verdict::error || !every_attempt_held) return;
    r.v = verdict::inconclusive;
    r.reason = "the connection could not be set up in " + std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts") +
               ", each while the DUT or the engine was held as long as a CONNECT's retries last; nothing was " +
               "judged (D113): " + r.reason;
}

// A hung or dead agent waits for no CPU: a stopped process is not runnable,
// a spinning one runs. One whose threads waited for a CPU at least half the
// call's timeout (the kernel's accounting, pid=) was held by its host or its
// CPU quota (mrct-refnic at 5 % of a CPU: register_mr for RNR-015's regions
// took longer than 2 s). Without pid= nothing says so: the host's pressure
// bounds every task's waits, not the DUT's.
std::optional<std::string> agent_call_held(const trace::timing_figures& tm, nanos sent, nanos waited) {
    if (!tm.realtime || !tm.dut_waits_read || waited <= nanos{0}) return std::nullopt;
    const nanos w = tm.dut_waited_between(sent, sent + waited);
    if (2 * w < waited) return std::nullopt;
    return "the DUT's own threads waited " + assertions::fmt_time(w) + " of its " + assertions::fmt_time(waited) +
           " for a CPU (pid=)";
}

std::optional<std::string> refusal_held(const trace::timing_figures& tm, nanos from, nanos to, const trace::params& dut) {
    if (!tm.realtime) return std::nullopt;
    const nanos need = std::min(dut.data_retries_span(), dut.ctrl_retries_span());
    const auto held = tm.excuse_between(from, to);
    if (need <= nanos{0} || held.most() < need) return std::nullopt;
    const std::string who = held.dut_waits > held.holds
                                ? assertions::waited_words(tm, held.dut_waits) + "before it"
                                : "the engine, the DUT or their host was held " + assertions::fmt_time(held.holds) +
                                      " before it (two longest holds)";
    return who + ", as long as the DUT's retries last at the least (" + assertions::fmt_time(need) +
           "): its connection may have ended as the retry limit says";
}

void case_exec::refused_held(case_result& r) const {
    if (!rt_ || r.v != verdict::error || !dut_->refused_call()) return;
    const auto held = refusal_held(tr_->timing, connect_from_, s_.now(), protocol_params(wiring_.dut_cfg));
    if (!held) return;
    r.v = verdict::inconclusive;
    r.reason = "the DUT refused an operation after " + *held + "; nothing was judged (D136): " + r.reason;
}

void case_exec::agent_held(case_result& r) const {
    if (!rt_ || r.v != verdict::error) return;
    const auto u = dut_->unanswered_call();
    if (!u) return;
    const auto held = agent_call_held(tr_->timing, u->sent, u->waited);
    if (!held) return;
    r.v = verdict::inconclusive;
    r.reason = "a DUT too slow for its agent's timeout: an agent call got no response in time while " + *held +
               "; nothing was judged (D114; a DUT this slow needs a longer timeout=): " + r.reason;
}

// The case's own premise (D101): every fault it wrote with a count acted on
// that many frames, every step ran, and every impairment that acts on
// chosen frames acted on one. When one did not (a DUT that sent
// fewer matching frames than the case expected: a slow host spraying fewer
// packets on a path, a trigger frame that never came), the scenario the
// checks judge did not arise: their passes say nothing, and the case is
// inconclusive with what fell short. A failure still stands: it is the
// DUT's frames against the check.
void case_exec::note_premise(case_result& r) {
    std::vector<std::string> short_of;
    plan::loc at = c_.at;
    for (const auto& f : tap_.filters().shortfalls()) {
        const std::string by = f.step >= 0 ? "step " + std::to_string(f.step) : f.step == -2 ? "the handshake" : "the setup";
        short_of.push_back(by + "'s " + f.what + " acted on " + std::to_string(f.acted) + " of " + std::to_string(f.wanted));
        if (short_of.size() == 1) at = f.at;
    }
    for (auto& s : steps_.steps_not_run()) short_of.push_back(s + " did not run");
    // An impairment that acts on chosen frames (loss, duplicate, corrupt,
    // ecn_mark, reorder, match_drop, blackhole) must have acted on one: a
    // case "under 2 % loss" that lost nothing tested no loss. A delay acts
    // on every frame, and a queue only when its traffic asks (a case that
    // needs its marks says so with a frame_count premise, D75).
    for (std::size_t i = 0; i < p_.impair.size(); ++i) {
        const auto& imp = p_.impair[i];
        if (imp.spec.kind == "delay" || imp.spec.kind == "queue") continue;
        const auto c = wiring_.impairment_counters(i);
        const auto acted = c.dropped + c.duplicated + c.corrupted + c.marked + (imp.spec.kind == "reorder" ? c.delayed : 0);
        if (acted) continue;
        short_of.push_back("topology.impair " + imp.spec.kind + " (" +
                           (imp.to_peer && imp.to_dut ? "both directions" : imp.to_peer ? "to_peer" : "to_dut") +
                           (imp.path ? ", path " + std::to_string(*imp.path) : std::string()) +
                           (imp.spec.params.empty() ? "" : ", " + fields_text(imp.spec.params)) + ") acted on none of the " +
                           std::to_string(c.in) + " frames it saw");
        if (short_of.size() == 1) at = imp.at;
    }
    if (short_of.empty()) return;
    assertion_result ar;
    ar.name = "premise";
    ar.clauses = c_.clauses;
    ar.at = at;
    const std::string actual = core::join(short_of, "; ");
    ar.o = assertions::premise_not_met(actual);
    ar.o.expected = "every fault the case writes acts: each filter with a count on that many frames, each impairment "
                    "on at least one, and every step runs";
    ar.o.actual = actual;
    // On a wire how a DUT sprays and when it resends follow the RTTs it
    // measures, which the host's holds change: another attempt may meet the
    // premise (the case runs again under --timing-retries, as window_limit's).
    ar.o.timing_doubt = tr_->timing.realtime;
    r.asserts.push_back(std::move(ar));
}

void case_exec::evaluate(case_result& r) {
    r.v = verdict::pass;
    for (const auto& e : c_.expect) {
        const auto* def = assertions::find(e.name);
        assertion_result ar;
        ar.name = e.name;
        ar.at = e.at;
        if (!def) {
            ar.o = {verdict::error, "unknown assertion", {}, {}, {}, {}};
        } else {
            ar.clauses = def->clauses;
            std::map<std::string, std::string> args;
            for (const auto& [k, v] : e.a) args[k] = v.text;
            ar.o = assertions::evaluate(*def, *tr_, args);
        }
        r.asserts.push_back(ar);
    }
    note_premise(r);
    if (tr_->timing.realtime) counts_need_premise(r.asserts);
    // Real time: frames of the DUT the engine's receive path dropped unread
    // (a full socket or capture buffer on a loaded host) are missing from the
    // trace: no verdict on it stands.
    if (tr_->timing.realtime && tr_->timing.frames_lost)
        for (auto& a : r.asserts)
            on_incomplete_record(a, "the engine's receive path dropped " + std::to_string(tr_->timing.frames_lost) +
                                        " of the DUT's frames unread (a full socket or capture buffer)");
    // Below the sockets: the engine's interfaces' own drops (a veth's
    // backlog, a NIC's receive ring; a transmit queue). Not told apart from
    // other traffic on them, so any at all voids the record (D144).
    if (const auto lost = interface_loss(tr_->timing); !lost.empty())
        for (auto& a : r.asserts) on_incomplete_record(a, lost);
    // And between them, where nothing of the engine's counts it: the DUT's
    // own counters show it (D148).
    if (const auto lost = lab_loss(tr_->timing); !lost.empty())
        for (auto& a : r.asserts) on_incomplete_record(a, lost);
    // Real time: a case whose scenario holds only if its steps ran on time
    // says how late they may run (limits.step_late). Later, the rule may not
    // have bound (RNR-013's RNR_QUERY after the held message arrived): no pass
    // stands. A failure still does: it is the DUT's frames against the check.
    if (const auto allowed_late = p_.limits.step_late; tr_->timing.realtime && allowed_late) {
        const nanos allowed = *allowed_late;
        if (tr_->timing.step_late_max > allowed)
            for (auto& a : r.asserts)
                if (a.o.v == verdict::pass) {
                    a.o.v = verdict::inconclusive;
                    a.o.timing_doubt = true;
                    a.o.message = "plan steps ran up to " + assertions::fmt_time(tr_->timing.step_late_max) +
                                  " late; this case's scenario needs them within " + assertions::fmt_time(allowed) +
                                  " (limits.step_late); it would have said pass: " + a.o.message;
                }
    }
    settle_verdict(r);
}

void settle_verdict(case_result& r) {
    auto rank = [](verdict v) {
        switch (v) {
        case verdict::error: return 4;
        case verdict::fail: return 3;
        case verdict::inconclusive: return 2;
        default: return 0;
        }
    };
    r.v = verdict::pass;
    r.reason.clear();
    for (const auto& a : r.asserts)
        if (rank(a.o.v) > rank(r.v)) {
            r.v = a.o.v;
            r.reason = a.name + ": " + a.o.message;
        }
}

}  // namespace mrct::run::detail

namespace mrct::run {

namespace {
// A verdict that rests on when frames reached the DUT or left it: a timing
// check's (a timing need, or one timed inside the check), or a count that
// falls short where the case's scenario may not have arisen (rnr_sent's
// rejections: RNR-010's SEND, held in a fabric, reached the DUT after its
// receive was posted). Not a timing-free one.
bool wire_timed(const assertion_result& a) {
    if (a.o.timing_free) return false;
    const auto* def = assertions::find(a.name);
    return a.o.count_short || (def && def->timed());
}
}  // namespace

bool wire_may_cross(const case_result& r) {
    if (!r.tr || !r.tr->timing.realtime || r.v != verdict::fail) return false;
    const auto known = r.tr->timing.answer_min_run;
    if (known > core::nanos{0} && known <= r.tr->crossing) return false;  // a quick answer: the window covers the wire
    for (const auto& a : r.asserts)
        if (a.o.v == verdict::fail && wire_timed(a)) return true;
    return false;
}

bool judge_wire(case_result& r, core::nanos run_quickest) {
    if (!r.tr || !r.tr->timing.realtime || r.v != verdict::fail) return false;
    core::nanos quickest = r.tr->timing.answer_min_run;
    if (run_quickest > core::nanos{0} && (quickest == core::nanos{0} || run_quickest < quickest)) quickest = run_quickest;
    bool changed = false;
    for (auto& a : r.asserts) {
        if (a.o.v != verdict::fail || !wire_timed(a)) continue;
        a.o = assertions::beyond_crossing(std::move(a.o), *r.tr, quickest);
        changed |= a.o.v != verdict::fail;
    }
    if (changed) detail::settle_verdict(r);
    return changed;
}

// D152: what a run has seen of its lab, and the failures a copy may explain.
void lab_seen::note(const case_result& r) {
    if (!r.tr || !r.tr->timing.realtime) return;
    const auto& tm = r.tr->timing;
    if (lost_in.empty() && (tm.lab_lost_to_dut || tm.lab_lost_from_dut || tm.lab_netted_from_dut)) lost_in = r.id;
    if (copied_in.empty() && (tm.lab_dup_to_dut || tm.lab_dup_from_dut || tm.lab_netted_from_dut)) copied_in = r.id;
    if (reordered_in.empty() && (tm.reordered_from_dut || tm.reordered_to_dut)) reordered_in = r.id;
}

bool may_reorder(const case_result& r) {
    if (!r.tr || !r.tr->timing.realtime || r.v != verdict::fail) return false;
    return std::any_of(r.asserts.begin(), r.asserts.end(),
                       [](const auto& a) { return a.o.v == verdict::fail && a.o.cross_port_order; });
}

bool judge_order(case_result& r, const lab_seen& lab) {
    if (lab.reordered_in.empty() || !may_reorder(r)) return false;
    const std::string why = "this run's lab reordered frames within a flow (first shown by " + lab.reordered_in +
                            ", D150), so it may swap two of the DUT's frames from different source ports too: the "
                            "order this failure rests on may be the lab's (D158)";
    bool changed = false;
    for (auto& a : r.asserts)
        if (a.o.v == verdict::fail && a.o.cross_port_order) {
            on_incomplete_record(a, why);
            changed = true;
        }
    if (changed) detail::settle_verdict(r);
    return changed;
}

bool may_net_out(const case_result& r) {
    if (!r.tr || !r.tr->timing.realtime || r.v != verdict::fail) return false;
    const auto& tm = r.tr->timing;
    return tm.dut_frames_out_end && tm.copies_from_dut > tm.lab_dup_from_dut;
}

bool judge_netting(case_result& r, const lab_seen& lab) {
    if (!lab.both() || !may_net_out(r)) return false;
    const auto& tm = r.tr->timing;
    const std::string why =
        std::to_string(tm.copies_from_dut) + " of the " + std::to_string(tm.recorded_from_dut) +
        " frames the engine received from the DUT are the same bytes as an earlier one, and the DUT counted " +
        std::to_string(*tm.dut_frames_out_end) +
        " sent (frames_out): behind this run's lab, which lost frames (first shown by " + lab.lost_in +
        ") and copied them (first shown by " + lab.copied_in +
        "), a copy netting out a loss cannot be told from the DUT's own repeat (D152)";
    bool changed = false;
    for (auto& a : r.asserts)
        if (a.o.v == verdict::fail) {
            on_incomplete_record(a, why);
            changed = true;
        }
    if (changed) detail::settle_verdict(r);
    return changed;
}

}  // namespace mrct::run
