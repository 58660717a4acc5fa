// mrct run | list | validate | explain | selftest
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/stop_signals.h"
#include "capture/pcap_file.h"
#include "assertions/assertion.h"
#include "endpoint/config.h"
#include "run/clauses.h"
#include "run/program.h"
#include "reports/reports.h"
#include "run/runner.h"
#include "run/time_scale.h"
#include "sim/priority.h"
#include "core/text.h"
#include "core/units.h"

namespace mrct::app {

namespace {

std::atomic<bool> g_stop{false};  // set by SIGINT, SIGTERM, SIGHUP (stop_signals)
std::atomic<bool> g_cut{false};   // mrct run: set by the second of them (D143)
std::atomic<bool> g_gave_up{false};  // set by run_suite after --max-errors consecutive errors

core::result<plan::suite> load_valid(const std::string& path) {
    auto s = plan::load(path, plan_limits());
    if (!s) return s.err();
    if (auto st = run::validate(*s); !st) return st.err();
    return s;
}

int plan_error(const core::error& e) {
    std::fprintf(stderr, "%s\n", e.message.c_str());
    return k_exit_usage;
}

const char* mark(assertions::verdict v) { return verdict_mark(v); }


}  // namespace

plan::limits& plan_limits() {
    static plan::limits l;
    return l;
}

int run_plan(const run_args& a) {
    auto s = load_valid(a.plan);
    if (!s) return plan_error(s.err());
    std::string bug;
    auto make = run::parse_dut(a.dut, &bug);
    if (!make) return plan_error(make.err());
    run::run_options o;
    o.filters = a.filters;
    o.clauses = a.clauses;
    o.seed = a.seed;
    o.repeat = a.repeat;
    o.jobs = a.jobs;
    o.stop = &g_stop;
    o.cut = &g_cut;
    o.timing_retries = a.timing_retries;
    o.max_errors = a.max_errors;
    o.gave_up = &g_gave_up;
    if (a.time_scale != "auto") {
        const auto k = core::parse_count(a.time_scale);
        if (!k || !run::valid_time_scale(*k)) {
            std::fprintf(stderr, "--time-scale expects auto or a power of two 1..%u, got '%s'\n", run::k_max_time_scale,
                         a.time_scale.c_str());
            return k_exit_usage;
        }
        o.time_scale = *k;
    }
    if (!a.shard.empty()) {
        unsigned k = 0, n = 0;
        char slash = 0;
        if (std::sscanf(a.shard.c_str(), "%u%c%u", &k, &slash, &n) != 3 || slash != '/' || n < 1 || k < 1 || k > n) {
            std::fprintf(stderr, "--shard expects K/N with 1 <= K <= N, got '%s'\n", a.shard.c_str());
            return k_exit_usage;
        }
        o.shard_k = k;
        o.shard_n = n;
    }
    // The engine's priority in real time (D76): raised before any case makes
    // its threads, which inherit it; the host probe's go back to ordinary.
    const bool realtime = a.dut.rfind("agent+", 0) == 0;  // parse_dut accepted it: sim, sim:bug=, agent+WIRE
    std::optional<sim::priority> prio;
    // auto leaves agent+dpdk as it is: its lcore busy-polls, and raised it
    // takes its CPU from everything beside it (D76).
    const bool busy_polls = a.dut.rfind("agent+dpdk", 0) == 0;
    if (a.priority == "auto") {
        if (realtime && !busy_polls) prio = sim::k_auto_realtime;
    } else {
        auto p = sim::parse_priority(a.priority);
        if (!p) {
            std::fprintf(stderr, "--priority: %s\n", p.err().message.c_str());
            return k_exit_usage;
        }
        prio = *p;
    }
    std::string prio_said;
    if (realtime) prio_said = sim::apply_priority(prio.value_or(sim::priority{}));
    const stop_signals sigs(g_stop, &g_cut);  // until the reports are written
    const auto planned = run::planned_runs(*s, o);
    const auto total = o.shard_n > 1 ? (planned + o.shard_n - o.shard_k) / o.shard_n : planned;
    if (!planned) {
        std::fprintf(stderr, "no case matches the filters\n");
        return k_exit_usage;
    }
    // The output folder is checked before the first case (a file in its
    // place, a read-only mount), not found wanting after the whole run.
    if (!a.out.empty())
        if (auto st = run::check_output_dir(a.out); !st) {
            std::fprintf(stderr, "--out: %s\n", st.err().message.c_str());
            return k_exit_usage;
        }
    // What the run prints comes from the plan and the DUT: stray bytes are
    // escaped as the reports escape them (core::valid_utf8).
    std::printf("mrct %s: %s (%zu cases%s) against %s, seed %llu\n", std::string(version_string()).c_str(), core::valid_utf8(s->name).c_str(),
                total, a.shard.empty() ? "" : (", shard " + a.shard + " of " + std::to_string(planned)).c_str(), a.dut.c_str(),
                static_cast<unsigned long long>(a.seed));
    if (realtime) std::printf("engine priority: %s\n", prio_said.c_str());
    std::string pcap_dir;
    if (!a.out.empty() && a.capture != "none") {
        pcap_dir = a.out + "/pcap";
        std::error_code ec;
        std::filesystem::create_directories(pcap_dir, ec);
    }
    // A DUT that writes waveforms (capability `waveform`: the RTL DUT) gives
    // one for each failing case, beside its pcap (docs/rtl.md).
    // Only libraries take create options (so:, rtl): no agent is contacted for this.
    const bool library = dut::expand_rtl(a.dut).rfind("so:", 0) == 0;
    if (library && !pcap_dir.empty() && a.dut.find("waveform=") == std::string::npos) {
        if (auto probe = (*make)(); probe) {
            const auto caps = (*probe)->hello().capabilities;
            if (std::find(caps.begin(), caps.end(), "waveform") != caps.end()) {
                const std::string spec = a.dut == "rtl" ? "rtl:" : a.dut + ",";
                o.waveform.dir = pcap_dir;
                o.waveform.make = [spec](const std::string& path) -> core::result<run::dut_factory> {
                    if (path.find(',') != std::string::npos) return core::error{"its path has a comma: " + path};
                    return run::parse_dut(spec + "waveform=" + path);
                };
            }
        }
    }
    // Each case becomes its report entry as it ends, evidence included, so its
    // trace can go at once; the entry goes to disk (reports::case_spool), so a
    // long run's memory does not grow with its cases.
    std::optional<reports::case_spool> spool;
    if (!a.out.empty()) {
        auto sp = reports::case_spool::create(a.out);
        if (!sp) {
            std::fprintf(stderr, "--out: %s\n", sp.err().message.c_str());
            return k_exit_usage;
        }
        spool.emplace(std::move(*sp));
    }
    std::string spool_error;  // the first entry that could not be kept (a full disk)
    o.keep_details = false;   // the summary below reads identity, verdict and reason only
    o.progress = [&](const run::case_result& r, std::size_t done, std::size_t n) {
        std::optional<reports::json> entry;
        if (spool) entry = reports::case_json(r, r.order);
        if (!pcap_dir.empty() && r.tr && (a.capture == "all" || r.v == assertions::verdict::fail || r.v == assertions::verdict::error ||
                                                 r.interrupted)) {
            const auto name = run::evidence_name(r.id);
            const auto path = pcap_dir + "/" + name + ".pcap";
            auto w = capture::pcap_writer::create(path + ".tmp", capture::pcap_writer::k_bulk_buffer);
            bool written = false;
            if (w) {
                for (const auto& f : r.tr->frames) (*w)->write(f.t.count(), f.bytes);
                if ((*w)->close()) {
                    std::error_code ec;
                    std::filesystem::rename(path + ".tmp", path, ec);
                    written = !ec;
                }
            }
            if (written) {
                if (entry) (*entry)["pcap"] = "pcap/" + name + ".pcap";
            } else {
                // A full disk: no partial capture left behind, and the report says so.
                std::error_code ec;
                std::filesystem::remove(path + ".tmp", ec);
                if (entry) (*entry)["pcap_error"] = "the capture could not be written to " + path;
                spdlog::warn("{}: the capture could not be written to {}", r.id, path);
            }
        }
        if (!r.waveform.empty() && entry) (*entry)["waveform"] = "pcap/" + std::filesystem::path(r.waveform).filename().string();
        if (entry)
            if (auto st = spool->add(std::move(*entry)); !st && spool_error.empty()) {
                spool_error = st.err().message;
                spdlog::error("{}", spool_error);
            }
        if (a.quiet_progress && r.v == assertions::verdict::pass) return;
        const std::string attempt = r.attempts > 1 ? " (attempt " + std::to_string(r.attempts) + ", the earlier inconclusive on timing)" : "";
        std::printf("[%zu/%zu] %-12s %s%s%s%s\n", done, n, mark(r.v), core::valid_utf8(r.id).c_str(), attempt.c_str(),
                    r.v == assertions::verdict::pass ? "" : "  -- ",
                    r.v == assertions::verdict::pass ? "" : core::valid_utf8(r.reason).c_str());
        std::fflush(stdout);
    };
    // The DUT's identity for the reports, from the first DUT a case made (an
    // agent is not contacted again at the end: it may be gone by then).
    std::mutex info_m;
    std::optional<dut::info> dut_info;
    run::dut_factory remember = [&, inner = *make]() {
        auto d = inner();
        if (d) {
            std::lock_guard<std::mutex> g(info_m);
            if (!dut_info) dut_info = (*d)->hello();
        }
        return d;
    };
    auto results = run::run_suite(*s, remember, o);
    std::map<assertions::verdict, int> n;
    for (const auto& r : results) n[r.v]++;
    std::printf("\n%zu cases: %d passed, %d failed, %d inconclusive, %d errors, %d skipped%s\n", results.size(),
                n[assertions::verdict::pass], n[assertions::verdict::fail], n[assertions::verdict::inconclusive],
                n[assertions::verdict::error], n[assertions::verdict::skipped],
                g_cut ? " (interrupted twice: the cases running were cut short, skipped and marked interrupted)"
                : g_stop ? " (interrupted: results cover the finished cases)" : "");
    std::string stopped;
    if (g_gave_up)
        stopped = "stopped after " + std::to_string(a.max_errors) +
                  " consecutive errors (--max-errors): the DUT or its agent is gone or failing; the cases not run are not in the results";
    if (!stopped.empty()) std::printf("%s\n", stopped.c_str());
    for (const auto& r : results)
        if (r.v == assertions::verdict::fail || r.v == assertions::verdict::error) {
            std::string cl;
            for (const auto& c : r.clauses) cl += (cl.empty() ? "" : ", ") + c;
            std::printf("  %s %s [%s]: %s\n", mark(r.v), core::valid_utf8(r.id).c_str(), cl.c_str(),
                        core::valid_utf8(r.reason).c_str());
        }
    if (!a.out.empty()) {  // write_all creates the folder if it went missing, or says why it cannot
        const auto d = dut_info.value_or(dut::info{});
        reports::run_meta meta{a.dut, {d.name, d.version, d.bug}, a.seed, a.shard, g_stop.load(), {}, prio_said, stopped};
        if (auto st = reports::write_all(a.out, reports::results(*s, meta, {}, planned), *spool); !st) {
            spdlog::error("{}", st.err().message);
            return k_exit_infra;
        }
        if (!spool_error.empty()) {  // the reports lack a case: said, and not a clean exit
            spdlog::error("the reports lack cases: {}", spool_error);
            return k_exit_infra;
        }
        std::printf("reports: %s/report.html, %s/results.json, %s/junit.xml\n", a.out.c_str(), a.out.c_str(), a.out.c_str());
    }
    if (n[assertions::verdict::error]) return k_exit_infra;
    if (n[assertions::verdict::fail]) return k_exit_fail;
    if (g_stop || g_gave_up) return k_exit_infra;
    if (a.fail_on_inconclusive && n[assertions::verdict::inconclusive]) {
        std::printf("%d cases inconclusive: exit 1 (--fail-on-inconclusive)\n", n[assertions::verdict::inconclusive]);
        return k_exit_fail;
    }
    return k_exit_ok;
}

int run_report_merge(const std::vector<std::string>& dirs, const std::string& out) {
    auto merged = reports::merge(dirs);
    if (!merged) {
        std::fprintf(stderr, "%s\n", merged.err().message.c_str());
        return k_exit_usage;
    }
    // The shards' pcaps come along, so the merged report's links work.
    for (const auto& d : dirs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(d + "/pcap") || std::filesystem::equivalent(d, out, ec)) continue;
        std::filesystem::create_directories(out + "/pcap", ec);
        for (const auto& f : std::filesystem::directory_iterator(d + "/pcap"))
            std::filesystem::copy_file(f.path(), out + "/pcap/" + f.path().filename().string(),
                                       std::filesystem::copy_options::overwrite_existing, ec);
    }
    if (auto st = reports::write_all(out, *merged); !st) {
        std::fprintf(stderr, "%s\n", st.err().message.c_str());
        return k_exit_infra;
    }
    std::printf("merged %zu results into %s: report.html, results.json, junit.xml\n", dirs.size(), out.c_str());
    for (const auto& c : (*merged)["cases"])
        if (c["verdict"] == "fail" || c["verdict"] == "error") return k_exit_fail;
    return k_exit_ok;
}

int run_list(const std::string& path, bool json) {
    auto s = load_valid(path);
    if (!s) return plan_error(s.err());
    if (json) {
        auto j = nlohmann::ordered_json::array();
        for (const auto& c : s->cases)
            j.push_back({{"id", c.id}, {"title", c.title}, {"area", c.area}, {"level", c.level}, {"role", c.role},
                         {"clauses", c.clauses}, {"requires", c.needs}, {"at", c.at.str()}});
        std::printf("%s\n", reports::valid_utf8(std::move(j)).dump(2).c_str());
        return k_exit_ok;
    }
    for (const auto& c : s->cases) {
        std::string cl;
        for (const auto& x : c.clauses) cl += (cl.empty() ? "" : ",") + x;
        std::printf("%-28s %-6s %-8s %-40s %s\n", c.id.c_str(), c.level.c_str(), c.role.c_str(), cl.c_str(), c.title.c_str());
    }
    std::printf("%zu cases\n", s->cases.size());
    return k_exit_ok;
}

int run_validate(const std::string& path) {
    auto s = load_valid(path);
    if (!s) return plan_error(s.err());
    // Coverage: every MUST by >= 2 cases, one of them a fault or negative case.
    const auto cov = run::check_coverage(*s);
    std::printf("%s: %zu cases, valid\n", path.c_str(), s->cases.size());
    if (!cov.thin.empty()) {
        std::printf("clauses covered by fewer cases than required (MUST: 2, SHOULD: 1):");
        for (const auto& t : cov.thin) std::printf(" %s", t.c_str());
        std::printf("\n");
    }
    if (!cov.no_fault.empty()) {
        std::printf("MUST clauses without a fault or negative case:");
        for (const auto& t : cov.no_fault) std::printf(" %s", t.c_str());
        std::printf("\n");
    }
    return k_exit_ok;
}

int run_explain(const std::string& path, const std::string& id) {
    auto s = load_valid(path);
    if (!s) return plan_error(s.err());
    for (const auto& c : s->cases) {
        if (c.id != id && !run::glob_match(id, c.id)) continue;
        std::printf("%s — %s\n  at %s\n  level %s, area %s, the peer plays the %s\n", c.id.c_str(), c.title.c_str(),
                    c.at.str().c_str(), c.level.c_str(), c.area.c_str(), c.role.c_str());
        if (!c.description.empty()) std::printf("\n  %s\n", c.description.c_str());
        std::printf("\n  clauses:\n");
        for (const auto& cl : c.clauses)
            if (const auto* d = run::find_clause(cl)) std::printf("    %s (%s) %s\n", cl.c_str(), d->level.c_str(), d->text.c_str());
        // What runs: the compiled case (run/program.h), every default written out.
        const auto p = run::compile(c, s->lim.action_bytes, [](const plan::loc&, const std::string&) {});  // validated above
        const auto& t = p.topology;
        std::printf("\n  topology: %u paths, %u peer%s, %s one-way", t.paths, t.peers, t.peers == 1 ? "" : "s",
                    assertions::fmt_time(t.delay).c_str());
        for (const auto& [path, extra] : t.path_delay) std::printf(", path %u +%s", path, assertions::fmt_time(extra).c_str());
        if (t.rate) std::printf(", queues at %s", t.rate->c_str());
        for (const auto& i : c.impair) {
            std::printf("\n    impair %s:", i.name.c_str());
            for (const auto& [k, v] : i.a) std::printf(" %s=%s", k.c_str(), v.text.c_str());
        }
        auto settings = [](const char* who, const std::map<std::string, std::string>& m) {
            std::printf("\n  %s:", who);
            for (const auto& [k, v] : m) std::printf(" %s=%s", k.c_str(), v.c_str());
        };
        settings("dut", p.dut_config);
        settings("peer", p.peer_config);
        auto acts = [](const std::vector<run::compiled_action>& v) {
            for (const auto& a : v) std::printf("\n      %s", run::describe(a).c_str());
        };
        if (!p.handshake.empty()) {
            std::printf("\n  handshake:");
            acts(p.handshake);
        }
        std::printf("\n  setup:");
        acts(p.setup);
        std::printf("\n  steps:");
        for (const auto& st : p.steps) {
            if (st.time) std::printf("\n    at %s:", assertions::fmt_time(*st.time).c_str());
            else {
                std::printf("\n    on frame %u %s the DUT matching", st.on->nth, st.on->d == trace::dir::from_dut ? "from" : "to");
                for (const auto& [k, x] : st.on->match) std::printf(" %s=%s", k.c_str(), x.c_str());
                if (st.on->after.count()) std::printf(", %s after it", assertions::fmt_time(st.on->after).c_str());
                std::printf(":");
            }
            acts(st.actions);
        }
        const auto& l = p.limits;
        const std::string late = l.step_late ? ", step_late " + assertions::fmt_time(*l.step_late) : "";
        std::printf("\n  limits: duration %s, settle %s, max_frames %zu%s", assertions::fmt_time(l.duration).c_str(),
                    assertions::fmt_time(l.settle).c_str(), l.max_frames, late.c_str());
        std::printf("\n  expect:\n");
        for (const auto& e : c.expect) {
            const auto* d = assertions::find(e.name);
            std::printf("    %s", e.name.c_str());
            for (const auto& [k, x] : e.a) std::printf(" %s=%s", k.c_str(), x.text.c_str());
            if (d) std::printf("\n      %s\n", d->summary.c_str());
        }
        return k_exit_ok;
    }
    std::fprintf(stderr, "no case '%s' in %s\n", id.c_str(), path.c_str());
    return k_exit_usage;
}

// Whether a case's clauses name any of `broken` (a profile's clauses).
static bool cites_any(const std::vector<std::string>& clauses, const std::vector<std::string>& broken) {
    for (const auto& cl : clauses)
        if (std::find(broken.begin(), broken.end(), cl) != broken.end()) return true;
    return false;
}

int run_selftest(const std::string& path, unsigned jobs, const std::string& out, unsigned time_scale, const std::string& given) {
    const std::string dut = dut::expand_rtl(given);  // rtl: the RTL DUT's library and its planted defines
    auto s = load_valid(path);
    if (!s) return plan_error(s.err());
    // The family under test: its clean DUT and the bugs it can plant, each
    // a DUT spec of its own. sim: the reference's bug profiles; so:PATH: the
    // library's (mrct_dut_describe), planted with bug=NAME.
    struct planted {
        std::string name, clauses, spec;
    };
    std::vector<planted> bugs;
    if (dut == "sim") {
        for (const auto& b : endpoint::bug_profiles())
            bugs.push_back({std::string(b.name), std::string(b.clauses), "sim:bug=" + std::string(b.name)});
    } else if (dut.rfind("so:", 0) == 0) {
        auto o = dut::parse_so_options(dut.substr(3));
        if (!o) return plan_error(o.err());
        if (!o->bug.empty()) {
            std::fprintf(stderr, "selftest --dut: name the clean library; selftest plants each of its bugs itself\n");
            return k_exit_usage;
        }
        auto list = dut::so_bugs(*o);
        if (!list) return plan_error(list.err());
        for (const auto& b : *list) bugs.push_back({b.name, b.clauses, dut + ",bug=" + b.name});
    } else {
        std::fprintf(stderr, "selftest --dut expects sim, rtl or so:PATH.so, got '%s'\n", dut.c_str());
        return k_exit_usage;
    }
    auto clean = run::parse_dut(dut);  // loads (and for so:, checks) the library once, before any case
    if (!clean) return plan_error(clean.err());
    run::run_options o;
    o.jobs = jobs;
    o.stop = &g_stop;
    const stop_signals sigs(g_stop);
    bool ok = true;
    // --time-scale K: the fine_timing cases run K times slower, and each must
    // give the verdict it gives as written, against the reference and every
    // bug profile (the scaling changes nothing a clause depends on). A case
    // that cannot be scaled (a TimerCode beyond the table) is skipped.
    std::vector<std::string> fine;
    for (const auto& c : s->cases)
        if (std::find(c.needs.begin(), c.needs.end(), "fine_timing") != c.needs.end()) fine.push_back(c.id);
    run::run_options written = o;
    written.time_scale = 1;
    written.filters = fine;
    o.time_scale = time_scale;
    // Scaled, only the fine_timing cases run: the others are the same runs
    // at any scale, and the plain selftest judges them (and the kill matrix
    // over the whole plan). Each scaled verdict equal to its written one
    // proves the scaled plan kills what the written one does.
    if (time_scale > 1) o.filters = fine;
    auto unscalable = [&](const run::case_result& r) {
        return time_scale > 1 && r.v == assertions::verdict::skipped && r.reason.starts_with(run::k_unscalable_reason);
    };
    std::size_t compared = 0;
    auto same_as_written = [&](const std::string& dut, const std::vector<run::case_result>& scaled) {
        if (time_scale <= 1) return true;
        auto plain = run::run_suite(*s, *run::parse_dut(dut), written);
        std::map<std::string, const run::case_result*> by_id;
        for (const auto& r : plain) by_id[r.id] = &r;
        bool same = true;
        for (const auto& r : scaled) {
            auto it = by_id.find(r.id);
            if (it == by_id.end() || unscalable(r)) continue;
            ++compared;
            if (it->second->v == r.v) continue;
            same = false;
            std::printf("  %s: %s is %s as written, %s at %u times slower: %s\n", dut.c_str(), r.id.c_str(),
                        assertions::verdict_name(it->second->v).data(), assertions::verdict_name(r.v).data(), time_scale,
                        r.reason.c_str());
        }
        return same;
    };
    // 1. Reference: 100 % pass, no inconclusive.
    auto ref = run::run_suite(*s, *clean, o);
    std::map<assertions::verdict, int> n;
    for (const auto& r : ref) n[r.v]++;
    std::printf("%s: %zu cases, %d pass, %d fail, %d inconclusive, %d error, %d skipped\n", dut == "sim" ? "reference DUT" : dut.c_str(), ref.size(),
                n[assertions::verdict::pass], n[assertions::verdict::fail], n[assertions::verdict::inconclusive],
                n[assertions::verdict::error], n[assertions::verdict::skipped]);
    for (const auto& r : ref)
        if (r.v != assertions::verdict::pass) {
            ok = ok && unscalable(r);
            std::printf("  %s %s: %s\n", mark(r.v), r.id.c_str(), r.reason.c_str());
        }
    ok = same_as_written(dut, ref) && ok;
    // 1b. The reference making other legal choices (conforming variants,
    // D153), each alone and all together: every case passes, as against the
    // reference, so no check stands on a choice another implementation may
    // make otherwise. sim only (a library's or the RTL's choices are its own).
    if (dut == "sim") {
        std::printf("\nconforming variants (each must pass every case)%s\n",
                    time_scale > 1 ? ", the fine_timing cases scaled" : "");
        std::vector<std::pair<std::string, std::string>> specs;  // label, variants
        for (const auto& v : endpoint::variant_profiles()) specs.push_back({std::string(v.name), std::string(v.name)});
        specs.push_back({"all together", endpoint::variants_text((1u << endpoint::variant_profiles().size()) - 1)});
        for (const auto& [label, v] : specs) {
            if (g_stop) break;
            auto make = run::parse_dut("sim:variant=" + v);
            if (!make) return plan_error(make.err());
            const auto res = run::run_suite(*s, *make, o);
            std::map<assertions::verdict, int> m;
            for (const auto& r : res) m[unscalable(r) ? assertions::verdict::pass : r.v]++;
            const bool all = m[assertions::verdict::pass] == static_cast<int>(res.size());
            ok = ok && all;
            std::printf("  %-20s %s (%d pass of %zu)\n", label.c_str(),
                        all ? "passed" : "FAILED", m[assertions::verdict::pass], res.size());
            for (const auto& r : res)
                if (r.v != assertions::verdict::pass && !unscalable(r))
                    std::printf("    %s %s: %s\n", mark(r.v), r.id.c_str(), r.reason.c_str());
        }
    }
    // 2. Every bug profile: caught, and by a case citing a clause it breaks.
    std::printf("\nkill matrix (bug profile -> failing cases; * = the case cites a clause the profile breaks)%s\n",
                time_scale > 1 ? " of the fine_timing cases alone, scaled" : "");
    nlohmann::ordered_json matrix = nlohmann::ordered_json::object();
    for (const auto& b : bugs) {
        if (g_stop) break;
        auto make = run::parse_dut(b.spec);
        if (!make) return plan_error(make.err());
        auto res = run::run_suite(*s, *make, o);
        ok = same_as_written(b.spec, res) && ok;
        const auto broken = core::split(b.clauses, ", ");  // "MR-RNR-2, MR-RNR-3" -> ids
        std::vector<std::string> killers;
        bool cited = false;
        for (const auto& r : res) {
            if (r.v != assertions::verdict::fail) continue;
            const bool cites = cites_any(r.clauses, broken);
            cited = cited || cites;
            killers.push_back(r.id + (cites ? "*" : ""));
        }
        std::stable_sort(killers.begin(), killers.end(), [](const std::string& a, const std::string& b) {
            return (a.back() == '*') > (b.back() == '*');  // cases citing the broken clause first
        });
        std::string list;
        for (std::size_t i = 0; i < killers.size() && i < 6; ++i) list += (i ? " " : "") + killers[i];
        if (killers.size() > 6) list += " (+" + std::to_string(killers.size() - 6) + ")";
        const bool caught = cited;
        ok = ok && (caught || time_scale > 1);  // scaled: the fine_timing cases alone need not catch it
        std::printf("  %-18s %-22s %-8s %s\n", std::string(b.name).c_str(), std::string(b.clauses).c_str(),
                    caught ? "caught" : time_scale > 1 ? "-" : (killers.empty() ? "MISSED" : "NOT-CITED"), list.c_str());
        matrix[std::string(b.name)] = {{"clauses", broken}, {"caught", caught}, {"failing_cases", killers}};
    }
    // 2b. Every bug profile planted in the reference making every open
    // choice otherwise (all variants but those that undo the bug, D157): a
    // broken DUT of another implementation is caught as the reference's is.
    if (dut == "sim" && time_scale == 1) {
        std::printf("\nkill matrix with every conforming variant (each profile must still be caught)\n");
        const std::uint32_t all = (1u << endpoint::variant_profiles().size()) - 1;
        unsigned caught_all = 0, ran = 0;
        for (const auto& b : endpoint::bug_profiles()) {
            if (g_stop) break;
            const auto vs = all & ~endpoint::variants_undoing(b.id);
            auto make = run::parse_dut("sim:bug=" + std::string(b.name) + ",variant=" + endpoint::variants_text(vs));
            if (!make) return plan_error(make.err());
            const auto res = run::run_suite(*s, *make, o);
            const auto broken = core::split(b.clauses, ", ");
            const bool caught = std::any_of(res.begin(), res.end(), [&](const auto& r) {
                return r.v == assertions::verdict::fail && cites_any(r.clauses, broken);
            });
            ++ran;
            caught_all += caught ? 1 : 0;
            ok = ok && caught;
            if (!caught)
                std::printf("  %-18s %-22s MISSED with %s\n", std::string(b.name).c_str(), std::string(b.clauses).c_str(),
                            endpoint::variants_text(vs).c_str());
        }
        std::printf("  %u of %u profiles caught by a case citing their clause\n", caught_all, ran);
    }
    if (!out.empty()) {
        std::filesystem::create_directories(out);
        (void)run::write_file_atomic(out + "/kill-matrix.json", matrix.dump(2) + "\n");
    }
    if (time_scale > 1)
        std::printf("\n%zu verdicts of fine_timing cases at %u times slower compared with the written cases\n", compared,
                    time_scale);
    std::printf("\nselftest %s\n", ok ? "passed" : "FAILED");
    return ok ? k_exit_ok : k_exit_fail;
}

}  // namespace mrct::app
