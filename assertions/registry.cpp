// The built-in assertions, in one explicit list (no static registration).
#include "assertions/assertion.h"
#include "assertions/checks.h"
#include "assertions/sender_view.h"
#include "wire/rnr_timer.h"

namespace mrct::assertions {

using T = param_type;

namespace {

// A timing need given by a duration parameter (docs/timing.md): the engine must
// keep time to within that duration, or the check cannot judge.
// `divisor`: the need is that part of the duration (a window's dynamics are
// disturbed by a stall much shorter than the window). `fails_only`: only a
// failure can come from the engine's lateness (timing_need::fails_only).
std::function<std::optional<timing_need>(const context&)> need_of(std::string param, std::string what,
                                                                 bool completions = false, int divisor = 1,
                                                                 bool fails_only = false) {
    return [param, what, completions, divisor, fails_only](const context& c) -> std::optional<timing_need> {
        if (!c.has(param)) return std::nullopt;
        auto d = c.duration(param);
        if (!d) return std::nullopt;
        return timing_need{*d / divisor, what + " (" + (divisor > 1 ? param + " / " + std::to_string(divisor) : param) + ")",
                           completions, fails_only};
    };
}

// rto_timing: the tolerance it judged an expiry by, rel x that expiry's RTO
// + abs, the smallest of the run's (an expiry at a 25 ms RTO is judged to
// 2.5 ms, not to rto_min's 0.1 ms x rel: the engine need not keep time
// finer than the verdict it supports). With no expiry, nothing to judge.
std::optional<timing_need> rto_tolerance(const context& c) {
    auto tol = checks::rto_timing_tolerance(c);
    if (!tol) return std::nullopt;
    return timing_need{*tol, "the smallest expiry's tolerance, rel x its RTO + abs"};
}

// no_go_back_n: a resend of a covered PPSN crossed the ACK on its way only if
// the host held the DUT (sharing it with the engine) about as long as the
// time between the two, less the crossing window (D50). Failures only.
std::optional<timing_need> crossing_need(const context& c) {
    return timing_need{c.tr().crossing, "the crossing window", false, true, true};
}

// no_cross_path_cut: its failure is that an unmarked path stayed below the
// inflight through the whole marked span (seconds on a wire, 64 times
// slower). Holds, or the DUT's waits for a CPU in all, explain that only
// where they left the DUT less than `settle` of the span to fill the window
// (D132: the DUT's waits on a quiet wire, 2-3 % of the span, in all against
// `settle` alone, doubted every failure of shared-cwnd there). Failures
// only: a path that reached the inflight shows its window, held or not.
std::optional<timing_need> cut_need(const context& c) {
    auto d = c.duration("settle");
    if (!d) return std::nullopt;
    return timing_need{*d, "the time before the check (settle)", false, true, true};
}

// spraying: a path's share follows its ACK clock; where the engine or its host
// was held as long as rto_min, a path may have timed out and shrunk its window
// for the host's sake. Failures only; a path that carried nothing fails
// whatever the timing (the check marks that timing-free).
std::optional<timing_need> spray_need(const context& c) {
    return timing_need{c.tr().p.rto_min, "rto_min: a path held that long may time out and carry less", false, true};
}

// rnr_pause: a failure is a packet of the tag after the RNR; where the host
// held the engine or the agent (and with them the DUT) longer than grace and
// the crossing window between the two, the DUT may not have had the RNR yet.
// Failures only. Deliberately more lenient than no_go_back_n's rule (a hold as
// long as the whole span): under stress-ng the DUT's own lag is only partly
// visible (D59). rnr-ignores-pause, which sends through the pause, is still
// caught on the wire: RNR-015 failed it 7 of 10 times on a quiet veth, the
// other 3 doubted by a 1.5-2.3 ms hold right after the RNR (timing retries
// and the scaled RNR cases take those).
std::optional<timing_need> pause_need(const context& c) {
    auto g = c.duration("grace");
    if (!g) return std::nullopt;
    return timing_need{*g + c.tr().crossing, "grace and the crossing window", false, true};
}

// rnr_resume: only a late resume can come from the host, and only by holds as
// long as its lateness (the failure's excused_by); other failures (never
// resumed, no RNR_RESEND) stand unless the engine ran later than the
// shortest RNR time.
std::optional<timing_need> resume_need(const context& c) {
    std::optional<core::nanos> shortest;
    for (const auto& r : c.tr().frames)
        if (r.reached_dut() && r.is(wire::opcode::rnr)) {
            const auto t = wire::rnr_timer_duration(r.f().rnrh.timer_code);
            if (!shortest || t < *shortest) shortest = t;
        }
    if (!shortest) return std::nullopt;
    return timing_need{*shortest, "the shortest RNR time", false, true};
}

// other_tags_flow: a pause in which too little of other tags left is doubted
// only where the engine, its host or the DUT was held over half the pause in
// all (the failure's excused_by); a pass rests on the DUT's own frames.
std::optional<timing_need> flow_need(const context&) {
    return timing_need{core::nanos{0}, "holds over half the pause in all", false, true};
}

// window_cut_on_ece: in the settle time the DUT ends a window under marks
// (about one round trip) and drains what it had in flight (another): the
// check needs the rest of the settle time free of holds of the engine or the
// DUT beside it, counted in all (a drain stretches by each hold).
std::optional<timing_need> drain_need(const context& c) {
    auto settle = c.duration("settle");
    if (!settle) return std::nullopt;
    const auto p = static_cast<unsigned>(c.integer("path"));
    core::nanos rtt{0};
    if (auto it = c.sender().paths.find(p); it != c.sender().paths.end())
        for (const auto& s : it->second.rtt_samples)
            if (rtt == core::nanos{0} || s.second < rtt) rtt = s.second;
    timing_need n{std::max(*settle - 2 * rtt, *settle / 4),
                  "the settle time less two of the path's round trips (at least a quarter of it)"};
    n.cumulative = true;
    return n;
}

}  // namespace

const std::vector<assertion_def>& builtin() {
    namespace k = checks;
    static const std::vector<assertion_def> k_all = {
        {"wire_format", {"MR-HDR-1", "MR-HDR-4", "MR-HDR-6", "MR-CC-5"},
         "Every DUT frame decodes; dport 4791, TVer 0, Ver 1, reserved bits 0; data ECT(0); IPv4 DF=1, ID=0; no PAUSE frames.",
         {}, k::wire_format},
        {"distinct_entropy", {"MR-PATH-1"},
         "Active paths use distinct UDP source ports in 0xC000-0xFFFF.", {}, k::distinct_entropy},
        {"epoch_on_port_change", {"MR-PATH-2"},
         "A port change increments PathEpoch (mod 16) and the path's PPSN sequence continues.", {}, k::epoch_on_port_change},
        {"negotiated", {"MR-CONN-1"},
         "The DUT uses the agreed NumPaths and MTU, and starts each path at the PPSN it announced.",
         {{"paths", T::integer, "", "agreed NumPaths"}, {"mtu", T::integer, "", "agreed MTU"}}, k::negotiated},
        {"fast_retransmit", {"MR-SACK-3"},
         "Each loss (§5 term) is resent once on its path with its PPSN and RETX, without waiting for a timer.",
         {{"within", T::duration, "rto_min / 2", "longest delay from the ACK showing the loss to the resend"}},
         k::fast_retransmit, need_of("within", "the resend's deadline")},
        {"resend_identity", {"MR-SACK-3", "MR-RTO-4"},
         "Timing-free: a packet sent again while its path is in service reuses its PathID and PPSN with RETX; only a failed "
         "path's packets move to other paths.",
         {}, k::resend_identity},
        {"no_go_back_n", {"MR-SACK-4"}, "No PPSN covered by an ACK is ever resent.",
         {{"allow_no_resends", T::boolean, "false",
           "pass (not inconclusive) when nothing was resent: for cases whose point is that a covered PPSN stays unsent"}},
         k::no_go_back_n, crossing_need},
        {"retry_limit", {"MR-SACK-6"},
         "No packet is sent more than the retry limit of times; reaching it fails the message and the connection.", {},
         k::retry_limit},
        {"rto_timing", {"MR-RTO-3", "MR-RTO-4"},
         "Each expiry fires at RFC 6298's RTO from Karn-valid wire samples, doubled per consecutive expiry, and resends the "
         "path's oldest PPSN.",
         {{"rel", T::number, "0.1", "relative tolerance"},
          {"abs", T::duration, "5us", "absolute tolerance"},
          {"paths", T::int_list, "", "paths to check (all if absent)", true}},
         k::rto_timing, rto_tolerance},
        {"rto_independence", {"MR-RTO-1", "MR-RTO-2"},
         "A path's timer follows its own RTT: each first expiry on the path comes within a bound.",
         {{"path", T::integer, "", "the fast path"},
          {"at_most", T::duration, "rto_min + 4 * rtt + 20%", "longest allowed timeout"}},
         k::rto_independence, need_of("at_most", "a tenth of the longest allowed timeout", false, 10)},
        {"port_move_after_rtos", {"MR-PATH-4"},
         "The resend of the 2nd consecutive expiry on a path uses a new source port; a single expiry keeps it.",
         {{"paths", T::int_list, "", "paths to check (all if absent)", true}}, k::port_move_after_rtos},
        {"failover", {"MR-PATH-6", "MR-PATH-7"},
         "A path with 4 consecutive expiries is failed (PATH_RESET) and carries no data until a PROBE_REPLY and "
         "PATH_RESET_ACK. The last path in service never fails (§5): expiries there leave the premise unmet (D138).",
         {{"path", T::integer, "", "the DUT path expected to fail"},
          {"within", T::duration, "", "longest time from the run's first expiry to PATH_RESET", true}},
         k::failover, need_of("within", "the deadline for PATH_RESET")},
        {"last_path_kept", {"MR-PATH-6"},
         "The last path in service never fails (§5, Failed path): no PATH_RESET while every other path is failed; the "
         "retry limit ends that path. Inconclusive unless the DUT came down to one path in service (D138).",
         {},
         k::last_path_kept},
        {"window_limit", {"MR-CC-4", "MR-SACK-5"},
         "At most 256 packets in flight per path, and at most the initial window before the path's first ACK. "
         "Inconclusive when the DUT met neither limit (D100).",
         {},
         k::window_limit},
        {"window_cut_on_ece", {"MR-CC-2"},
         "Under sustained ECE a path's inflight falls to at most a bound.",
         {{"path", T::integer, "", "the marked path"},
          {"settle", T::duration, "200us", "time after the first ECE before the bound applies"},
          {"at_most", T::integer, "8", "packets in flight allowed on the marked path"}},
         k::window_cut_on_ece, drain_need},
        {"no_cross_path_cut", {"MR-CC-3"},
         "While one path is marked, every unmarked path still reaches a given inflight (real time: a path below it "
         "beside another unmarked path that reached it is inconclusive, D118).",
         {{"marked", T::integer, "", "the marked path"},
          {"settle", T::duration, "200us", "time after the first ECE before the check"},
          {"at_least", T::integer, "12", "inflight each unmarked path must reach"}},
         k::no_cross_path_cut, cut_need},
        {"grant_rate", {"MR-GR-2"},
         "Over any window of max(RTT, 20 packet times) the DUT's IP bytes stay within the latest GrantRate (+slack, +1 "
         "packet).",
         {{"slack", T::number, "0.05", "allowed excess, a fraction"},
          {"near", T::number, "0.5",
           "fraction of the grant the fullest window must reach, else inconclusive (the pacer was never tested)"}},
         k::grant_rate, {}, true},
        {"rnr_pause", {"MR-RNR-2"},
         "After an RNR for its current Attempt, no packet of that tag goes out for the first time before the RNR time.",
         {{"grace", T::duration, "5us", "processing time allowed after the RNR arrives (as acks_conform allows an ACK)"}}, k::rnr_pause, pause_need},
        {"rnr_resume", {"MR-RNR-4"},
         "After the pause the DUT re-sends the rejected message unprompted: Attempt+1, RNR_RESEND, new PPSNs. A resume due after "
         "the DUT's connection may have ended lawfully (a packet sent retry-limit times, or that many RNR_QUERYs with no "
         "RNR_SYNC back) is not judged (D109).",
         {{"within", T::duration, "rnr_time + 10% + 50us", "latest resume, from the RNR's arrival"}}, k::rnr_resume,
         resume_need},
        {"other_tags_flow", {"MR-RNR-3"},
         "During an RNR pause, new packets of other tags keep leaving.",
         {{"min_packets", T::integer, "1", "new packets of other tags required per pause"}}, k::other_tags_flow,
         flow_need},
        {"rnr_keeps_window", {"MR-RNR-5"},
         "Around an RNR, the busy paths together, and the path the RNR came on, keep at least a fraction of the inflight they "
         "had before, or of their pace (a DUT its speed limits has inflight = pace x ACK time); paths cut by an expiry or "
         "ECE are not judged.",
         {{"span", T::duration, "100us", "window before and after the RNR"},
          {"keep", T::number, "0.5", "fraction of the earlier inflight required after"}},
         k::rnr_keeps_window, need_of("span", "a quarter of the window around the RNR: a hold of half of it moves the windows compared", false, 4)},
        {"close_after_ack", {"MR-CONN-3"},
         "CLOSE leaves only when nothing is unacknowledged: nothing in flight, and no new data after it (data first sent "
         "after the CLOSE was unacknowledged when it left; D124); inconclusive where nothing was in flight or left to send "
         "when the DUT surely had the close request (its call had returned): there was nothing to wait for.",
         {}, k::close_after_ack},
        {"acks_conform", {"MR-SACK-1", "MR-SACK-2", "MR-CC-1", "MR-GR-1", "MR-PATH-3"},
         "The DUT acknowledges at once on AckReq, a new gap or CE (with ECE), every packet within the ACK interval; "
         "CE_Count counts the CE-marked packets that arrived (duplicates included, from 0 at each PATH_RESET; D84); "
         "GrantRate is never 0; a path's CumAck never goes back without a PATH_RESET, judged where the wire cannot "
         "have swapped the two ACKs (D102).",
         {{"within", T::duration, "5us", "processing time allowed for an immediate ACK"}}, k::acks_conform, {}, true},
        {"sack_reports", {"MR-SACK-1"},
         "Each ACK's SACK reports the path's packets above its CumAck that the DUT surely had: those that came from the "
         "same source port before the ACK's trigger packet, and that a later ACK reports with no copy since (no timing; "
         "acks_conform includes it).",
         {}, k::sack_reports},
        {"naks", {"MR-HDR-5", "MR-OOO-4", "MR-SACK-5", "MR-CONN-2", "MR-CONN-3", "MR-CONN-4"},
         "The DUT sends NAKs with a given code (at least / at most a count).",
         {{"code", T::integer, "", "NAK code (any if absent)", true},
          {"at_least", T::integer, "1", "minimum count"},
          {"at_most", T::integer, "", "maximum count", true}},
         k::naks},
        {"silent_drop", {"MR-HDR-2", "MR-HDR-3"},
         "Injected broken packets get no ACK or NAK and are counted.",
         {{"window", T::duration, "200us", "how long after the injection to watch (virtual time; in real time, to the case's end)"},
          {"counter", T::string, "", "DUT counter that must count them, e.g. drop.bad_icrc", true}},
         k::silent_drop},
        {"rnr_sent", {"MR-RNR-1", "MR-RNR-6"},
         "The DUT rejects SENDs without a receive with an RNR, and acknowledges their PPSNs with a RnrCount covering it.",
         {{"at_least", T::integer, "1", "rejections required"}}, k::rnr_sent},
        {"rejection_dropped", {"MR-RNR-6"},
         "An RNR_QUERY draws no RNR for a message that arrived again in full under an Attempt the DUT took (§4: a "
         "rejection is kept only until then).",
         {}, k::rejection_dropped},
        {"query_answer", {"MR-RNR-6"},
         "An RNR_QUERY's answer re-sends, unchanged, the RNR of every rejection the DUT kept (no later Attempt of its "
         "message had reached it), then RNR_SYNC (§4).",
         {}, k::query_answer},
        {"completion_after_placement", {"MR-OOO-3"},
         "A receive completes only after every byte of its message reached the DUT.", {}, k::completion_after_placement, {},
         true},
        {"all_complete", {},
         "Every posted Send and Write completes with a status (within a time).",
         {{"side", T::string, "both", "dut, peer or both"},
          {"status", T::string, "success", "expected status"},
          {"within", T::duration, "", "latest completion after posting", true}},
         k::all_complete, need_of("within", "the deadline for completions", true)},
        {"completion_order", {"MR-STR-1"}, "Completions within a stream follow StreamSeq order.",
         {{"side", T::string, "dut", "dut or peer"}}, k::completion_order},
        {"stream_progress", {"MR-STR-2"}, "A stream's messages all complete within a time of the last one's post.",
         {{"side", T::string, "dut", "dut or peer"},
          {"stream", T::integer, "", "the stream"},
          {"within", T::duration, "", "deadline from the moment the DUT had the stream's last message (its post returned)"}},
         k::stream_progress, need_of("within", "the deadline for the stream", true)},
        {"data_integrity", {"MR-OOO-1", "MR-OOO-2"},
         "Receiving memory holds exactly the bytes sent, at the right addresses.",
         {{"side", T::string, "both", "whose memory: dut, peer or both"}}, k::data_integrity},
        {"ctrl_repeat", {"MR-CONN-1", "MR-CONN-3", "MR-RNR-6", "MR-PATH-7"},
         "An unanswered CONNECT, CLOSE, RNR_QUERY or PATH_RESET is repeated no sooner than max(initial RTO, largest RTO) "
         "after the previous copy, and at most retry-limit times (§4).",
         {{"at_least", T::duration, "rto_initial - 20%", "shortest allowed time between two copies of one request"}},
         k::ctrl_repeat,
         // Failures only: copies recorded too close together may be the host's
         // doing; copies far enough apart are the DUT's own, stamped by the kernel.
         need_of("at_least", "a quarter of the shortest allowed spacing", false, 4, true)},
        {"frame_count", {},
         "Counts frames on the DUT's wire that match decoded fields (match.opcode, match.ctrl, match.nak_code, ...).",
         {{"dir", T::string, "from_dut", "from_dut or to_dut"},
          {"match", T::string, "", "match.FIELD: a field to match (trace/match.h)", true},
          {"at_least", T::integer, "1", "minimum count"},
          {"at_most", T::integer, "", "maximum count", true},
          {"premise", T::boolean, "false",
           "the count is the case's premise, not the DUT's behaviour (e.g. CE marks of a queue the DUT must fill): "
           "fewer than at_least is inconclusive, not fail"}},
         k::frame_count},
        {"completion_count", {},
         "Counts a side's completions (optionally of a kind and status).",
         {{"side", T::string, "dut", "dut or peer"},
          {"kind", T::string, "", "send, write, recv or recv_write_imm", true},
          {"status", T::string, "", "e.g. success, remote_access", true},
          {"at_least", T::integer, "0", "minimum"},
          {"at_most", T::integer, "", "maximum", true}},
         k::completion_count},
        {"grant_advertised", {"MR-GR-1", "MR-GR-3"},
         "After a settle time every DUT ACK advertises the given fair-share rate.",
         {{"rate", T::string, "", "expected rate, e.g. 100Gbps (inbound rate / active senders)"},
          {"settle", T::duration, "0ns", "time after the first ACK before the check"},
          {"tolerance", T::number, "0.1", "relative tolerance, never less than one 100 Mb/s unit (D117)"}},
         k::grant_advertised},
        {"fair_share", {"MR-GR-3"},
         "With N senders active (data within the grant idle time), every DUT ACK grants inbound rate / N; ACKs within "
         "`settle` of a change of the active set are not judged.",
         {{"tolerance", T::number, "0.1", "relative tolerance, never less than one 100 Mb/s unit (D117)"},
          {"settle", T::duration, "20us", "time after a sender starts or goes idle before the grant must follow"}},
         k::fair_share},
        {"spraying", {"MR-PATH-5"},
         "Every agreed path carries at least a fraction of an even share of new packets.",
         {{"min_fraction", T::number, "0.5", "fraction of an even share each path must carry"}}, k::spraying,
         spray_need},
        {"error_completion", {},
         "Some work request completes with a given error status.",
         {{"side", T::string, "dut", "dut or peer"}, {"status", T::string, "", "status, e.g. remote_access"}},
         k::error_completion},
    };
    return k_all;
}

}  // namespace mrct::assertions
