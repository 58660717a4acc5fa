// The execution of one test case (engine/run, internal): the class behind
// run_case(). It owns the case's clock and its parts, each a type that reads
// alone:
//   case_wiring (run/case_wiring.h)  the topology: settings, fabrics, peers,
//                                    the connection, memory regions;
//   wire_tap    (run/wire_tap.h)     every frame on the DUT's wire recorded,
//                                    filtered and passed on;
//   step_exec   (run/step_exec.h)    the program's setup, timed and triggered
//                                    steps, and real-time re-entrancy.
// case_runner.cpp sets them up in order, runs the case until it is done,
// and judges it.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "assertions/ctrl_requests.h"
#include "core/units.h"
#include "run/case_wiring.h"
#include "run/program.h"
#include "run/runner.h"
#include "run/step_exec.h"
#include "run/wire_tap.h"
#include "sim/drivers.h"
#include "sim/host_probe.h"

namespace mrct::run::detail {

using core::nanos;
using namespace std::chrono_literals;

// Real time: the shortest cap on a case's run (limits.duration below it is raised).
inline constexpr core::nanos k_realtime_min_duration{2'000'000'000};
// Real time: the most a case's cap is stretched by the holds of its host
// (a DUT at 5 % of a CPU needs 20 times its cap; it is then inconclusive).
inline constexpr std::int64_t k_realtime_cap_stretch = 4;
// Real time: how long an ACK the engine sent may still be on its way to the
// DUT when the DUT sends a resend (trace::crossing, docs/adapters.md). Crossings
// seen on the test veths were 0-45 us apart; 200 us stays below a retransmission
// timer (rto_min 100 us doubles before a second expiry, and a first RTO is
// rto_initial, 1 ms), so a timer's resend of an acknowledged PPSN is still caught.
inline constexpr core::nanos k_realtime_crossing{200'000};
// Real time: how many times a case whose connection did not open is set up
// again with a fresh DUT before it ends as error (a busy host, not a clause).
inline constexpr unsigned k_setup_attempts = 3;

// Real time: where a check reports the case's premise did not arise, a
// frame_count falling short of at_least is inconclusive too (D111).
void counts_need_premise(std::vector<assertion_result>& asserts);

// Real time: a connection that did not open in [from, to] while the engine,
// the DUT or their host was held (two longest holds) at least as long as the
// shortest a CONNECT's retries last on either side, (retry_limit - 1) x
// rto_initial: the figures, said as a clause of the reason; nullopt where
// the holds were shorter (D113).
std::optional<std::string> setup_held(const trace::timing_figures& tm, nanos from, nanos to, const trace::params& dut,
                                      const trace::params& peer);
// A case whose handshake filters kept its connection from opening (the
// `handshake` assertion's fail), where the CONNECTs ran out while a side was
// held (setup_held's figures, `held`): inconclusive, saying so (D139).
void doubt_handshake(assertion_result& ar, case_result& r, const std::string& held);
// Not judged, because the run is being stopped (D143): skipped, marked
// interrupted, the reason "interrupted: " + why.
void set_interrupted(case_result& r, const std::string& why);
// Real time: what the engine's interfaces dropped during the case (D144),
// said as the reason no verdict stands; empty where they dropped nothing.
std::string interface_loss(const trace::timing_figures& tm);
// Real time (D148): what the DUT's own frame counters (timing_figures::
// dut_frames_in, dut_frames_out, read from counters_read_from) say the lab
// lost where no interface of the engine's counts it, set in tr.timing:
// frames the engine sent the DUT untouched before `cutoff` beyond those the
// DUT counted receiving, and frames the DUT counted sending beyond those the
// trace holds (less what the engine's receive path and interfaces dropped,
// D144, which say so themselves). A frames_in below the engine's frames the
// DUT's own frames show it received (assertions::received_for_sure) is
// contradicted and not used.
void count_lab_loss(trace::trace& tr, nanos cutoff);
// And where the lab duplicated frames (D149): more counted received than the
// engine sent, or more recorded from the DUT than it counted sending at the
// second read, as many as the trace holds copies (the same bytes again).
// The reason no verdict stands where count_lab_loss found a shortfall or a
// surplus, or the DUT's frames show a lab that reorders within a flow
// (timing_figures::reordered_from_dut, reordered_to_dut, D150); empty where
// none of these.
std::string lab_loss(const trace::timing_figures& tm);
// Real time: how long the engine waits after reading the DUT's counters for
// the frames the DUT counted sending to reach the trace, beyond the crossing
// window and the holds it sees meanwhile (D148), and the longest it waits.
inline constexpr nanos k_counted_frames_cap{250'000'000};
// Real time (D148): where the DUT's frames_in still falls short of what the
// engine sent it, it may be reading a backlog its host left it: the engine
// waits this long (and the holds meanwhile) and reads again, up to three
// times (mrct-refnic reads over 100 k frames a second: 52 ms of reading
// covers a hold of half a second at 10 k frames a second). A shortfall still
// there after the last is the lab's.
inline constexpr std::array<nanos, 3> k_recount_waits{nanos{2'000'000}, nanos{10'000'000}, nanos{40'000'000}};
// The case's verdict and reason from its assertions: the worst, and the
// first assertion that gave it.
void settle_verdict(case_result& r);
// After the last set-up attempt: where every attempt's connection failed to
// open while held so (setup_held), the case is inconclusive, not an error
// (D113); otherwise it stays as it is.
void settle_setup(case_result& r, bool every_attempt_held, unsigned attempts);
// Real time: an agent call sent at `sent` that got no response in `waited`
// (its timeout), while the DUT's own threads (pid=) waited at least half of
// that for a CPU: the figures, said as a clause of the reason; nullopt
// otherwise (D114).
std::optional<std::string> agent_call_held(const trace::timing_figures& tm, nanos sent, nanos waited);
// Real time: the DUT's agent refused an operation (code `failed`,
// dut::refused_call) after the engine, the DUT or their host was held,
// between the connection's opening and the refusal, at least as long as the
// DUT's retries last at the least (its data packets' or its CTRL requests'):
// its connection may have ended as the retry limit says. The figures, said
// as a clause of the reason; nullopt where the holds were shorter (D136).
std::optional<std::string> refusal_held(const trace::timing_figures& tm, nanos from, nanos to, const trace::params& dut);

// Real time: every moment the engine ran behind (D59): the tap's and the
// steps' (`late`), the driver's late events, and its turns longer than the
// floor (D137: a frame stamped at a turn's start reached the wire as late as
// the turn's end, so for a DUT the engine sent it that much later).
std::vector<trace::timing_figures::late_span> engine_spans(const lateness& late, const sim::realtime_driver& rt);

class case_exec {
public:
    // `p`: `c` compiled (run/program.h), without errors.
    case_exec(const plan::test_case& c, program p, std::unique_ptr<dut::dut> d, std::uint64_t seed);

    case_result run();
    // The case runs slowed down k times (run/time_scale.h): a DUT that refuses
    // the timer settings that takes skips it instead of erring.
    void set_time_scale(unsigned k) { time_scale_ = k; }
    // A run stopped a second time sets `cut`: the case ends at its next look
    // (a millisecond in real time, an agent call within k_abort_poll), not
    // judged: skipped, marked interrupted (D143).
    void set_cut(const std::atomic<bool>* cut) { cut_ = cut; }
    // The connection did not open (set-up, not a clause): run_case may try again.
    bool setup_failed() const { return setup_failed_; }
    // Real time: it did not open while the engine, the DUT or their host was
    // held as long as a CONNECT's retries last (setup_held, D113).
    bool setup_held() const { return setup_held_; }

private:
    core::status setup();
    void start_realtime();
    core::status connect();
    core::status execute();
    // Runs the case's time up to `t`: virtual time jumps, real time waits.
    void advance(nanos t) {
        if (rt_) rt_->run_until(t);
        else drv_.run_until(t);
    }
    void drain();
    // `cut_` set: noted, so that the case ends (connect, execute).
    bool cut_seen();
    // The case ended early because `cut_` was set: r becomes interrupted.
    bool mark_interrupted(case_result& r) const;
    static trace::completion convert(const endpoint::completion& wc);
    bool all_done() const;
    // The DUT's CTRL requests (§4): a case is not over while one may still be
    // repeated, that is, unanswered, under the retry limit, and its last copy
    // less than rto_max ago (the longest repeat interval §4 allows).
    bool ctrl_pending();
    void collect();
    // Real time: runs the wire on after the DUT's counters were read, until
    // the frames it counted sending may have reached the trace, then reads
    // its frames_in again (D148).
    void await_counted_frames();
    void note_timing();
    // Real time: the engine's own lateness so far, as spans (frames handled
    // late, steps, the driver's late events), unsorted.
    std::vector<trace::timing_figures::late_span> engine_spans() const;
    // Real time: how long, in all, the engine, the DUT or their host was held
    // since `from`, as measured so far (each moment once).
    nanos held_since(nanos from) const;
    void evaluate(case_result& r);
    void note_premise(case_result& r);
    // Real time: an error because an agent call got no response in time,
    // while the DUT's own threads waited most of that time for a CPU, is
    // inconclusive (D114).
    void agent_held(case_result& r) const;
    // Real time: an error because the DUT's agent refused an operation after
    // holds as long as the DUT's retries last is inconclusive (D136).
    void refused_held(case_result& r) const;
    // The connection did not open while `handshake:` filters were in force:
    // the DUT did not recover its handshake, a failure of the case's clauses.
    void fail_handshake(case_result& r, const std::string& why);
    struct handshake_evidence {
        std::string text;  // "from the DUT: 7 CONNECT; to the DUT: 3 ACCEPT (the first answer 6.1 ms after ...)"
        std::vector<std::size_t> frames;
        unsigned dropped = 0;
    };
    handshake_evidence handshake_seen() const;

    const plan::test_case& c_;
    const program p_;
    // The scheduler outlives everything that holds timers on it (DUT, peer, fabric).
    sim::scheduler s_;
    sim::virtual_driver drv_{s_};
    std::unique_ptr<sim::realtime_driver> rt_;  // real-time DUTs
    std::unique_ptr<sim::host_probe> probe_;    // real time, a DUT on this host
    std::unique_ptr<dut::dut> dut_;
    std::uint64_t seed_;
    std::shared_ptr<trace::trace> tr_;
    first_error error_;
    lateness late_;
    case_wiring wiring_;
    wire_tap tap_;
    step_exec steps_;
    assertions::ctrl_book ctrl_;
    std::size_t ctrl_fed_ = 0;  // trace records the book has taken
    nanos t0_{0};
    unsigned time_scale_ = 1;
    bool setup_failed_ = false;
    bool setup_held_ = false;
    nanos connect_from_{0};  // when connect() began
    // Real time (D148): the DUT's counters were read between counters_from_
    // and counters_to_, and again (the last of await_counted_frames' reads)
    // from recount_from_: frames_in_again_, frames_out_again_ (unset: not
    // reported).
    nanos counters_from_{-1}, counters_to_{-1}, recount_from_{-1};
    nanos recount_cutoff_{-1};  // frames sent to the DUT up to this were expected in the last frames_in
    nanos wire_rtt_seen_{0};  // the run's quickest answer when the counters were read (D146)
    std::optional<std::uint64_t> frames_in_again_, frames_out_again_;
    bool handshake_lost_ = false;  // set by setup(): see fail_handshake
    bool config_refused_ = false;  // set by setup(): the DUT refused a scaled case's settings
    const std::atomic<bool>* cut_ = nullptr;
    bool cut_seen_ = false;
    bool running_ = false;  // setup done: the case's steps were running
};

}  // namespace mrct::run::detail
