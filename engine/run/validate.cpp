// Plan validation beyond shape: names and values, with file:line:col.
#include <set>
#include <algorithm>

#include "assertions/assertion.h"
#include "core/units.h"
#include "endpoint/config.h"
#include "fabric/stage.h"
#include "peer/craft.h"
#include "run/actions.h"
#include "run/clauses.h"
#include "run/keys.h"
#include "run/runner.h"

namespace mrct::run {

namespace {

const std::vector<std::pair<std::string, std::vector<std::string>>>& k_actions() {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> k = {
        {"post_send", {"side", "stream", "tag", "size", "count", "imm"}},
        {"post_write", {"side", "stream", "size", "count", "imm", "offset", "peer"}},
        {"post_recv", {"side", "tag", "size", "count"}},
        {"memory", {"size"}},
        {"close", {"side"}},
        {"fail_path", {"path", "dir"}},
        {"restore_path", {"path", "dir"}},
        {"drop", {"dir", "count", "skip", "for", "match"}},
        {"duplicate", {"dir", "count", "skip", "for", "match"}},
        {"delay", {"dir", "count", "skip", "for", "match", "by"}},
        {"mark_ce", {"dir", "count", "skip", "for", "match"}},
        {"skew", {"path", "add"}},
        {"move_port", {"path"}},
        {"lift", {"step"}},
        {"inject", {}},
    };
    return k;
}

// The range of each integer an action takes, by the field it feeds.
struct int_range {
    const char* arg;
    std::uint64_t max;
    const char* what;
    bool hex = false;
};
const int_range* int_arg(const std::string& k) {
    static const int_range k_ranges[] = {
        {"tag", 0xFFFF, "a Tag, 0..65535"},
        {"stream", 0xFFFF, "a StreamID, 0..65535"},
        {"path", 255, "a path number, 0..255"},
        {"size", 0xFFFFFFFF, "a message length, 0..4294967295 bytes"},
        {"count", 0xFFFFFFFF, "a count, 0..4294967295"},
        {"skip", 0xFFFFFFFF, "a count, 0..4294967295"},
        {"offset", 0xFFFFFFFF, "a byte offset, 0..4294967295"},
        {"imm", 0xFFFFFFFF, "32-bit immediate data (decimal or 0x hex)", true},
        {"step", 0xFFFF, "a step number, 0..65535"},
    };
    for (const auto& r : k_ranges)
        if (k == r.arg) return &r;
    return nullptr;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& capabilities() {
    static const std::vector<std::pair<std::string, std::string>> k = {
        {"write", "RDMA WRITE"},
        {"write_imm", "WRITE with immediate data"},
        {"send", "SEND"},
        {"send_imm", "SEND with immediate data"},
        {"ipv4", "MetaRoCE over IPv4"},
        {"fine_timing", "holds timing tolerances below about a millisecond (ACK delay, fast retransmit within "
                        "rto_min/2, RTO within 10% + 5 us, RNR resume within 50 us): the simulated DUT; not a "
                        "userspace stack driven in real time on a shared host"},
        {"virtual_time", "the engine and the DUT share one clock, so a step acts on the DUT's traffic at the exact "
                         "moment the plan gives (the simulated DUT; a DUT library through so:, an RTL DUT in simulation). Cases whose "
                         "scenario rests on that are not scaled for real wires (docs/timing.md, coarse time)"},
        {"raw_frames", "the engine's wire can send any frame (bad lengths, truncation): sim, so:, agent+pcap"},
        {"raw_rx", "the DUT sees frames the kernel's UDP stack would drop (truncated, bad lengths): sim, NICs"},
        {"wire_headers", "the engine sees Ethernet/IP headers as they were on the wire: sim, so:, agent+pcap"},
    };
    return k;
}

core::status validate(const plan::suite& s) {
    std::vector<std::string> errs;
    auto e = [&](const plan::loc& at, const std::string& msg) { errs.push_back(at.str() + ": " + msg); };
    // The fabric's path count of the case being checked (as case_exec::setup
    // works it out), 0 when a count is not a number (reported elsewhere).
    unsigned case_paths = 0;
    unsigned case_negotiated = 0;  // NumPaths both sides agree on: the smaller offer (MR-CONN-1)
    unsigned case_peers = 1;       // topology.peers
    // `dir` must be one of `allowed`; `path` a fabric path of the case (or
    // `all` where `all_ok`). Both are checked where they are written.
    auto check_dir = [&](const std::string& what, const plan::args& a, const std::vector<std::string>& allowed) {
        auto it = a.find("dir");
        if (it == a.end()) return;
        for (const auto& d : allowed)
            if (it->second.text == d) return;
        std::string all;
        for (const auto& d : allowed) all += (all.empty() ? "" : ", ") + d;
        e(it->second.at, what + ": dir must be one of " + all + ", got '" + it->second.text + "'");
    };
    auto check_path = [&](const std::string& what, const plan::loc& at, const plan::args& a, bool all_ok) {
        auto it = a.find("path");
        if (it == a.end()) {
            if (!all_ok) e(at, what + ": 'path' is required");
            return;
        }
        const auto& t = it->second.text;
        if (all_ok && t == "all") return;
        const auto n = core::parse_count(t);
        if (!n) {
            e(it->second.at, what + ": path must be a fabric path number" + (all_ok ? " or all" : "") + ", got '" + t + "'");
            return;
        }
        if (case_paths && *n >= case_paths)
            e(it->second.at, what + ": no fabric path " + t + " (this case's fabric has paths 0.." +
                                 std::to_string(case_paths - 1) + ")");
    };
    auto check_action = [&](const plan::action& a) {
        if (a.name == "fail_path" || a.name == "restore_path") {
            check_dir(a.name, a.a, {"to_peer", "to_dut", "both"});
            check_path(a.name, a.at, a.a, false);
        } else if (a.name == "drop" || a.name == "duplicate" || a.name == "delay" || a.name == "mark_ce") {
            check_dir(a.name, a.a, {"from_dut", "to_dut"});
        } else if (a.name == "move_port" || a.name == "skew") {
            // A path of the connection (PathID), not of the fabric.
            auto it = a.a.find("path");
            const auto n = it == a.a.end() ? std::nullopt : core::parse_count(it->second.text);
            if (n && case_negotiated && *n >= case_negotiated)
                e(it->second.at, a.name + ": no path " + it->second.text + " (the connection has PathIDs 0.." +
                                     std::to_string(case_negotiated - 1) + ")");
        } else if (a.name == "post_write") {
            auto it = a.a.find("peer");
            if (it != a.a.end() && it->second.text != "all") {
                const auto& t = it->second.text;
                const auto n = core::parse_count(t);
                if (!n)
                    e(it->second.at, "post_write: peer must be a peer number or all, got '" + t + "'");
                else if (*n >= case_peers)
                    e(it->second.at, "post_write: no peer " + t + " (this case has peers 0.." +
                                         std::to_string(case_peers - 1) + ")");
            }
        }
        const std::vector<std::string>* keys = nullptr;
        for (const auto& [n, k] : k_actions())
            if (n == a.name) keys = &k;
        if (!keys) {
            std::string all;
            for (const auto& [n, _] : k_actions()) all += (all.empty() ? "" : ", ") + n;
            return e(a.at, "unknown action '" + a.name + "' (expected one of: " + all + ")");
        }
        plan::args match;
        for (const auto& [k, v] : a.a) {
            const auto base = k.substr(0, k.find('.'));
            if (a.name == "inject") {
                bool ok = false;
                for (const auto& f : peer::craft_fields()) ok |= f == k;
                if (!ok) e(v.at, "inject: unknown field '" + k + "'");
                continue;
            }
            bool ok = false;
            for (const auto& n : *keys) ok |= n == base;
            if (!ok) {
                std::string all;
                for (const auto& n : *keys) all += (all.empty() ? "" : ", ") + n;
                e(v.at, a.name + ": unknown argument '" + k + "' (expected one of: " + all + ")");
            }
            if (base == "match") match[k.substr(6)] = v;
            if ((k == "by" || k == "add" || k == "for") && !core::parse_duration_ns(v.text)) e(v.at, a.name + ": '" + k + "' expects a duration");
            if (k == "side" && v.text != "dut" && v.text != "peer") e(v.at, "side must be dut or peer");
            // Every integer within the field it feeds, checked before
            // anything is parsed for the run (issue 23: 2^32 + 1 wrapped to
            // 1, -1 to 4294967295, tag 70000 passed, 2^64 + 1 threw).
            if (const auto* r = int_arg(k); r && !(a.name == "inject") && !(k == "path" && v.text == "all")) {
                if (!core::parse_uint(v.text, r->max, r->hex))
                    e(v.at, a.name + ": '" + k + "' expects " + r->what + ", got '" + v.text + "'");
            }
        }
        // Bytes a post moves, or a region takes, are allocated before the
        // case runs: bounded here (docs/plan-format.md, "Limits").
        auto num = [&](const char* k, std::uint64_t dflt) -> std::optional<std::uint64_t> {
            auto it = a.a.find(k);
            if (it == a.a.end()) return dflt;
            return core::parse_uint(it->second.text, int_arg(k)->max);  // out of range: reported above
        };
        if (a.name == "post_write" || a.name == "post_send" || a.name == "post_recv" || a.name == "memory") {
            const auto size = num("size", a.name == "memory" ? 8388608 : 4096);
            const auto count = a.name == "memory" ? std::optional<std::uint64_t>(1) : num("count", 1);
            if (size && count && *count > 0 && *size > s.lim.action_bytes / *count)
                e(a.at, a.name + ": " + std::to_string(*count) + " x " + std::to_string(*size) + " bytes is more than " +
                            std::to_string(s.lim.action_bytes) +
                            " bytes, the most one action may move or take (--plan-limit action_bytes=N raises it)");
        }
        if (auto st = filter_set::check_match(match); !st) errs.push_back(st.err().message);
    };
    for (const auto& c : s.cases) {
        for (std::size_t i = 0; i < c.clauses.size(); ++i)
            if (!find_clause(c.clauses[i])) e(c.clause_locs[i], "unknown clause ID '" + c.clauses[i] + "'");
        for (const auto& [k, v] : c.dut)
            if (k != "bug") {
                endpoint::config tmp;
                if (auto st = endpoint::config_set(tmp, k, v.text); !st) e(v.at, "dut: " + st.err().message);
            } else if (auto b = endpoint::bug_by_name(v.text); !b) {
                e(v.at, "dut.bug: " + b.err().message);  // a plan that names a bug profile must name a real one
            }
        for (const auto& [k, v] : c.peer) {
            endpoint::config tmp;
            if (auto st = endpoint::config_set(tmp, k, v.text); !st) e(v.at, "peer: " + st.err().message);
        }
        validate_keys(topology_decls(), "topology", c.topology, e);
        if (const auto it = c.topology.find("peers"); it != c.topology.end() && read_topology(c.topology).peers > 1 &&
                                                     c.role != "sender")
            e(it->second.at, "several peers need role: sender (they connect to the DUT)");
        {
            // topology.paths sets both sides' NumPaths; dut/peer num_paths override;
            // the fabric has the larger.
            auto num = [](const std::string& t) { return core::parse_count(t).value_or(0); };
            const auto tp = std::to_string(read_topology(c.topology).paths);
            const unsigned d = c.dut.count("num_paths") ? num(c.dut.at("num_paths").text) : num(tp);
            const unsigned p = c.peer.count("num_paths") ? num(c.peer.at("num_paths").text) : num(tp);
            case_paths = d && p ? std::max(d, p) : 0;
            case_negotiated = d && p ? std::min(d, p) : 0;
            case_peers = std::max(1u, read_topology(c.topology).peers);
        }
        for (const auto& imp : c.impair) {
            check_dir("impair '" + imp.name + "'", imp.a, {"to_peer", "to_dut", "both"});
            check_path("impair '" + imp.name + "'", imp.at, imp.a, true);
            fabric::param_map pm;
            for (const auto& [k, v] : imp.a)
                if (k != "path" && k != "dir") pm[k] = v.text;
            fabric::packet_pool pool;
            auto st = fabric::make_stage(imp.name, pm, pool, core::rng(1));
            if (!st) e(imp.at, st.err().message);
        }
        const auto& wire_filters = filter_set::actions();  // drop, duplicate, delay, mark_ce
        for (const auto& a : c.handshake) {
            if (std::find(wire_filters.begin(), wire_filters.end(), a.name) == wire_filters.end())
                e(a.at, "handshake: only drop, duplicate, delay and mark_ce act on the wire before the connection opens, "
                        "not '" + a.name + "'");
            else
                check_action(a);
        }
        for (const auto& a : c.setup) {
            if (a.name == "lift") e(a.at, "lift: only a step can end another step's filters");
            check_action(a);
        }
        for (std::size_t si = 0; si < c.steps.size(); ++si) {
            const auto& st = c.steps[si];
            if (st.time && !core::parse_duration_ns(st.time->text))
                e(st.time->at, "at: expects a duration such as 200us, got '" + st.time->text + "'");
            if (st.on)
                if (auto m = filter_set::check_match(st.on->match); !m) errs.push_back(m.err().message);
            for (const auto& a : st.actions) {
                check_action(a);
                if (a.name != "lift") continue;
                auto it = a.a.find("step");
                if (it == a.a.end()) {
                    e(a.at, "lift: 'step' is required (the number of the step whose filters end, from 0)");
                    continue;
                }
                const auto n = core::parse_count(it->second.text);
                if (!n || *n >= c.steps.size() || *n == si)
                    e(it->second.at, "lift: step must be another step of this case, 0.." + std::to_string(c.steps.size() - 1) +
                                         ", got '" + it->second.text + "'");
            }
        }
        for (const auto& x : c.expect) {
            const auto* def = assertions::find(x.name);
            if (!def) {
                e(x.at, "unknown assertion '" + x.name + "' (see `mrct docs assertions`)");
                continue;
            }
            std::map<std::string, std::string> args;
            for (const auto& [k, v] : x.a) args[k] = v.text;
            if (auto st = assertions::check_args(*def, args); !st) e(x.at, st.err().message);
        }
        validate_keys(limit_decls(), "limits", c.limits, e);
    }
    if (errs.empty()) return core::ok_status();
    // Each error once (sweep instances repeat theirs at the same place), and
    // at most the first k_max_plan_errors: a plan of 95,000 unknown keys
    // needs its first fixed, not 28 MB of the same sentence.
    std::string all;
    std::set<std::string> seen;
    std::size_t shown = 0, more = 0;
    for (const auto& x : errs) {
        if (!seen.insert(x).second) continue;
        if (shown == k_max_plan_errors) {
            ++more;
            continue;
        }
        all += (all.empty() ? "" : "\n") + x;
        ++shown;
    }
    if (more) all += "\n(" + std::to_string(more) + " more errors not shown: fix these first)";
    return core::error{all};
}

}  // namespace mrct::run
