// Coarse-time operation: a case slowed down K times (time_scale.h).
#include "run/time_scale.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "assertions/assertion.h"
#include "core/units.h"
#include "endpoint/config.h"
#include "fabric/stage.h"
#include "run/keys.h"
#include "peer/craft.h"
#include "run/case_exec.h"
#include "wire/protocol.h"
#include "wire/rnr_timer.h"

namespace mrct::run {

namespace {

// What scale_case writes out for an endpoint parameter the case leaves at the
// spec's default (§5), taken from endpoint::config's defaults.
std::vector<std::pair<std::string, core::nanos>> endpoint_times() {
    const endpoint::config d;
    return {{"rto_initial", d.rto_initial}, {"rto_min", d.rto_min}, {"rto_max", d.rto_max},
            {"ack_delay", d.ack_delay},     {"grant_idle", d.grant_idle}};
}

// Actions' time arguments: the durations their declarations name (run/program.h).
bool is_time_arg(const std::string& action, const std::string& key) {
    if (const auto* d = find_action(action))
        for (const auto& a : d->args)
            if (a.name == key) return a.type == arg_decl::kind::duration;
    return false;
}

std::string ns_text(std::int64_t ns) { return std::to_string(ns) + "ns"; }

std::string bps_text(double bps) {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", bps);
    return b;
}

core::result<std::string> scale_duration(const plan::arg& a, unsigned k, const std::string& what) {
    auto v = core::parse_duration_ns(a.text);
    if (!v) return core::error{a.at.str() + ": " + what + ": '" + a.text + "' is not a duration"};
    if (*v == std::numeric_limits<std::int64_t>::max()) return a.text;  // never
    if (*v > std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(k))
        return core::error{a.at.str() + ": " + what + ": '" + a.text + "' times " + std::to_string(k) + " overflows"};
    return ns_text(*v * static_cast<std::int64_t>(k));
}

core::result<std::string> scale_rate(const plan::arg& a, unsigned k, const std::string& what) {
    auto v = core::parse_rate_bps(a.text);
    if (!v) return core::error{a.at.str() + ": " + what + ": '" + a.text + "' is not a rate"};
    return bps_text(*v / k);
}

core::result<std::string> scale_code(const plan::arg& a, unsigned k, const std::string& what) {
    auto c = core::parse_count(a.text);
    if (!c || *c >= wire::k_rnr_timer_codes)
        return core::error{a.at.str() + ": " + what + ": '" + a.text + "' is not a TimerCode (0..31)"};
    auto s = scaled_rnr_code(*c, k);
    if (!s)
        return core::error{a.at.str() + ": " + what + ": no TimerCode is " + std::to_string(k) + " times code " + a.text +
                           " (the longest is 655.36 ms)"};
    return std::to_string(*s);
}

// Sets `key` of `m` to `f(value)`, where value is the case's or `def`.
template <class F>
core::status rewrite(plan::args& m, const std::string& key, const std::string& def, const plan::loc& at, F&& f) {
    auto it = m.find(key);
    plan::arg a = it != m.end() ? it->second : plan::arg{def, at};
    if (a.text.empty()) return core::ok_status();
    auto v = f(a);
    if (!v) return v.err();
    a.text = *v;
    m[key] = a;
    return core::ok_status();
}

core::status scale_endpoint(plan::args& m, unsigned k, const plan::loc& at, const std::string& side) {
    const endpoint::config d;
    for (const auto& t : endpoint_times()) {
        const std::string what = side + "." + t.first;  // clang: no structured bindings in lambdas
        if (auto st = rewrite(m, t.first, ns_text(t.second.count()), at,
                              [&](const plan::arg& a) { return scale_duration(a, k, what); });
            !st)
            return st;
    }
    if (auto st = rewrite(m, "inbound_rate", bps_text(d.inbound_rate_bps), at,
                          [&](const plan::arg& a) { return scale_rate(a, k, side + ".inbound_rate"); });
        !st)
        return st;
    return rewrite(m, "rnr_timer_code", std::to_string(d.rnr_timer_code), at,
                   [&](const plan::arg& a) { return scale_code(a, k, side + ".rnr_timer_code"); });
}

core::status scale_action(plan::action& a, unsigned k) {
    for (auto& [key, v] : a.a) {
        if (!is_time_arg(a.name, key)) continue;
        auto s = scale_duration(v, k, a.name + "." + key);
        if (!s) return s.err();
        v.text = *s;
    }
    if (a.name != "inject") return core::ok_status();
    // Crafted frames: an RNR's TimerCode (peer/craft.cpp's default 14) and an
    // ACK's GrantRate, in 100 Mb/s units.
    const auto tmpl = a.a.count("template") ? a.a.at("template").text : std::string("write");
    if (tmpl == "rnr")
        if (auto st = rewrite(a.a, "code", std::to_string(peer::k_rnr_code_default), a.at,
                              [&](const plan::arg& x) { return scale_code(x, k, "inject.code"); });
            !st)
            return st;
    if (auto it = a.a.find("grant"); it != a.a.end()) {
        auto g = core::parse_count(it->second.text);
        if (!g) return core::error{it->second.at.str() + ": inject.grant: '" + it->second.text + "' is not a GrantRate"};
        if (*g != 0xFFFF) {
            if (*g % k != 0)
                return core::error{it->second.at.str() + ": inject.grant: GrantRate " + it->second.text +
                                   " (units of 100 Mb/s) cannot be divided by " + std::to_string(k)};
            it->second.text = std::to_string(*g / k);
        }
    }
    return core::ok_status();
}

core::status scale_stage(plan::action& st, unsigned k) {
    const auto* kind = fabric::find_stage_kind(st.name);
    if (!kind) return core::ok_status();  // validate() reports it
    for (const auto& d : kind->decls) {
        if (d.name == "path" || d.name == "dir") continue;
        core::status s = core::ok_status();
        if (d.type == fabric::param_type::duration)
            s = rewrite(st.a, d.name, d.default_value, st.at,
                        [&](const plan::arg& a) { return scale_duration(a, k, st.name + "." + d.name); });
        else if (d.type == fabric::param_type::rate && st.a.count(d.name))
            s = rewrite(st.a, d.name, "", st.at,
                        [&](const plan::arg& a) { return scale_rate(a, k, st.name + "." + d.name); });
        if (!s) return s;
    }
    return core::ok_status();
}

core::status scale_expectation(plan::expectation& e, unsigned k) {
    const auto* def = assertions::find(e.name);
    if (!def) return core::ok_status();  // validate() reports it
    for (const auto& p : def->params) {
        if (p.type == assertions::param_type::duration) {
            auto it = e.a.find(p.name);
            if (it != e.a.end()) it->second.text = scale_expression(it->second.text, k);
            else if (!p.def.empty()) e.a[p.name] = plan::arg{scale_expression(p.def, k), e.at};
        } else if (e.name == "grant_advertised" && p.name == "rate" && e.a.count("rate")) {
            auto& a = e.a.at("rate");
            auto s = scale_rate(a, k, "grant_advertised.rate");
            if (!s) return s.err();
            a.text = *s;
        }
    }
    return core::ok_status();
}

}  // namespace

bool valid_time_scale(unsigned k) { return k >= 1 && k <= k_max_time_scale && (k & (k - 1)) == 0; }

std::optional<unsigned> scaled_rnr_code(unsigned code, unsigned k) {
    if (code >= wire::k_rnr_timer_codes || !valid_time_scale(k)) return std::nullopt;
    const auto want = wire::rnr_timer_duration(static_cast<std::uint8_t>(code)) * k;
    for (unsigned c = 0; c < wire::k_rnr_timer_codes; ++c)
        if (wire::rnr_timer_duration(static_cast<std::uint8_t>(c)) == want) return c;
    return std::nullopt;
}

std::string scale_expression(const std::string& expr, unsigned k) {
    // A number directly followed by ns/us/ms/s (and nothing alphanumeric),
    // not part of a name: the same tokens assertions/expr.cpp reads as times.
    std::string out;
    std::size_t i = 0;
    auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    while (i < expr.size()) {
        const char ch = expr[i];
        const bool starts_number = (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') && (i == 0 || !ident(expr[i - 1]));
        if (!starts_number) {
            out += ch;
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < expr.size() && (std::isdigit(static_cast<unsigned char>(expr[j])) || expr[j] == '.')) ++j;
        std::size_t u = j;
        while (u < expr.size() && std::isalpha(static_cast<unsigned char>(expr[u]))) ++u;
        const std::string unit = expr.substr(j, u - j);
        const bool time_unit = unit == "ns" || unit == "us" || unit == "ms" || unit == "s";
        if (time_unit && (u == expr.size() || !ident(expr[u]))) {
            auto ns = core::parse_duration_ns(expr.substr(i, u - i));
            if (ns) {
                out += ns_text(*ns * static_cast<std::int64_t>(k));
                i = u;
                continue;
            }
        }
        out.append(expr, i, j - i);
        i = j;
    }
    return out;
}

core::result<plan::test_case> scale_case(const plan::test_case& in, unsigned k) {
    if (!valid_time_scale(k))
        return core::error{"time scale " + std::to_string(k) + ": expected a power of two, 1.." +
                           std::to_string(k_max_time_scale)};
    if (k == 1) return in;
    plan::test_case c = in;
    // Topology: delays, path delays, the bottleneck rate (the keys
    // run/keys.h marks scaled), defaults included.
    for (const auto& d : topology_decls()) {
        if (!d.scaled) continue;
        const std::string name(d.name);
        auto scale = [&](const plan::arg& a, const std::string& key) {
            return d.type == key_decl::kind::rate ? scale_rate(a, k, "topology." + key) : scale_duration(a, k, "topology." + key);
        };
        if (d.per_path) {
            for (auto& [key, v] : c.topology)
                if (key.rfind(name + ".", 0) == 0) {
                    auto s = scale(v, key);
                    if (!s) return s.err();
                    v.text = *s;
                }
        } else if (auto st = rewrite(c.topology, name, std::string(d.def), c.at,
                                     [&](const plan::arg& a) { return scale(a, name); });
                   !st) {
            return st.err();
        }
    }
    for (auto& st : c.impair)
        if (auto s = scale_stage(st, k); !s) return s.err();
    if (auto st = scale_endpoint(c.dut, k, c.at, "dut"); !st) return st.err();
    if (auto st = scale_endpoint(c.peer, k, c.at, "peer"); !st) return st.err();
    for (auto* list : {&c.handshake, &c.setup})
        for (auto& a : *list)
            if (auto st = scale_action(a, k); !st) return st.err();
    for (auto& s : c.steps) {
        if (s.time) {
            auto t = scale_duration(*s.time, k, "at");
            if (!t) return t.err();
            s.time->text = *t;
        }
        if (s.on && s.on->after) {
            auto t = scale_duration(*s.on->after, k, "after");
            if (!t) return t.err();
            s.on->after->text = *t;
        }
        for (auto& a : s.actions)
            if (auto st = scale_action(a, k); !st) return st.err();
    }
    for (auto& e : c.expect)
        if (auto st = scale_expectation(e, k); !st) return st.err();
    for (const auto& l : limit_decls()) {  // the durations run/keys.h marks scaled, their defaults too
        if (!l.scaled) continue;
        const std::string name(l.name);
        if (auto st = rewrite(c.limits, name, std::string(l.def), c.at,
                              [&](const plan::arg& a) { return scale_duration(a, k, "limits." + name); });
            !st)
            return st.err();
    }
    return c;
}

}  // namespace mrct::run
