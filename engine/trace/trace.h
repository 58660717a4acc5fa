// What a test case recorded: every frame on the DUT's wire, in both directions,
// with time, decoded fields and what the engine did to it; and what the DUT
// reported through its control surface (completions, counters, memory). The
// assertions (assertions/) read only this, so the same checks work for the
// in-process DUT and for a DUT on a real wire.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/time.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::trace {

using core::nanos;

// Direction on the DUT's wire.
enum class dir : std::uint8_t { from_dut, to_dut };
std::string_view dir_name(dir d);

struct record {
    std::size_t index = 0;  // position in the trace, used to cite frames
    nanos t{0};             // from_dut: when the DUT sent it; to_dut: when it reached the DUT
    dir d = dir::from_dut;
    core::bytes_view bytes;   // the frame, kept by its trace's frame_store (or by whoever built the record)
    wire::decode_result dec;  // views into `bytes` (stable: the store never moves a frame)
    std::string action;       // what the engine did, e.g. "dropped by step 2", "injected by step 1"
    int step = -1;            // the plan step that acted on it; -1 the setup (or nothing), -2 the handshake
    bool dropped = false;     // removed by a plan step before reaching the other side
    bool injected = false;    // crafted by the peer on a plan step

    const wire::frame& f() const { return dec.f; }
    // Whether the DUT saw it: a to_dut frame dropped by a step never arrived.
    bool reached_dut() const { return d == dir::to_dut && !dropped; }
    bool ok() const { return dec.ok(); }
    bool data() const { return ok() && wire::is_data_opcode(dec.f.bth.opcode); }
    bool is(wire::opcode op) const { return ok() && dec.f.bth.opcode == static_cast<std::uint8_t>(op); }
    // A CTRL frame of that type.
    bool is(wire::ctrl_type t) const { return is(wire::opcode::ctrl) && dec.f.ctrlh.type == static_cast<std::uint8_t>(t); }
    // The PathID a MetaRoCE header carries, or -1 (CTRL, undecodable).
    int path_id() const;
};

// A work completion the DUT (or the peer) reported.
struct completion {
    std::uint64_t wr_id = 0;
    std::string kind;    // send, write, recv, recv_write_imm
    std::string status;  // success, retry_exceeded, ...
    std::uint16_t stream = 0, tag = 0;
    std::uint32_t stream_seq = 0, length = 0;
    nanos t{0};
    // Real time: the completion happened in [t - t_err, t]. An agent reports
    // its completions' ages at the moment it answered a poll; the engine
    // maps them onto its clock when the answer arrives, so t is late by the
    // answer's flight time, at most the poll's round trip (t_err).
    nanos t_err{0};
};

// A work request the plan posted on a side.
struct posted_wr {
    std::uint64_t wr_id = 0;
    std::string kind;  // send, write, recv
    std::uint16_t stream = 0, tag = 0;
    std::uint32_t length = 0;
    nanos t{0};
    nanos done{0};  // when the post call returned: the DUT has the message from then at the latest
};

// Memory the plan expects on the receiving side after the run.
struct memory_check {
    std::string side;       // dut or peer: whose memory
    std::uint64_t wr_id = 0;  // the message that should have written it
    std::uint64_t offset = 0;
    // The bytes that belong there, shared with the endpoint that sends them:
    // posting a message of megabytes copies nothing (real time: a copy held
    // the wire for a fifth of a second after the post's first packets).
    std::shared_ptr<const core::byte_buffer> expected_bytes;
    core::byte_buffer actual;  // read back after the run
    core::bytes_view expected() const { return expected_bytes ? core::bytes_view(*expected_bytes) : core::bytes_view{}; }
};

struct side_obs {
    std::vector<posted_wr> posted;
    std::vector<completion> completions;
    std::map<std::string, std::uint64_t> counters;
    bool conn_error = false;
    bool established = false;
    // When the plan's close call on this side returned: the side had the
    // request by then at the latest (close_after_ack's premise).
    std::optional<nanos> close_done;
};

// Protocol parameters in force (spec §5, as configured), for tolerances.
struct params {
    unsigned num_paths = 8;  // agreed
    std::uint32_t mtu = 4096;
    nanos rto_initial{1'000'000}, rto_min{100'000}, rto_max{100'000'000};
    unsigned retry_limit = 7, ack_every = 8, cwnd_initial = 16, max_inflight = 256, moves_after = 2;
    nanos ack_delay{20'000}, grant_idle{1'000'000};
    double inbound_rate_bps = 400e9;  // the DUT's, for its grants
    // The shortest a CTRL request's retries last (CONNECT, CLOSE, RNR_QUERY:
    // repeated every rto_initial at the least up to the retry limit, §4).
    nanos ctrl_retries_span() const { return rto_initial * static_cast<std::int64_t>(retry_limit > 0 ? retry_limit - 1 : 0); }
    // The shortest a path's retransmission timer runs: rto_min, or
    // rto_initial where that is shorter: a path without an RTT sample, new
    // or restarted as new after a PATH_RESET (§5), times at the initial RTO,
    // which MR-RTO-3's clamp does not touch (D140: SACK-051 configures 5 ms
    // against an rto_min of 20 ms, and mrct-refnic resent 5, 10 and 20 ms
    // apart on a path it had failed).
    nanos least_rto() const { return std::min(rto_min, rto_initial); }
    // The shortest a data packet's retries last: retry_limit transmissions,
    // the timer at its least doubled per expiry (MR-RTO-3), capped at
    // rto_max.
    nanos data_retries_span() const {
        const nanos least = least_rto();
        nanos span{0};
        for (unsigned i = 0; i + 1 < retry_limit; ++i) span += std::min(least * (std::int64_t{1} << std::min(i, 40u)), rto_max);
        return span;
    }
};

// Real time: how well the engine itself kept time during the case (docs/timing.md).
// Zero in virtual time, where nothing is ever late.
struct timing_figures {
    bool realtime = false;
    bool rx_stamped = true;      // DUT frames carry the kernel's receive time (not dpdk)
    // The calendar time of the trace's time zero (the case's pcap counts
    // from it), in nanoseconds since the Unix epoch: a frame recorded at t
    // was on the wire at wall_zero_unix_ns + t by the engine's system clock.
    std::int64_t wall_zero_unix_ns = 0;
    std::uint64_t events = 0;    // scheduler events run (timers, fabric deliveries, timed steps)
    nanos event_late_max{0}, event_late_p99{0};  // how late they ran after their time
    nanos step_late_max{0};      // a plan step after its time (timed) or its trigger frame
    nanos rx_delay_max{0};       // a DUT frame's age when the engine handled it
    // The longest turn of the engine's events: each event of a turn runs,
    // and stamps what it sends, at the turn's start; the frames leave at its
    // end (D137). Its spans are in `late`.
    nanos turn_max{0};
    std::uint64_t agent_calls = 0;
    nanos agent_call_max{0}, agent_call_median{0};  // agent round trips (all operations)
    nanos poll_rtt_max{0};       // the uncertainty of completion times: a poll's round trip, or an agent's own (time_err_ns)
    // The host probe (sim/host_probe.h), where the DUT shares the engine's
    // host: the longest a sleeping thread was held, and its wake-ups.
    std::uint64_t frames_lost = 0;  // the DUT's frames the engine's receive path dropped unread
    // What the engine's interfaces (if_names) dropped during the case, below
    // any socket: received frames, and frames sent towards the DUT (D144).
    std::uint64_t if_rx_dropped = 0, if_tx_dropped = 0;
    std::string if_names;
    // A fabric between the engine and the DUT (D146): the round trip the lab
    // declared for it (wire_rtt=, part of trace::crossing), and the DUT's
    // quickest answer on the wire to a request of the engine's, in this case
    // and in the run so far (assertions::quickest_answer; 0: none).
    nanos wire_rtt_declared{0}, answer_min{0}, answer_min_run{0};
    // The lab declared that nothing between reorders frames of different
    // source ports (agent spec fabric=none, D158).
    bool wire_in_order = false;
    // A lab that loses frames where no interface of the engine's counts them
    // (a switch's drops, an impairment box, a qdisc, D148): the DUT's own
    // frame counts (agent counters `frames_in`, `frames_out`; unset where the
    // agent does not report them) against the trace: frames_out read between
    // counters_read_from and counters_read_to with the case's other counters,
    // frames_in read again at frames_in_read_at, after the engine waited for
    // the frames in flight. `sent_before_read`: the frames the engine sent
    // the DUT untouched (not injected, not dropped by a step, decodable)
    // early enough to have been counted by that second read;
    // `recorded_from_dut`: the DUT's frames the trace holds, including those
    // that arrived while the engine waited after the read (D149's surplus
    // counts only those recorded before frames_in_read_at). lab_lost_*: the
    // shortfalls, each a lower bound of what the lab lost that way.
    // `received_for_sure`: the engine's frames the DUT's own frames show it
    // received (assertions::received_for_sure); `dut_frames_in_contradicted`:
    // frames_in was below that, so it is not used.
    // A lab that duplicates frames (D149): frames_out read again with
    // frames_in (dut_frames_out_end), the DUT's frames recorded that are the
    // same bytes as an earlier one (copies_from_dut), and the surpluses:
    // frames_in above every frame the engine sent the DUT, frames recorded
    // above dut_frames_out_end (at most copies_from_dut).
    // A lab that loses one of the DUT's frames and copies another nets out in
    // frames_out (D151): data_copies_from_dut, the DUT's first transmissions
    // (RETX clear) recorded that are the same bytes as an earlier one; resent_unseen_from_dut,
    // its data packets recorded only as resends (RETX set), never as a first
    // transmission (each counted once, beyond what the engine's own drops
    // explain, frames_lost and if_rx_dropped); lab_netted_from_dut, as many of
    // each as the other, where frames_out showed no surplus: the lab's copies
    // and losses, which void the case's verdicts.
    std::optional<std::uint64_t> dut_frames_in, dut_frames_out, dut_frames_out_end;
    std::uint64_t copies_from_dut = 0, lab_dup_to_dut = 0, lab_dup_from_dut = 0;
    std::uint64_t data_copies_from_dut = 0, resent_unseen_from_dut = 0, lab_netted_from_dut = 0;
    // A lab that reorders frames within a flow (D150): the DUT's new data
    // packets that reached the engine after a later one of the same flow
    // (assertions::reordered_from_dut); the engine's data packets the DUT's
    // ACKs show arrived after a later one of their flow
    // (assertions::reordered_to_dut).
    std::uint64_t reordered_from_dut = 0, reordered_to_dut = 0;
    nanos counters_read_from{-1}, counters_read_to{-1}, frames_in_read_at{-1};
    std::uint64_t sent_before_read = 0, recorded_from_dut = 0, received_for_sure = 0;
    std::uint64_t lab_lost_to_dut = 0, lab_lost_from_dut = 0;
    bool dut_frames_in_contradicted = false;
    bool host_probed = false;
    nanos host_hold_max{0};
    std::uint64_t host_wakeups = 0;
    unsigned host_cpus = 0;  // CPUs probed, a sleeper on each
    // The DUT's own waits for a CPU (pid=PID: the kernel's accounting of its
    // threads): read at all, and the longest in one probe period.
    bool dut_waits_read = false;
    nanos dut_wait_max{0};
    // The host probe reads the DUT's waits once a period (sim::host_probe::
    // k_period, checked equal in case_judge.cpp): where a wait began and
    // ended is known to within it.
    static constexpr nanos k_dut_wait_resolution{250'000};
    // Where the DUT shares the host and its process is not named (no pid=):
    // the host's CPU pressure was read instead (sim::host_probe, D95), and
    // `dut_waits` holds the spans in which some task on the host waited for
    // a CPU, an upper bound on the DUT's own waits; the longest such span.
    bool host_pressure_read = false;
    nanos pressure_wait_max{0};

    // Every moment the engine ran more than k_late_floor behind (an event, a
    // step, a DUT frame handled late), every poll the agent answered slower
    // than its median (the host holding the agent, and the DUT beside it),
    // and every hold of a sleeping thread the host probe saw (where the DUT
    // shares the host): when it was due and by how much, sorted by time. A check can ask how late the engine was around the
    // span it judges (late_between), not only over the whole case.
    static constexpr nanos k_late_floor{20'000};
    struct late_span {
        nanos due, late;
        // A DUT wait (dut_waits): it may have ended up to this long before
        // it was placed (when the probe read it; sim::host_probe::hold::err).
        nanos err{0};
    };
    std::vector<late_span> late;
    // The DUT's own waits for a CPU (pid=PID), or where it is not named the
    // host's CPU pressure (host_pressure_read), also in `late`: sorted by time.
    // Each moment the kernel kept a DUT thread from a CPU delayed whatever it
    // was doing, so within a span they are counted in all (dut_waited_between).
    std::vector<late_span> dut_waits;

    // A passive capture (mrct check): nothing measured how long the DUTs'
    // host held them, so every moment may have held them up to this long
    // (--max-hold; 0 when the DUTs keep their own time, and always for the
    // engine, which measures its holds). Every figure below takes it in.
    nanos assumed_hold{0};

    // Real time: when the case's work began (its setup posted) and the time
    // it is given from then (limits.duration, at least 2 s). The engine
    // stretches its cap by the holds it measured; work still pending at the
    // end with less unheld time than this had not the time it is given.
    nanos work_from{0}, work_budget{0};
    bool work_capped = false;  // the stretch reached its most (k_realtime_cap_stretch) with work pending

    // The most any action or reaction of the engine ran behind its time, the
    // figure every timing check compares with what it needs.
    nanos engine_late() const { return std::max({event_late_max, step_late_max, rx_delay_max, turn_max, assumed_hold}); }
    // How long, in all, [from, to] lay inside some span [due, due + late]:
    // the time the host held things there, each moment counted once. With an
    // assumed hold, nothing bounds the total: the whole span.
    nanos held_between(nanos from, nanos to) const {
        return assumed_hold > nanos{0} ? std::max(nanos{0}, to - from) : covered(late, from, to);
    }
    // How long, in all, a DUT thread may have waited for a CPU within [from,
    // to]: where the probe read the DUT's own waits, what it read plus its
    // resolution (a wait's ends are known to within a period: SACK-003 with
    // mrct-refnic at 5 % of a CPU resent 68.0 ms after an ACK with 67.7 ms of
    // waits read in between, D111), at most the span. A wait read late (the
    // probe's thread held: its `err` beyond the period) may have lain up to
    // that much earlier than placed: where it may have met the span, it adds
    // what the shift can add, min(err, its length), instead of the period
    // (CONN-007 beside stress-ng: a 970 us wait read 1.3 ms late).
    nanos dut_waited_between(nanos from, nanos to) const {
        const nanos w = covered(dut_waits, from, to);
        if (!dut_waits_read) return w;
        nanos resolution = w > nanos{0} ? k_dut_wait_resolution : nanos{0};
        for (const auto& l : dut_waits)  // sorted by due
            if (l.due - l.err <= to && l.due + l.late >= from && l.err > k_dut_wait_resolution)
                resolution = std::max(resolution, std::min(l.err, l.late));
        if (resolution <= nanos{0}) return w;
        return std::min(w + resolution, std::max(nanos{0}, to - from));
    }
    static nanos covered(const std::vector<late_span>& spans, nanos from, nanos to) {
        nanos total{0}, reach = from;
        for (const auto& l : spans) {  // sorted by due
            const nanos a = std::max(l.due, reach), b = std::min(l.due + l.late, to);
            if (b > a) {
                total += b - a;
                reach = b;
            }
        }
        return total;
    }
    // How long within [from, to] neither a hold (late) nor a DUT wait
    // (dut_waits) covered: the time the engine, the DUT and their host all
    // ran free there, each moment counted once. With an assumed hold,
    // nothing ran free.
    nanos free_between(nanos from, nanos to) const {
        if (to <= from || assumed_hold > nanos{0}) return nanos{0};
        if (indexed()) return (to - from) - covered(held_sorted_, from, to);
        std::vector<late_span> all = late;
        all.insert(all.end(), dut_waits.begin(), dut_waits.end());
        std::sort(all.begin(), all.end(), [](const late_span& a, const late_span& b) { return a.due < b.due; });
        return (to - from) - covered(all, from, to);
    }
    // The two longest holds that meet [from, to], overlapping spans merged
    // into one, summed: what can have delayed one timer, a hold where it
    // started (the DUT took its restart late) and one where it was due.
    nanos two_longest_between(nanos from, nanos to) const {
        nanos first{0}, second{0};
        auto keep = [&](nanos a, nanos b) {
            if (b < from || a > to) return;
            const nanos d = b - a;
            if (d > first) {
                second = first;
                first = d;
            } else if (d > second) {
                second = d;
            }
        };
        bool open = false;
        nanos a{0}, b{0};
        for (const auto& l : late) {  // sorted by due
            if (open && l.due <= b) {
                b = std::max(b, l.due + l.late);
                continue;
            }
            if (open) keep(a, b);
            a = l.due;
            b = l.due + l.late;
            open = true;
        }
        if (open) keep(a, b);
        return std::max(first + second, 2 * assumed_hold);
    }
    // What can have delayed one timer, or one answer, within [from, to]
    // (D62, D67): the two longest holds that meet it, and the DUT's own waits
    // for a CPU there in all (each moment of them delayed its one thread);
    // the larger counts.
    struct excuse {
        nanos holds, dut_waits;
        nanos most() const { return std::max(holds, dut_waits); }
    };
    excuse excuse_between(nanos from, nanos to) const {
        return {two_longest_between(from, to), dut_waited_between(from, to)};
    }
    // The worst lateness whose span [due, due + late] meets [from, to].
    nanos late_between(nanos from, nanos to) const {
        nanos worst{0};
        for (const auto& l : late)
            if (l.due <= to && l.due + l.late >= from) worst = std::max(worst, l.late);
        return std::max(worst, assumed_hold);
    }
    // What remains at t of the longest hold of the host, or wait of a DUT
    // thread for a CPU, that covers t: how much later than t a DUT may have
    // read a frame the engine sent at t.
    nanos held_at(nanos t) const {
        nanos most{0};
        if (indexed()) {
            // The furthest end of a span that began by t: past t, it covers t.
            const auto i = std::upper_bound(held_sorted_.begin(), held_sorted_.end(), t,
                                            [](nanos x, const late_span& l) { return x < l.due; }) -
                           held_sorted_.begin();
            if (i > 0 && held_reach_[static_cast<std::size_t>(i - 1)] > t)
                most = held_reach_[static_cast<std::size_t>(i - 1)] - t;
        } else {
            for (const auto* spans : {&late, &dut_waits})
                for (const auto& l : *spans)
                    if (l.due <= t && t < l.due + l.late) most = std::max(most, l.due + l.late - t);
        }
        return std::max(most, assumed_hold);
    }
    // How long before t began the longest hold of the host, or wait of a
    // DUT thread for a CPU, that covers t: how much earlier than its frame
    // recorded at t a DUT may have read its clock for it. A software DUT
    // stamps a transmission (its RTT sample's start, its retransmit timer's)
    // when it decides to send, and a hold before the frame leaves puts the
    // wire behind its stamp (mrct-refnic beside stress-ng: a post_write held
    // 3 ms, its timer ran from the call, the resend came 3.6 ms after the
    // frame against an RTO of 6.4 ms).
    nanos held_before(nanos t) const {
        nanos most{0};
        if (indexed()) {
            // The first span (by due) to reach t is the earliest-begun one that
            // does: it covers t if it began before t.
            const auto j = static_cast<std::size_t>(std::lower_bound(held_reach_.begin(), held_reach_.end(), t) -
                                                    held_reach_.begin());
            if (j < held_sorted_.size() && held_sorted_[j].due < t) most = t - held_sorted_[j].due;
        } else {
            for (const auto* spans : {&late, &dut_waits})
                for (const auto& l : *spans)
                    if (l.due < t && t <= l.due + l.late) most = std::max(most, t - l.due);
        }
        return std::max(most, assumed_hold);
    }
    // Makes held_at and held_before O(log n) (they are asked once per RTT
    // sample and per resend: after a 64 MiB case on the wire the scans of
    // every span were 7-9 % of the engine's CPU). Called once `late` and
    // `dut_waits` are final; spans added later make both scan again.
    void index_holds() {
        held_sorted_ = late;
        held_sorted_.insert(held_sorted_.end(), dut_waits.begin(), dut_waits.end());
        std::sort(held_sorted_.begin(), held_sorted_.end(), [](const late_span& a, const late_span& b) { return a.due < b.due; });
        held_reach_.resize(held_sorted_.size());
        nanos reach = nanos::min();
        for (std::size_t i = 0; i < held_sorted_.size(); ++i) held_reach_[i] = reach = std::max(reach, held_sorted_[i].due + held_sorted_[i].late);
    }

private:
    bool indexed() const { return !held_sorted_.empty() && held_sorted_.size() == late.size() + dut_waits.size(); }
    std::vector<late_span> held_sorted_;  // late and dut_waits, by due (index_holds)
    std::vector<nanos> held_reach_;       // the furthest end of held_sorted_[0..i]
};

// The frames' bytes of one trace, kept in large blocks: one allocation per
// block, not per frame (on the wire a 64 MiB transfer recorded 16 k frames,
// and the allocations and their first-touch page faults were a quarter of the
// engine's CPU while it received; bench/wire_rate.py, issue 24). A kept frame
// never moves. A copy shares the blocks written so far and writes its own
// frames into new ones.
class frame_store {
public:
    frame_store() = default;
    frame_store(const frame_store& o) : blocks_(o.blocks_), resident_(o.resident_) {}
    frame_store& operator=(const frame_store& o) {
        blocks_ = o.blocks_;
        resident_ = o.resident_;
        used_ = cap_ = 0;
        return *this;
    }
    frame_store(frame_store&&) noexcept = default;
    frame_store& operator=(frame_store&&) noexcept = default;
    // A stable copy of `b`.
    core::bytes_view keep(core::bytes_view b);
    // Real time, before the traffic: from now on a block is brought into
    // memory when it is opened, in one call (core::make_resident), instead
    // of a page fault per frame kept while the DUT's traffic flows (11 us
    // each on this project's VM, docs/performance.md). And blocks for
    // `expect` bytes of frames (at least one, at most k_max_ready) are
    // opened now and touched (core::touch_pages: a VM's hypervisor maps a
    // page at its first touch, 4-6 us each here), so the frames kept cost
    // neither an allocation nor faults (the DUT's first CONNECT waits on the
    // first; under a sanitizer a 4 MiB allocation took milliseconds of a
    // 7 ms retry span).
    void prepare(std::size_t expect = 0);
    static constexpr std::size_t k_max_ready = std::size_t{256} << 20;
    bool resident() const { return resident_; }
    std::size_t blocks() const { return blocks_.size(); }
    std::size_t ready() const { return ready_.size(); }  // blocks prepared, not opened yet
    static constexpr std::size_t k_block = std::size_t{4} << 20;

private:
    void open_block(std::size_t n);  // a new last block of n bytes, written from its start
    std::vector<std::shared_ptr<std::uint8_t[]>> blocks_;
    std::size_t used_ = 0, cap_ = 0;  // in the last block, if this store writes it
    bool resident_ = false;            // prepare() was called
    std::vector<std::shared_ptr<std::uint8_t[]>> ready_;  // blocks prepare() made, for the next blocks opened
};

struct trace {
    std::vector<record> frames;
    frame_store store;  // frames' bytes
    side_obs dut, peer;
    std::vector<memory_check> memory;
    params p;       // the DUT's configuration (NumPaths and MTU as agreed)
    params peer_p;  // the engine's peer's (its timers and retry limit: how soon it gives up on a silent DUT)
    nanos end{0};
    // Times at which plan steps ran, by step index (for `after: step N`).
    std::map<int, nanos> step_times;
    // Real time only: how long a frame the engine recorded on its way to the
    // DUT may still have been in flight. A resend from the DUT recorded within
    // this time after an ACK that covers it may have left before the DUT saw
    // that ACK (the two crossed on the wire). 0 in virtual time, where a
    // to_dut record is the moment of arrival.
    nanos crossing{0};
    timing_figures timing;

    record& add(nanos t, dir d, core::bytes_view bytes);

    // Real time, before the traffic: room for `expect` bytes of frames, so
    // that recording them under the DUT's traffic neither allocates nor
    // faults in pages. Their bytes: frame_store::prepare. Their records: at
    // least k_min_records reserved, and those of `expect` bytes (a record per
    // 2 KiB: a 4 KiB data frame and its ACK; at most k_max_ready_records)
    // brought in and touched now. Recording 20 k frames into untouched
    // records took 2.6 k page faults, 5 % of the engine's data phase on this
    // project's VM (bench/wire_rate.py). More records than that grow the
    // vector as before.
    void prepare(std::size_t expect);
    static constexpr std::size_t k_min_records = std::size_t{1} << 15;
    static constexpr std::size_t k_bytes_per_record = 2048;
    static constexpr std::size_t k_max_ready_records = std::size_t{1} << 17;
};

}  // namespace mrct::trace
