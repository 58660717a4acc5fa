// The traffic emulator's commands (docs/emulator.md): `mrct emulate`, a bump
// in the wire between two DUTs.
#include <atomic>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/stop_signals.h"
#include "core/units.h"
#include "emulate/emulate.h"
#include "interop/interop.h"
#include "check/check.h"
#include "reports/reports.h"

#include <filesystem>
#include <map>

#include <fstream>

namespace mrct::app {

const char* verdict_mark(assertions::verdict v) {
    switch (v) {
    case assertions::verdict::pass: return "PASS";
    case assertions::verdict::fail: return "FAIL";
    case assertions::verdict::inconclusive: return "INCONCLUSIVE";
    case assertions::verdict::error: return "ERROR";
    case assertions::verdict::skipped: return "SKIP";
    }
    return "?";
}

core::result<std::map<std::string, std::string>> name_values(const std::vector<std::string>& given, const std::string& option) {
    std::map<std::string, std::string> m;
    for (const auto& p : given) {
        const auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0) return core::error{option + " '" + p + "': expected NAME=VALUE"};
        m[p.substr(0, eq)] = p.substr(eq + 1);
    }
    return m;
}

namespace {
std::atomic<bool> g_wire_stop{false};  // set by SIGINT, SIGTERM, SIGHUP (stop_signals)
}  // namespace

int run_emulate(const emulate_args& a) {
    emulate::options o;
    o.port_a = a.port_a;
    o.eal = a.eal;
    o.port_b = a.port_b;
    if (!a.config.empty()) {
        auto c = emulate::load_config(a.config);
        if (!c) {
            spdlog::error("{}", c.err().message);
            return k_exit_usage;
        }
        o.cfg = std::move(*c);
    } else {
        o.cfg = emulate::plain_config();
    }
    for (const auto& [what, text, into] : {std::tuple{"--duration", a.duration, &o.duration_ns},
                                           std::tuple{"--progress", a.progress, &o.progress_ns}}) {
        if (text.empty()) continue;
        auto d = core::parse_duration_ns(text);
        if (!d || *d < 0) {
            spdlog::error("{}: '{}' is not a duration (e.g. 10s, 500ms)", what, text);
            return k_exit_usage;
        }
        *into = *d;
    }
    o.out = a.out;
    o.capture = !a.no_capture;
    o.busy_poll = a.busy_poll;
    o.stop = &g_wire_stop;
    o.say = [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
    };
    const stop_signals sigs(g_wire_stop);
    auto r = emulate::run(o);
    if (!r) {
        spdlog::error("emulate: {}", r.err().message);
        return k_exit_infra;
    }
    std::printf("%s", emulate::summary_text(*r).c_str());
    if (!a.out.empty()) std::printf("summary: %s/emulate.json%s\n", a.out.c_str(), o.capture ? "; captures: port-a.pcap, port-b.pcap" : "");
    return k_exit_ok;
}

int run_interop(const interop_args& a) {
    interop::options o;
    for (const auto& [text, into, token] :
         {std::tuple{a.a, &o.a, a.token_a}, std::tuple{a.b, &o.b, a.token_b}}) {
        auto s = interop::parse_agent(text);
        if (!s) {
            spdlog::error("{}", s.err().message);
            return k_exit_usage;
        }
        *into = *s;
        into->token = token;
    }
    if (auto kv = name_values(a.params, "--param"); !kv) {
        spdlog::error("{} (names: docs/agent-protocol.md `configure`)", kv.err().message);
        return k_exit_usage;
    } else {
        o.params = std::move(*kv);
    }
    for (const auto& [what, text, into] : {std::tuple{"--rnr-hold", a.rnr_hold, &o.w.rnr_hold_ns},
                                           std::tuple{"--timeout", a.timeout, &o.timeout_ns}}) {
        auto d = core::parse_duration_ns(text);
        if (!d || *d < 0) {
            spdlog::error("{}: '{}' is not a duration (e.g. 5ms, 30s)", what, text);
            return k_exit_usage;
        }
        *into = *d;
    }
    o.w.writes = a.writes;
    o.w.sends = a.sends;
    o.w.streams = a.streams;
    o.w.tags = a.tags;
    o.w.write_size = a.write_size;
    o.w.send_size = a.send_size;
    o.w.rnr = !a.no_rnr;
    o.w.both_ways = !a.one_way;
    o.seed = a.seed;
    auto r = interop::run(o);
    if (!r) {
        spdlog::error("interop: {}", r.err().message);
        return k_exit_infra;
    }
    const auto text = r->dump(2);
    std::printf("%s\n", text.c_str());
    if (!a.out.empty()) {
        std::ofstream f(a.out);
        f << text << "\n";
        if (!f) {
            spdlog::error("cannot write {}", a.out);
            return k_exit_infra;
        }
    }
    if (!(*r)["complete"].get<bool>()) {
        spdlog::error("interop: {}", (*r)["reason"].get<std::string>());
        return k_exit_fail;
    }
    return k_exit_ok;
}

int run_check(const check_args& a) {
    check::options o;
    for (const auto& in : a.inputs) {
        if (std::filesystem::is_directory(in)) {
            auto ins = check::inputs_of_emulation(in);
            if (!ins) {
                spdlog::error("{}", ins.err().message);
                return k_exit_usage;
            }
            for (auto& i : *ins) {
                // --dut narrows each port to the DUTs asked for that were seen
                // there: a DUT is judged from its own port's capture only.
                if (!a.duts.empty())
                    std::erase_if(i.duts, [&](const std::string& d) {
                        return std::find(a.duts.begin(), a.duts.end(), d) == a.duts.end();
                    });
                if (!i.duts.empty()) o.inputs.push_back(std::move(i));
            }
        } else {
            check::input i{in, a.duts};
            i.lost = a.capture_lost;
            i.lost_why = "the capturer of " + std::filesystem::path(in).filename().string() + " dropped " +
                         std::to_string(a.capture_lost) + " frames before recording them (--capture-lost)";
            o.inputs.push_back(std::move(i));
        }
    }
    if (o.inputs.empty()) {
        spdlog::error("none of the --dut addresses was seen on the emulator's ports");
        return k_exit_usage;
    }
    if (auto kv = name_values(a.params, "--param"); !kv) {
        spdlog::error("{} (names: docs/agent-protocol.md `configure`)", kv.err().message);
        return k_exit_usage;
    } else {
        o.params = std::move(*kv);
    }
    if (auto d = core::parse_duration_ns(a.crossing); !d || *d < 0) {
        spdlog::error("--crossing: '{}' is not a duration (e.g. 200us)", a.crossing);
        return k_exit_usage;
    } else {
        o.crossing_ns = *d;
    }
    if (auto d = core::parse_duration_ns(a.max_hold); !d || *d < 0) {
        spdlog::error("--max-hold: '{}' is not a duration (e.g. 10ms, 0)", a.max_hold);
        return k_exit_usage;
    } else {
        o.max_hold_ns = *d;
    }
    if (auto p = check::params_of(o.params); !p) {
        spdlog::error("{}", p.err().message);
        return k_exit_usage;
    }
    auto r = check::judge(o);
    if (!r) {
        spdlog::error("check: {}", r.err().message);
        return k_exit_usage;
    }
    std::map<assertions::verdict, int> n;
    std::vector<reports::json> entries;
    for (const auto& c : *r) {
        ++n[c.v];
        std::string cl;
        for (const auto& x : c.clauses) cl += (cl.empty() ? "" : ", ") + x;
        std::printf("%-12s %-34s [%s]%s%s\n", verdict_mark(c.v), c.id.c_str(), cl.c_str(), c.v == assertions::verdict::pass ? "" : "  -- ",
                    c.v == assertions::verdict::pass ? "" : c.reason.c_str());
        if (!a.out.empty()) entries.push_back(reports::case_json(c, c.order));
    }
    std::printf("\n%zu checks: %d passed, %d failed, %d inconclusive, %d errors\n", r->size(), n[assertions::verdict::pass],
                n[assertions::verdict::fail], n[assertions::verdict::inconclusive], n[assertions::verdict::error]);
    if (!a.out.empty()) {  // write_all creates the folder, or says why it cannot
        plan::suite s;
        s.name = "passive check";
        s.version = "metaroce-1.2-model";
        for (const auto& in : o.inputs) s.file += (s.file.empty() ? "" : " ") + in.capture;
        reports::run_meta meta;
        meta.dut_spec = "capture";
        meta.dut.name = "two DUTs, judged from their wire";
        const auto planned = entries.size();
        if (auto st = reports::write_all(a.out, reports::results(s, meta, std::move(entries), planned)); !st) {
            spdlog::error("{}", st.err().message);
            return k_exit_infra;
        }
        std::printf("reports: %s/report.html, %s/results.json, %s/junit.xml\n", a.out.c_str(), a.out.c_str(), a.out.c_str());
    }
    if (n[assertions::verdict::error]) return k_exit_infra;
    return n[assertions::verdict::fail] ? k_exit_fail : k_exit_ok;
}

}  // namespace mrct::app
