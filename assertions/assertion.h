// The assertion library: named, parameterised checks over a recorded trace
// (trace/trace.h). Each assertion cites the clauses it checks, declares its
// parameters (which drive plan validation and `mrct explain`), and returns a
// verdict with expected-vs-actual and the frames involved.
//
// Verdicts: pass; fail (the DUT broke the clause); inconclusive (the run did
// not produce the condition the check needs, e.g. no loss to recover from).
// error and skipped are the runner's (infrastructure, missing capability).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "trace/trace.h"

namespace mrct::assertions {

enum class verdict : std::uint8_t { pass, fail, inconclusive, error, skipped };
std::string_view verdict_name(verdict v);

enum class param_type : std::uint8_t { integer, number, duration, boolean, string, int_list };
std::string_view param_type_name(param_type t);

struct param_decl {
    std::string name;
    param_type type;
    std::string def;  // empty and not optional: required
    std::string help;
    bool optional = false;
};

struct outcome {
    verdict v = verdict::pass;
    std::string message;  // one line: what was checked and what happened
    std::string expected, actual;
    std::vector<std::size_t> frames;  // trace indices of the frames involved
    std::map<std::string, double> measured;
    // The time span the verdict rests on, where the check knows it: in real
    // time the engine's lateness is then taken over that span only, not over
    // the whole case (docs/timing.md).
    std::optional<std::pair<core::nanos, core::nanos>> span;
    // The verdict rests on nothing the engine's timing can change (the order
    // of the DUT's own frames, a rule no lateness can excuse): in real time
    // it stands whatever the engine's lateness (apply_timing leaves it).
    bool timing_free = false;
    // A failure by an amount (an expiry this much later than its bound):
    // in real time only holds of the engine or of the DUT beside it meeting
    // `span`, the two longest at least this long together (a timer is late
    // by a hold where it started and one where it was due), can have caused
    // it; shorter ones leave it standing, whatever the check's general need
    // (apply_timing).
    std::optional<core::nanos> excused_by;
    // With excused_by: the failure is a throughput's, not one timer's (a
    // stream's messages late): every hold in the span delayed it, so the
    // holds are counted in all (timing_figures::held_between), each moment
    // once, not only the two longest.
    bool excused_in_all = false;
    // Set by apply_timing: the check judged, and the engine's or its host's
    // lateness turned its verdict inconclusive. Another attempt on a quieter
    // moment may judge (run_case's timing retries, D66).
    bool timing_doubt = false;
    // The scenario the case builds did not arise (premise_not_met), or holds
    // cut it short (all_complete in real time: work pending or given up
    // while held): its counts of the scenario's frames say nothing either
    // (counts_need_premise).
    bool premise_missing = false;
    // A count of the scenario's frames or outcomes that fell short of its
    // least (frame_count's, completion_count's and rnr_sent's at_least):
    // where the premise was missing, it says nothing of the DUT either
    // (counts_need_premise).
    bool count_short = false;
    // A failure that rests on the order of two of the DUT's frames sent from
    // different UDP source ports (query_answer's RNR after its RNR_SYNC): in
    // real time a fabric spraying by port may have swapped them. It stands
    // unless the run's lab shows that it reorders (run::judge_order, D158).
    bool cross_port_order = false;
};

class sender_view;    // sender_view.h

// What a check sees: the trace, its arguments (defaults filled in), and
// analyses of the trace built on first use.
class context {
public:
    context(const trace::trace& tr, std::map<std::string, std::string> args);
    ~context();
    const trace::trace& tr() const { return tr_; }
    const sender_view& sender() const;
    // Real time: the round trip the lab declared for a fabric between the
    // engine and the DUT (wire_rtt=, D146), 0 otherwise. A deadline from a
    // frame the engine sent to the DUT's answer, both stamped at the engine,
    // takes it on top: the frame reaches the DUT, and the answer the engine,
    // that much later in all.
    core::nanos wire_rtt() const { return tr_.timing.realtime ? tr_.timing.wire_rtt_declared : core::nanos{0}; }

    const std::map<std::string, std::string>& all() const { return args_; }
    bool has(const std::string& name) const { return args_.count(name) && !args_.at(name).empty(); }
    const std::string& str(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    double number(const std::string& name) const;
    bool boolean(const std::string& name) const;
    std::vector<std::int64_t> int_list(const std::string& name) const;
    // A duration parameter: an expression in protocol terms (expr.h). `extra`
    // binds case-specific names, such as rnr_time for the RNR being checked.
    core::result<core::nanos> duration(const std::string& name,
                                       const std::map<std::string, double>& extra = {}) const;
    // The value of a name in expressions: spec parameters and measured values.
    std::optional<double> resolve(std::string_view name, std::string_view arg,
                                  const std::map<std::string, double>& extra = {}) const;

private:
    const trace::trace& tr_;
    std::map<std::string, std::string> args_;
    mutable std::unique_ptr<sender_view> sender_;
};

// What a timing check needs of the engine in real time (docs/timing.md): the
// engine's actions and reactions (and, with `completions`, the completion times
// an agent reports) must be accurate to `resolution`, or the check cannot tell
// a conforming DUT from a broken one.
struct timing_need {
    core::nanos resolution{0};
    std::string what;  // what the resolution is, e.g. "the resend's deadline (within)"
    bool completions = false;
    // Only a failure can come from the engine's lateness (a pass rests on
    // the DUT's own frames, stamped by the kernel: ctrl_repeat's spacing).
    bool fails_only = false;
    // The failure is a frame of the DUT's that came `span` after one of the
    // engine's (a resend after the ACK covering it, a packet after the RNR):
    // only a hold of the host at least that long, less `resolution` (the
    // crossing window), can have kept the DUT from seeing the engine's frame
    // first. The needed resolution is then span - resolution.
    bool lag_explains_span = false;
    // The verdict needs the span to have run free of holds for long enough:
    // what counts is how long the host held things in all within the span
    // (timing_figures::held_between), not the worst single hold. A window's
    // drain: each hold of the engine or the DUT stretches it.
    bool cumulative = false;
};

struct assertion_def {
    std::string name;
    std::vector<std::string> clauses;  // clause IDs this check tests
    std::string summary;
    std::vector<param_decl> params;
    std::function<outcome(const context&)> check;
    // Empty for a timing-free check; else what it needs (nullopt: nothing in
    // this run, e.g. an optional bound not given).
    std::function<std::optional<timing_need>(const context&)> needs = {};
    // Judges real-time timing inside the check, window by window or packet by
    // packet, with no timing need (grant_rate, acks_conform,
    // completion_after_placement; docs/timing.md "What a check needs").
    bool times_itself = false;
    // Whether a real-time verdict of it rests on when frames reached the DUT
    // or left it: a fabric between the engine and the DUT moves those
    // moments (D146, run::judge_wire).
    bool timed() const { return static_cast<bool>(needs) || times_itself; }
};

// Built-in assertions, in a fixed order (no static registration).
const std::vector<assertion_def>& builtin();
const assertion_def* find(std::string_view name);

// Names usable in duration expressions, with their meaning (docs, validation).
const std::vector<std::pair<std::string, std::string>>& expression_names();
bool is_expression_name(std::string_view name);

// Validates `args` against the declaration (unknown or missing names, types).
core::status check_args(const assertion_def& def, const std::map<std::string, std::string>& args);
// Runs one assertion; exceptions inside a check become an error verdict. In
// real time a timing check whose need the engine's measured lateness exceeds
// is inconclusive, with both figures and what it would have said.
outcome evaluate(const assertion_def& def, const trace::trace& tr, const std::map<std::string, std::string>& args);

// Real time: whether holds excuse failure `o` (outcome::excused_by): the two
// longest holds meeting its span are longer than its excess. What
// apply_timing decides for such a failure; checks that report the first
// failure no hold excuses ask it while they look.
bool excused(const outcome& o, const trace::timing_figures& tm);

// Applies a timing need to an outcome (what evaluate() does after the check).
outcome apply_timing(outcome o, const timing_need& need, const trace::timing_figures& tm);
// Real time: a timing check's failure where the DUT's quickest answer on the
// wire in the run (`quickest`) took longer than the trace's crossing window becomes
// inconclusive, naming both (D146). The runner applies it to a case's
// failures once the run's quickest answer is known (run::judge_wire).
outcome beyond_crossing(outcome o, const trace::trace& tr, core::nanos quickest);

// Helpers for checks.
std::string fmt_time(core::nanos t);
// "the DUT's threads waited X in all for a CPU " (pid=), or where the DUT's
// process is not named, the host's CPU pressure that bounds them (D95).
std::string waited_words(const trace::timing_figures& tm, core::nanos waited);
// The IP address bytes of a record's far end, the DUT's peer: the
// destination of a frame from the DUT, the source of one to it.
std::string far_end(const trace::record& r);
outcome pass(std::string message);
outcome fail(std::string message, std::string expected, std::string actual, std::vector<std::size_t> frames = {});
outcome inconclusive(std::string message);
// Inconclusive because the case's premise did not arise: "the case's premise
// did not arise: " + what, with premise_missing set.
outcome premise_not_met(std::string what);
// `o` with the time span its verdict rests on.
outcome over(outcome o, core::nanos from, core::nanos to);
// The check could not be evaluated (a parameter with no value in this run, ...).
outcome error(std::string message);

}  // namespace mrct::assertions
