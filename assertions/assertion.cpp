#include "assertions/assertion.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "assertions/expr.h"
#include "assertions/sender_view.h"
#include "trace/match.h"

namespace mrct::assertions {

std::string_view verdict_name(verdict v) {
    switch (v) {
    case verdict::pass: return "pass";
    case verdict::fail: return "fail";
    case verdict::inconclusive: return "inconclusive";
    case verdict::error: return "error";
    case verdict::skipped: return "skipped";
    }
    return "?";
}

std::string_view param_type_name(param_type t) {
    switch (t) {
    case param_type::integer: return "integer";
    case param_type::number: return "number";
    case param_type::duration: return "duration";
    case param_type::boolean: return "boolean";
    case param_type::string: return "string";
    case param_type::int_list: return "integer list";
    }
    return "?";
}

context::context(const trace::trace& tr, std::map<std::string, std::string> args) : tr_(tr), args_(std::move(args)) {}
context::~context() = default;

const sender_view& context::sender() const {
    if (!sender_) sender_ = std::make_unique<sender_view>(tr_);
    return *sender_;
}

const std::string& context::str(const std::string& name) const {
    static const std::string k_empty;
    auto it = args_.find(name);
    return it == args_.end() ? k_empty : it->second;
}

std::int64_t context::integer(const std::string& name) const { return std::stoll(str(name), nullptr, 0); }
double context::number(const std::string& name) const { return std::stod(str(name)); }
bool context::boolean(const std::string& name) const { return str(name) == "true"; }

std::vector<std::int64_t> context::int_list(const std::string& name) const {
    std::vector<std::int64_t> v;
    std::string s = str(name);
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t j = s.find(',', i);
        if (j == std::string::npos) j = s.size();
        auto item = s.substr(i, j - i);
        if (!item.empty()) v.push_back(std::stoll(item, nullptr, 0));
        i = j + 1;
    }
    return v;
}

const std::vector<std::pair<std::string, std::string>>& expression_names() {
    static const std::vector<std::pair<std::string, std::string>> k = {
        {"rto_min", "minimum RTO (§5, as configured)"},
        {"rto_max", "maximum RTO"},
        {"rto_initial", "initial RTO"},
        {"ack_delay", "ACK interval (20 µs by default)"},
        {"grant_idle", "grant idle time"},
        {"rtt(pN)", "median Karn-valid RTT sample of the DUT's path N, measured on the wire"},
        {"srtt(pN)", "same as rtt(pN)"},
        {"rtt", "the smallest per-path median RTT"},
        {"rnr_time", "the decoded timer of the RNR being checked (RNR assertions)"},
        {"cwnd_initial", "initial window in packets (a number)"},
        {"retry_limit", "retry limit (a number)"},
        {"mtu", "agreed MTU in bytes (a number)"},
    };
    return k;
}

bool is_expression_name(std::string_view name) {
    for (const auto& [n, _] : expression_names()) {
        std::string_view base = n;
        if (auto p = base.find('('); p != std::string_view::npos) base = base.substr(0, p);
        if (base == name) return true;
    }
    return false;
}

std::optional<double> context::resolve(std::string_view name, std::string_view arg,
                                       const std::map<std::string, double>& extra) const {
    if (auto it = extra.find(std::string(name)); it != extra.end()) return it->second;
    const auto& p = tr_.p;
    auto ns = [](core::nanos d) { return static_cast<double>(d.count()); };
    if (name == "rto_min") return ns(p.rto_min);
    if (name == "rto_max") return ns(p.rto_max);
    if (name == "rto_initial") return ns(p.rto_initial);
    if (name == "ack_delay") return ns(p.ack_delay);
    if (name == "grant_idle") return ns(p.grant_idle);
    if (name == "cwnd_initial") return p.cwnd_initial;
    if (name == "retry_limit") return p.retry_limit;
    if (name == "mtu") return p.mtu;
    if (name == "rtt" || name == "srtt") {
        const auto& sv = sender();
        if (arg.empty()) {
            std::optional<double> best;
            for (const auto& [path, _] : sv.paths)
                if (auto r = sv.rtt(path)) best = best ? std::min(*best, ns(*r)) : ns(*r);
            return best ? *best : std::nan("");
        }
        if (arg.size() < 2 || arg[0] != 'p') return std::nullopt;
        unsigned path = 0;
        try {
            path = static_cast<unsigned>(std::stoul(std::string(arg.substr(1))));
        } catch (...) {
            return std::nullopt;
        }
        auto r = sv.rtt(path);
        return r ? ns(*r) : std::nan("");
    }
    return std::nullopt;
}

core::result<core::nanos> context::duration(const std::string& name, const std::map<std::string, double>& extra) const {
    auto v = eval_expr(str(name), [&](std::string_view n, std::string_view a) { return resolve(n, a, extra); });
    if (!v) return core::error{name + ": " + v.err().message};
    return core::nanos{static_cast<std::int64_t>(std::llround(*v))};
}

std::string far_end(const trace::record& r) {
    const auto& f = r.f();
    const bool out = r.d == trace::dir::from_dut;
    if (f.has(wire::has_ipv4)) {
        const auto& a = out ? f.ipv4.dst : f.ipv4.src;
        return {a.begin(), a.end()};
    }
    const auto& a = out ? f.ipv6.dst : f.ipv6.src;
    return {a.begin(), a.end()};
}

std::string fmt_time(core::nanos t) {
    char buf[48];
    const double us = core::to_micros(t);
    if (std::fabs(us) >= 1000) std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
    else std::snprintf(buf, sizeof buf, "%.3f us", us);
    return buf;
}

outcome pass(std::string message) { return {verdict::pass, std::move(message), {}, {}, {}, {}, {}}; }
outcome over(outcome o, core::nanos from, core::nanos to) {
    o.span = {from, to};
    return o;
}
outcome fail(std::string message, std::string expected, std::string actual, std::vector<std::size_t> frames) {
    if (frames.size() > 16) frames.resize(16);
    return {verdict::fail, std::move(message), std::move(expected), std::move(actual), std::move(frames), {}, {}};
}
outcome inconclusive(std::string message) { return {verdict::inconclusive, std::move(message), {}, {}, {}, {}, {}}; }
outcome premise_not_met(std::string what) {
    auto o = inconclusive("the case's premise did not arise: " + std::move(what));
    o.premise_missing = true;
    return o;
}
outcome error(std::string message) { return {verdict::error, std::move(message), {}, {}, {}, {}, {}}; }

namespace {
// What can have delayed a failure that has excused_by (D62): the two longest
// holds in its span, or all of them for a throughput's failure; and the DUT's
// own waits for a CPU there, in all (D67). The larger counts.
trace::timing_figures::excuse excusing_holds(const outcome& o, const trace::timing_figures& tm) {
    const auto [from, to] = *o.span;
    if (!o.excused_in_all) return tm.excuse_between(from, to);
    return {tm.held_between(from, to), tm.dut_waited_between(from, to)};
}

}  // namespace

// Waits for a CPU in a span, as measured: the DUT's own (pid=) or, where its
// process is not named, the host's CPU pressure, which bounds them (D95).
std::string waited_words(const trace::timing_figures& tm, nanos waited) {
    if (tm.host_pressure_read && !tm.dut_waits_read)
        return "tasks on the DUT's host waited " + fmt_time(waited) +
               " in all for a CPU (its CPU pressure; the DUT's own waits are not read without pid=) ";
    return "the DUT's threads waited " + fmt_time(waited) + " in all for a CPU ";
}

bool excused(const outcome& o, const trace::timing_figures& tm) {
    return tm.realtime && o.v == verdict::fail && o.excused_by && o.span && excusing_holds(o, tm).most() > *o.excused_by;
}

outcome apply_timing(outcome o, const timing_need& need, const trace::timing_figures& tm) {
    if (o.v != verdict::pass && o.v != verdict::fail) return o;  // nothing judged: nothing to doubt
    if (o.timing_free) return o;
    // The worst figure, named by what it measured: over the span the verdict
    // rests on where the check gave one, else over the whole case.
    // (figure, the sentence that states it)
    auto late = [](nanos d, const std::string& who) { return who + " up to " + fmt_time(d) + " late"; };
    std::pair<nanos, std::string> worst{tm.event_late_max, late(tm.event_late_max, "events (timers, deliveries) ran")};
    if (tm.assumed_hold > worst.first) worst = {tm.assumed_hold, ""};  // worded below
    if (tm.step_late_max > worst.first) worst = {tm.step_late_max, late(tm.step_late_max, "plan steps ran")};
    if (tm.rx_delay_max > worst.first) worst = {tm.rx_delay_max, late(tm.rx_delay_max, "DUT frames were handled")};
    if (tm.turn_max > worst.first)
        worst = {tm.turn_max, "frames left the engine up to " + fmt_time(tm.turn_max) + " after their stamps (a turn of its events, D137)"};
    const std::string between = o.span ? "between " + fmt_time(o.span->first) + " and " + fmt_time(o.span->second) : "";
    if (o.span && o.excused_by && o.v == verdict::fail) {
        const auto e = excusing_holds(o, tm);
        worst = {e.most(), e.dut_waits > e.holds
                               ? waited_words(tm, e.dut_waits) + between
                               : "the engine or its host was held " + fmt_time(e.holds) +
                                     (o.excused_in_all ? " in all " : " by its two longest holds ") + between};
    } else if (o.span && need.cumulative) {
        // `late` holds the DUT's waits for a CPU too: say whose holds these
        // were where the DUT waited (a DUT starved of CPU is the vendor's
        // to know, not the engine's host).
        const nanos held = tm.held_between(o.span->first, o.span->second);
        const nanos waited = trace::timing_figures::covered(tm.dut_waits, o.span->first, o.span->second);  // part of held
        worst = {held, waited > nanos{0} ? "the engine, its host or the DUT was held for " + fmt_time(held) + " in all " +
                                               between + " (" + waited_words(tm, waited) + "in it)"
                                         : "the engine or its host was held for " + fmt_time(held) + " in all " + between};
    } else if (o.span) {
        const nanos l = tm.late_between(o.span->first, o.span->second);
        const nanos waited = tm.dut_waited_between(o.span->first, o.span->second);  // in all (D67)
        worst = waited > l ? std::pair{waited, waited_words(tm, waited) + between}
                           : std::pair{l, late(l, "the engine or its host ran, " + between + ",")};
    }
    if (tm.assumed_hold > nanos{0})  // a passive capture: nothing measured, say what was assumed
        worst.second = "the DUTs' host may have held them " + fmt_time(worst.first) + (between.empty() ? "" : " " + between) +
                       " (a passive capture measures no holds; --max-hold " + fmt_time(tm.assumed_hold) + " at any moment)";
    if (need.completions && tm.poll_rtt_max > worst.first)
        worst = {tm.poll_rtt_max, "completion times were uncertain by up to " + fmt_time(tm.poll_rtt_max)};
    nanos resolution = need.resolution;
    std::string what = need.what;
    if (need.lag_explains_span && o.span) {
        resolution = std::max(nanos{0}, o.span->second - o.span->first - need.resolution);
        what = "holds as long as the failure's span, " + fmt_time(o.span->second - o.span->first) + ", less " + need.what;
    }
    if (o.excused_by && o.span && o.v == verdict::fail) {
        resolution = *o.excused_by;
        what = o.excused_in_all ? "holds as long in all as the failure's excess over its bound"
                                : "holds as long as the failure's excess over its bound: one where the timer started, one where it was due";
    }
    o.measured["engine_late_us"] = core::to_micros(worst.first);
    o.measured["needs_us"] = core::to_micros(resolution);
    if (worst.first <= resolution || (need.fails_only && o.v == verdict::pass)) return o;
    o.message = worst.second + "; this check needs " + fmt_time(resolution) + " (" + what + "); it would have said " +
                std::string(verdict_name(o.v)) + ": " + o.message;
    o.v = verdict::inconclusive;
    o.timing_doubt = true;
    return o;
}

const assertion_def* find(std::string_view name) {
    for (const auto& a : builtin())
        if (a.name == name) return &a;
    return nullptr;
}

core::status check_args(const assertion_def& def, const std::map<std::string, std::string>& args) {
    for (const auto& kv : args) {
        const std::string& k = kv.first;  // plain references: lambdas below capture them (clang 14)
        const std::string& v = kv.second;
        const param_decl* d = nullptr;
        for (const auto& p : def.params)
            if (p.name == k || (p.name == "match" && k.rfind("match.", 0) == 0)) d = &p;
        if (!d) {
            std::string names;
            for (const auto& p : def.params) names += (names.empty() ? "" : ", ") + p.name;
            return core::error{"assertion '" + def.name + "' has no parameter '" + k + "' (expected one of: " +
                               (names.empty() ? "none" : names) + ")"};
        }
        auto bad = [&](const std::string& what) {
            return core::error{"assertion '" + def.name + "', parameter '" + k + "': expected " + what + ", got '" + v + "'"};
        };
        try {
            switch (d->type) {
            case param_type::integer: {
                std::size_t pos = 0;
                (void)std::stoll(v, &pos, 0);
                if (pos != v.size()) return bad("an integer");
                break;
            }
            case param_type::number: {
                std::size_t pos = 0;
                (void)std::stod(v, &pos);
                if (pos != v.size()) return bad("a number");
                break;
            }
            case param_type::boolean:
                if (v != "true" && v != "false") return bad("true or false");
                break;
            case param_type::duration: {
                auto st = check_expr(v, [](std::string_view n) { return is_expression_name(n); });
                if (!st) return core::error{"assertion '" + def.name + "', parameter '" + k + "': " + st.err().message};
                break;
            }
            case param_type::int_list:
                for (char ch : v)
                    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != ',' && ch != ' ') return bad("integers separated by commas");
                break;
            case param_type::string:
                if (k.rfind("match.", 0) == 0)
                    if (auto st = trace::check_match({{k.substr(6), v}}); !st)
                        return core::error{"assertion '" + def.name + "': " + st.err().message};
                break;
            }
        } catch (const std::exception&) {
            return bad(std::string(param_type_name(d->type)));
        }
    }
    for (const auto& p : def.params)
        if (p.def.empty() && !p.optional && !args.count(p.name))
            return core::error{"assertion '" + def.name + "' needs parameter '" + p.name + "' (" + p.help + ")"};
    return core::ok_status();
}

// D146: where the DUT's quickest answer on the wire in the run (at least the
// wire's round trip) took longer than the crossing window, a fabric sits
// between the engine and the DUT that the window does not cover: frames in
// flight may have crossed where a timing check takes them in the order the
// engine saw them. Such a check's failure is not judged. A pass stands: a
// slower wire only makes the DUT's answers look later. No answer known
// (`quickest` 0): nothing to say.
outcome beyond_crossing(outcome o, const trace::trace& tr, core::nanos quickest) {
    const auto& tm = tr.timing;
    if (!tm.realtime || o.v != verdict::fail || o.timing_free || quickest <= tr.crossing) return o;
    o.measured["answer_min_us"] = core::to_micros(quickest);
    o.measured["crossing_us"] = core::to_micros(tr.crossing);
    o.message = "the DUT's quickest answer on the wire in this run took " + fmt_time(quickest) +
                " (a request of the engine's to its answer: the wire's round trip at the least), more than the crossing "
                "window of " + fmt_time(tr.crossing) +
                (tm.wire_rtt_declared > core::nanos{0} ? " (wire_rtt= " + fmt_time(tm.wire_rtt_declared) + " included)" : std::string{}) +
                ": frames in flight between the engine and the DUT may have crossed where this check takes them in order "
                "(a fabric between them? give its round trip as the DUT's wire_rtt=, D146); it would have said fail: " +
                o.message;
    o.v = verdict::inconclusive;
    return o;
}

outcome evaluate(const assertion_def& def, const trace::trace& tr, const std::map<std::string, std::string>& args) {
    std::map<std::string, std::string> full;
    for (const auto& p : def.params)
        if (!p.def.empty()) full[p.name] = p.def;
    for (const auto& [k, v] : args) full[k] = v;
    try {
        context c(tr, full);
        auto o = def.check(c);
        if (tr.timing.realtime && def.needs)
            if (auto need = def.needs(c)) return apply_timing(std::move(o), *need, tr.timing);
        return o;
    } catch (const std::exception& e) {
        return error("assertion '" + def.name + "' could not be evaluated: " + e.what());
    }
}

}  // namespace mrct::assertions
