// Runs test plans: one case at a time in virtual time against a DUT, records
// the trace, evaluates the case's assertions, gives verdicts.
//
//   case verdict = error        the infrastructure failed (DUT, setup)
//                = skipped      the DUT lacks a required capability
//                = fail         any assertion failed
//                = inconclusive none failed, some could not be judged
//                = pass         every assertion passed
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dut_adapters/dut.h"
#include "plan/errors.h"
#include "plan/plan.h"
#include "run/params.h"
#include "run/results.h"
#include "trace/trace.h"

namespace mrct::run {


// Makes a fresh DUT for each case.
using dut_factory = std::function<core::result<std::unique_ptr<dut::dut>>()>;
// "sim" or "sim:bug=NAME".
core::result<dut_factory> parse_dut(const std::string& spec, std::string* bug_out = nullptr);

// validate reports each distinct error once, at most this many of them.
inline constexpr std::size_t k_max_plan_errors = plan::error_list::k_max;

// Checks names and values a parser cannot: actions, assertions and their
// arguments, clause IDs, stage kinds and parameters, durations. All problems,
// each with file:line:col.
core::status validate(const plan::suite& s);
// The capabilities the engine and its DUTs know, with what each means (for
// skip reasons and docs). A plan may also require names a vendor's agent
// defines: a DUT without them skips the case, saying so.
const std::vector<std::pair<std::string, std::string>>& capabilities();

// `time_scale`: for a case that requires `fine_timing`, 0 (auto) runs it as
// written on a DUT that has the capability and k_auto_time_scale times slower
// on one that lacks it; 1 never scales (it is skipped there); K > 1 runs it K
// times slower on any DUT (run/time_scale.h). Other cases run as written.
// `timing_retries`: a real-time case that ended inconclusive only because the
// engine or its host ran too late for a check (timing_doubted) runs again,
// with a fresh DUT and the same seed, at most this many more times (D66).
// `ctl`: a run being stopped (run_options::stop, ::cut).
struct run_control {
    // Set: the case makes no further attempt (a timing retry, a set-up
    // attempt); the one running ends as usual.
    const std::atomic<bool>* stop = nullptr;
    // Set: the running attempt ends at once, not judged: skipped, marked
    // interrupted, its trace kept as evidence (D143).
    const std::atomic<bool>* cut = nullptr;
    bool stopping() const { return stop && stop->load(); }
};
case_result run_case(const plan::test_case& c, const dut_factory& make, std::uint64_t seed, unsigned time_scale = 0,
                     unsigned timing_retries = 0, run_control ctl = {});
// Inconclusive, and every inconclusive check was judged and then doubted for
// timing (assertions::outcome::timing_doubt): nothing but lateness stood in
// the way of a verdict.
bool timing_doubted(const case_result& r);
// D146, a fabric between the engine and the DUT. Whether a real-time case
// failed a timing check while the run knows no answer of the DUT's on the
// wire quicker than the crossing window: the failure may be the fabric's,
// and the wire wants measuring (run_suite's probe) before it stands.
bool wire_may_cross(const case_result& r);
// With the run's quickest answer (`run_quickest`, 0: none beyond the
// case's), each failure of a timing check is inconclusive where that answer
// exceeds the crossing window (assertions::beyond_crossing); the case's
// verdict follows. Whether any changed.
bool judge_wire(case_result& r, core::nanos run_quickest);
// D152, a lab that both loses and copies frames. A copy of one of the DUT's
// frames and a loss of another net out in its frames_out: D149 sees no
// surplus, D148 no shortfall, and D151 only the pairs its data shows. What a
// run has seen of its lab: the first case whose counters showed a loss
// (D148, D151) and the first that showed a copy (D149, D151); empty: none yet.
struct lab_seen {
    std::string lost_in, copied_in;
    std::string reordered_in;  // D158: the first case that showed the lab reordering a flow (D150)
    bool both() const { return !lost_in.empty() && !copied_in.empty(); }
    // Notes what `r` showed of the lab (real time, the DUT's counters).
    void note(const case_result& r);
};
// A real-time case that failed with, among the DUT's frames recorded, some
// the same bytes as an earlier one that the counters balance (no D149
// surplus): behind a lab that loses and copies, a copy may hide a loss.
bool may_net_out(const case_result& r);
// Where the run's lab has shown both (`lab.both()`), each failure of such a
// case is inconclusive, naming the copies, the counts and the cases that
// showed the lab; the case's verdict follows. Whether any changed.
bool judge_netting(case_result& r, const lab_seen& lab);
// D158: a real-time case that failed on the order of two of the DUT's frames
// from different source ports (outcome::cross_port_order), which a fabric
// spraying by port may swap. It waits like D152's (run_suite) for the run's
// lab to show reordering within a flow (D150), in any case; if it does, each
// such failure is inconclusive, naming the case that showed it. Whether any
// changed.
bool may_reorder(const case_result& r);
bool judge_order(case_result& r, const lab_seen& lab);
// Wire probes a run makes at most (a DUT's answers to the first are its
// slowest; a fabric that stays slow needs no third).
inline constexpr unsigned k_wire_probes = 2;
// The last attempt's result after timing retries: where it ended inconclusive
// for what its own run lacked (no loss happened, no path was busy), its reason
// also names what doubted the attempt before (`before`: their reasons, in
// order), so the measured figures stay in the verdict a user reads.
void name_earlier_doubt(case_result& r, const std::vector<std::string>& before);
inline constexpr unsigned k_timing_retries = 2;  // run_options' default

// A case that injects a fault (fabric impairments, a peer departing from the
// reference) or a negative condition (a SEND with no receive posted).
bool is_fault_case(const plan::test_case& c);
struct coverage {
    std::vector<std::string> thin;      // clauses cited by fewer cases than required (MUST 2, SHOULD 1)
    std::vector<std::string> no_fault;  // MUST clauses without a fault or negative case
};
coverage check_coverage(const plan::suite& s);

inline constexpr std::size_t k_netting_hold = 32;  // run_options::netting_hold's default (D152)
// The default of run_options::max_errors and `mrct run --max-errors`.
inline constexpr unsigned k_max_consecutive_errors = 5;

struct run_options {
    std::vector<std::string> filters;   // globs on case IDs
    std::vector<std::string> clauses;   // globs on clause IDs
    std::uint64_t seed = 1;
    unsigned repeat = 1, jobs = 1;
    bool keep_traces = false;  // keep each trace after `progress` saw it
    // false: once `progress` saw it, a case's result keeps its identity,
    // verdict and reason only (asserts and doubted_before cleared), so that a
    // long run that hands each case to its reports as it ends (mrct run: the
    // reports' case spool) does not grow with its cases.
    bool keep_details = true;
    unsigned shard_k = 1, shard_n = 1;  // run the jobs whose order % n == k - 1
    unsigned time_scale = 0;            // run_case's: 0 auto, 1 never, K > 1 always
    unsigned timing_retries = k_timing_retries;  // run_case's
    const std::atomic<bool>* stop = nullptr;  // set by SIGINT: finish the running cases, start no more
    // Set by a second SIGINT (or SIGTERM): the running cases end at once,
    // skipped and marked interrupted (run_control::cut, D143).
    const std::atomic<bool>* cut = nullptr;
    // Stop starting cases after this many consecutive `error` verdicts (a DUT
    // or agent gone: the rest would only repeat the error); 0 never. When it
    // stops, *gave_up (if given) is set.
    unsigned max_errors = k_max_consecutive_errors;
    std::atomic<bool>* gave_up = nullptr;
    std::function<void(const case_result&, std::size_t done, std::size_t total)> progress;
    // D152: failures a copy of the DUT's may explain that wait, traces and
    // all, for the run's lab to show both a loss and a copy, at most; one
    // more hands the oldest on as it stands (so many failures with copies
    // and no lab shown: the DUT's own repeats), and memory stays bounded.
    std::size_t netting_hold = k_netting_hold;
    // Waveforms of failing cases (docs/rtl.md): a case that failed or erred
    // is run once more, same seed and time base, against the DUT `make(PATH)`
    // gives, one that writes its waveform at PATH (dir/NAME.fst, NAME from
    // evidence_name). Virtual time repeats the run exactly; a re-run that
    // ends otherwise keeps no waveform. Unset: no re-runs.
    struct waveforms {
        std::string dir;
        std::function<core::result<dut_factory>(const std::string& path)> make;
    } waveform;
};

// A case ID as a file name for its evidence (pcap, waveform): letters,
// digits, '-' and '_' kept, anything else '_'.
std::string evidence_name(const std::string& id);

bool glob_match(std::string_view pattern, std::string_view text);
std::vector<const plan::test_case*> select(const plan::suite& s, const run_options& o);
std::vector<case_result> run_suite(const plan::suite& s, const dut_factory& make, const run_options& o);

// The number of runs a selection makes (cases x repetitions), before sharding.
std::size_t planned_runs(const plan::suite& s, const run_options& o);
}  // namespace mrct::run
