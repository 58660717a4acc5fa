#include "run/actions.h"

#include "core/units.h"
#include "trace/match.h"
#include "wire/protocol.h"

namespace mrct::run {

using namespace wire;

const std::vector<std::string>& filter_set::actions() {
    static const std::vector<std::string> k = {"drop", "duplicate", "delay", "mark_ce"};
    return k;
}

namespace {
trace::field_map plain(const plan::args& a) {
    trace::field_map m;
    for (const auto& [k, v] : a) m[k] = v.text;
    return m;
}
}  // namespace

core::status filter_set::check_match(const plan::args& match) {
    auto st = trace::check_match(plain(match));
    if (!st) return core::error{(match.empty() ? std::string() : match.begin()->second.at.str() + ": ") + st.err().message};
    return st;
}

bool filter_set::matches(const plan::args& match, const trace::record& r) { return trace::matches(plain(match), r); }

core::status filter_set::add(const plan::action& a, int step) {
    filter f;
    f.kind = a.name;
    f.step = step;
    auto get = [&](const std::string& k, const std::string& def) {
        auto it = a.a.find(k);
        return it == a.a.end() ? def : it->second.text;
    };
    if (a.name == "skew") {
        // Every frame on a PathID, both directions, delayed: skew between paths.
        f.kind = "delay";
        f.match["path"] = {get("path", "0"), a.at};
        f.remaining = 0;
        auto by = core::parse_duration_ns(get("add", "0"));
        if (!by) return core::error{"skew: 'add' expects a duration"};
        f.by = core::nanos{*by};
        for (auto d : {trace::dir::from_dut, trace::dir::to_dut}) {
            f.d = d;
            f_.push_back(f);
        }
        return core::ok_status();
    }
    bool known = false;
    for (const auto& n : actions()) known |= n == a.name;
    if (!known) return core::error{"unknown action '" + a.name + "'"};
    const auto dir = get("dir", a.name == "mark_ce" ? "from_dut" : "from_dut");
    if (dir != "from_dut" && dir != "to_dut") return core::error{a.name + ": dir must be from_dut or to_dut"};
    f.d = dir == "from_dut" ? trace::dir::from_dut : trace::dir::to_dut;
    f.remaining = static_cast<unsigned>(std::stoul(get("count", "1")));
    f.skip = static_cast<unsigned>(std::stoul(get("skip", "0")));
    if (a.a.count("for")) {
        auto d = core::parse_duration_ns(get("for", ""));
        if (!d) return core::error{a.name + ": 'for' expects a duration"};
        f.until = s_.now() + core::nanos{*d};
    }
    for (const auto& [k, v] : a.a)
        if (k.rfind("match.", 0) == 0) f.match[k.substr(6)] = v;
    if (a.name == "delay") {
        auto by = core::parse_duration_ns(get("by", "0"));
        if (!by) return core::error{"delay: 'by' expects a duration"};
        f.by = core::nanos{*by};
    }
    f_.push_back(std::move(f));
    return core::ok_status();
}

void filter_set::lift(int step) {
    for (auto& f : f_)
        if (f.step == step) f.remaining = ~0u;  // used up: apply() passes it by
}

filter_set::fate filter_set::apply(const trace::record& r) {
    fate out;
    for (auto& f : f_) {
        if (f.d != r.d || f.remaining == ~0u) continue;  // other direction, or used up (count 0 = unlimited)
        if (s_.now() >= f.until) continue;
        if (!matches(f.match, r)) continue;
        if (f.skip > 0) {
            --f.skip;
            continue;
        }
        if (f.remaining > 0 && --f.remaining == 0) f.remaining = ~0u;
        // Steps by number; -1 the setup's filters, -2 the handshake's.
        const std::string by = f.step >= 0 ? "step " + std::to_string(f.step) : f.step == -2 ? "handshake" : "setup";
        if (f.kind == "drop") {
            out.dropped = true;
            out.action = "dropped by " + by;
            out.step = f.step;
            return out;
        }
        if (f.kind == "duplicate") out.duplicate = true;
        if (f.kind == "mark_ce") out.mark_ce = true;
        if (f.kind == "delay") out.delay += f.by;
        out.action += (out.action.empty() ? "" : "; ") + f.kind + " by " + by;
        out.step = f.step;
    }
    return out;
}

}  // namespace mrct::run
