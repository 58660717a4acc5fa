// Selecting, running (in parallel) and repeating cases.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/rng.h"
#include "core/text.h"
#include "run/runner.h"
#include "sim/drivers.h"

namespace mrct::run {

std::size_t planned_runs(const plan::suite& s, const run_options& o) {
    return select(s, o).size() * std::max(1u, o.repeat);
}

bool glob_match(std::string_view p, std::string_view t) {
    // '*' any run, '?' one character.
    std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
    while (ti < t.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
            ++pi;
            ++ti;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = ti;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            ti = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

core::result<dut_factory> parse_dut(const std::string& given, std::string* bug_out) {
    const std::string spec = dut::expand_rtl(given);  // rtl[:...]: the RTL DUT's library
    std::string bug;
    std::uint32_t variants = 0;
    if (spec == "sim") {
    } else if (spec.rfind("sim:", 0) == 0) {
        // sim:bug=NAME, sim:variant=NAME[+NAME...], or both, comma-separated:
        // a bug profile making the model's open choices otherwise too.
        const auto parts = core::split(spec.substr(4), ",");
        if (parts.empty()) return core::error{"sim: nothing after 'sim:' (sim, or sim:bug=NAME, sim:variant=NAME)"};
        bool has_bug = false, has_variant = false;
        for (const auto& kv : parts) {
            const auto eq = kv.find('=');
            const std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
            if (key == "bug" && eq != std::string::npos && !has_bug) {
                has_bug = true;
                bug = value;
                endpoint::config tmp;
                if (auto st = endpoint::config_set(tmp, "bug", bug); !st) return st.err();
            } else if (key == "variant" && eq != std::string::npos && !has_variant) {
                has_variant = true;
                auto v = endpoint::variants_by_name(value);
                if (!v) return v.err();
                variants = *v;
            } else {
                return core::error{"sim: '" + kv + "' is not bug=NAME or variant=NAME[+NAME...] (each at most once)"};
            }
        }
    } else if (spec.rfind("agent+", 0) == 0) {
        const auto colon = spec.find(':');
        const auto wire = spec.substr(6, colon == std::string::npos ? std::string::npos : colon - 6);
        auto o = dut::parse_agent_options(wire, colon == std::string::npos ? "" : spec.substr(colon + 1));
        if (!o) return o.err();
        // A fresh connection per case: an agent that failed the last case is
        // reached again and reset (hello, reset, configure) before the next.
        return dut_factory([o = *o]() { return dut::make_agent(o); });
    } else if (spec.rfind("so:", 0) == 0) {
        auto o = dut::parse_so_options(spec.substr(3));
        if (!o) return o.err();
        // Load and instantiate once now, so that a bad library or option
        // stops the run before its first case, not as an error in each.
        if (auto probe = dut::make_so(*o); !probe) return probe.err();
        if (bug_out) *bug_out = o->bug;
        return dut_factory([o = *o]() { return dut::make_so(o); });
    } else {
        return core::error{"unknown DUT '" + spec +
                           "' (sim, sim:bug=NAME, sim:variant=NAME[+NAME...], sim:bug=NAME,variant=NAME[+NAME...], rtl, rtl:bug=NAME, so:PATH.so[,KEY=VALUE...], agent+udp:OPTIONS, agent+pcap:OPTIONS, "
                           "agent+dpdk:OPTIONS; docs/adapters.md)"};
    }
    if (bug_out) *bug_out = bug;
    return dut_factory([bug, variants]() -> core::result<std::unique_ptr<dut::dut>> { return dut::make_sim(bug, variants); });
}

std::vector<const plan::test_case*> select(const plan::suite& s, const run_options& o) {
    std::vector<const plan::test_case*> out;
    for (const auto& c : s.cases) {
        bool ok = o.filters.empty();
        for (const auto& f : o.filters) ok = ok || glob_match(f, c.id);
        if (!ok) continue;
        if (!o.clauses.empty()) {
            bool any = false;
            for (const auto& g : o.clauses)
                for (const auto& cl : c.clauses) any = any || glob_match(g, cl);
            if (!any) continue;
        }
        out.push_back(&c);
    }
    return out;
}

std::string evidence_name(const std::string& id) {
    std::string name;
    for (char ch : id) name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' ? ch : '_';
    return name;
}

namespace {
// The failing case once more, writing the DUT's waveform (run_options::waveform).
void with_waveform(case_result& r, const plan::test_case& c, std::uint64_t seed, const run_options& o) {
    const auto path = (std::filesystem::path(o.waveform.dir) / (evidence_name(r.id) + ".fst")).string();
    auto make = o.waveform.make(path);
    if (!make) {
        spdlog::warn("{}: no waveform: {}", r.id, make.err().message);
        return;
    }
    const auto again = run_case(c, *make, seed, r.time_scale, 0);
    std::error_code ec;
    if (again.v != r.v || again.reason != r.reason) {
        spdlog::warn("{}: no waveform: the re-run with it ended {} ({}), not as the run did", r.id,
                     assertions::verdict_name(again.v), again.reason);
        std::filesystem::remove(path, ec);
        return;
    }
    if (std::filesystem::is_regular_file(path, ec)) r.waveform = path;
}
}  // namespace

// D146: a real-time case failed a timing check while the run knew no answer
// of the DUT's on the wire quicker than the crossing window (its first cases
// may have had none: where the DUT opens the connection and sends, the
// engine asks it nothing). One connection is then opened to the DUT, and 16
// KiB written on it four times, 5 ms apart: its answers (the ACCEPT, the
// ACKs) measure the wire, and the run's DUTs share the figure
// (agent_options::quickest_answer). Not a case of the plan: nothing is
// judged or reported but the figure. Returns the run's quickest answer so
// far (0: none).
core::nanos probe_wire(const dut_factory& make, const run_options& o) {
    plan::test_case probe;
    probe.id = "WIRE-PROBE";
    probe.title = "the engine opens a connection to the DUT and writes to it (D146)";
    probe.clauses = {"MR-CONN-1"};
    probe.role = "sender";  // the engine's role: it opens the connection, and writes to the DUT
    // 16 KiB at once and again every 5 ms, three times: a software DUT's first
    // answers on a new connection are its slowest (mrct-refnic's ACKs of the
    // first write came 280 us after it on a veth; those of later ones, 20-30 us).
    auto write = [] { return plan::action{"post_write", {}, {{"size", plan::arg{"16384", {}}}}}; };
    probe.setup.push_back(write());
    for (const char* at : {"5ms", "10ms", "15ms"}) probe.steps.push_back(plan::step{{}, plan::arg{at, {}}, std::nullopt, {write()}});
    // Timers far longer than any wire it measures: nothing is sent twice, so
    // every answer is known to be the one copy's.
    for (const char* k : {"rto_initial", "rto_min"}) probe.peer[k] = plan::arg{"50ms", {}};
    probe.peer["rto_max"] = plan::arg{"1s", {}};
    const auto r = run_case(probe, make, core::rng::sub_seed(o.seed, "wire probe"), 0, 0, {o.stop, o.cut});
    if (!r.tr || r.tr->timing.answer_min_run <= core::nanos{0}) {
        spdlog::info("the wire probe measured no answer of the DUT's ({}): {}", assertions::verdict_name(r.v), r.reason);
        return core::nanos{0};
    }
    spdlog::info("the wire probe: the DUT's quickest answer {:.1f} us, the run's {:.1f} us (the wire's round trip at "
                 "the least; crossing window {:.1f} us, D146)",
                 core::to_micros(r.tr->timing.answer_min), core::to_micros(r.tr->timing.answer_min_run),
                 core::to_micros(r.tr->crossing));
    return r.tr->timing.answer_min_run;
}

std::vector<case_result> run_suite(const plan::suite& s, const dut_factory& make, const run_options& o) {
    sim::keep_freed_memory();  // cases allocate and free megabytes each
    auto cases = select(s, o);
    struct job {
        const plan::test_case* c;
        unsigned rep;
    };
    std::vector<job> jobs;
    std::vector<std::size_t> orders;
    std::size_t order = 0;
    for (unsigned r = 0; r < std::max(1u, o.repeat); ++r)
        for (const auto* c : cases) {
            // Sharding: a deterministic slice, by position in the unsharded run.
            if (o.shard_n > 1 && order % o.shard_n != o.shard_k - 1) {
                ++order;
                continue;
            }
            jobs.push_back({c, r});
            orders.push_back(order++);
        }
    std::vector<std::optional<case_result>> results(jobs.size());
    std::mutex m;
    std::size_t next = 0, done = 0;
    unsigned errors_in_a_row = 0;
    bool giving_up = false;
    unsigned probes = 0;  // D146: wire probes made, at most k_wire_probes
    lab_seen lab;                  // D152: what the run's cases showed of the lab
    std::vector<std::size_t> held;  // D152: failures waiting for it
    // A case's result made final and handed on (the lock held).
    auto publish = [&](std::size_t i) {
        judge_netting(*results[i], lab);
        judge_order(*results[i], lab);
        ++done;
        if (o.progress) o.progress(*results[i], done, jobs.size());  // sees the trace (pcaps)
        if (!o.keep_traces) results[i]->tr.reset();
        if (!o.keep_details) {
            std::vector<assertion_result>().swap(results[i]->asserts);
            std::vector<std::string>().swap(results[i]->doubted_before);
        }
    };
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            {
                std::lock_guard<std::mutex> g(m);
                if (next >= jobs.size() || (o.stop && o.stop->load()) || giving_up) return;
                i = next++;
            }
            // Each case's seed depends only on the run seed, the case and the repetition.
            const auto seed = core::rng::sub_seed(o.seed, "case " + jobs[i].c->id, jobs[i].rep);
            auto r = run_case(*jobs[i].c, make, seed, o.time_scale, o.timing_retries, {o.stop, o.cut});
            if (wire_may_cross(r)) {  // D146
                bool probe = false;
                {
                    std::lock_guard<std::mutex> g(m);
                    probe = probes < k_wire_probes && !(o.stop && o.stop->load());
                    probes += probe;
                }
                // The probe's figure is the run's least so far (the DUTs share
                // it): later cases' traces carry it, only this one's predates it.
                judge_wire(r, probe ? probe_wire(make, o) : core::nanos{0});
            }
            if (o.waveform.make && !r.interrupted && (r.v == verdict::fail || r.v == verdict::error)) with_waveform(r, *jobs[i].c, seed, o);
            if (o.repeat > 1) r.id += "#" + std::to_string(jobs[i].rep + 1);
            r.order = orders[i];
            std::lock_guard<std::mutex> g(m);
            errors_in_a_row = r.v == verdict::error ? errors_in_a_row + 1 : 0;
            if (o.max_errors && errors_in_a_row >= o.max_errors && !giving_up) {
                giving_up = true;
                if (o.gave_up) o.gave_up->store(true);
            }
            results[i] = std::move(r);
            // D152: a failure a copy of the DUT's may explain waits, trace
            // and all, until the run's lab has shown both a loss and a copy
            // (it is then judged again) or the run ends (it stands). D158: so
            // does one resting on the order of frames from two source ports,
            // until the lab has shown reordering.
            const bool had_both = lab.both(), had_reorder = !lab.reordered_in.empty();
            lab.note(*results[i]);
            auto waits = [&](const case_result& r) {
                return (!lab.both() && may_net_out(r)) || (lab.reordered_in.empty() && may_reorder(r));
            };
            if (waits(*results[i])) {
                held.push_back(i);
                if (held.size() > o.netting_hold) {
                    spdlog::info("{}: {} failures wait for the run's lab to show a loss and a copy (D152) or reordering "
                                 "(D158), and it has not: handed on as it stands",
                                 results[held.front()]->id, held.size());
                    publish(held.front());
                    held.erase(held.begin());
                }
                continue;
            }
            if ((!had_both && lab.both()) || (!had_reorder && !lab.reordered_in.empty())) {
                // The lab showed more: what still has nothing to wait for is judged and handed on.
                std::vector<std::size_t> still;
                for (auto h : std::exchange(held, {})) {
                    judge_netting(*results[h], lab);
                    judge_order(*results[h], lab);
                    if (waits(*results[h]))
                        still.push_back(h);
                    else
                        publish(h);
                }
                held = std::move(still);
            }
            publish(i);
        }
    };
    const unsigned n = std::max(1u, std::min<unsigned>(o.jobs, static_cast<unsigned>(jobs.size())));
    std::vector<std::thread> th;
    for (unsigned i = 1; i < n; ++i) th.emplace_back(worker);
    worker();
    for (auto& t : th) t.join();
    for (auto h : held) publish(h);  // the run ended without showing both: they stand
    std::vector<case_result> out;
    for (auto& r : results)
        if (r) out.push_back(std::move(*r));
    return out;
}

}  // namespace mrct::run
