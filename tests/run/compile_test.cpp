// A case compiled into a typed program (engine/run/compile.cpp): the action
// declarations give the runner's defaults, validate's checks and the docs'
// table; what compiles is what runs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "endpoint/config.h"
#include "run/actions.h"
#include "run/mini_plan.h"
#include "run/program.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;
using core::nanos;

namespace {

plan::suite load(const std::string& text) {
    auto s = test::load_plan_text("compile_test_files", "c.yaml", text);
    REQUIRE(s.ok());
    return *s;
}

struct compiled {
    run::program p;
    std::vector<std::string> errors;
};
compiled compile_case(const std::string& text, std::uint64_t action_bytes = 1ull << 30) {
    const auto s = load(text);
    REQUIRE(s.cases.size() == 1);
    compiled c;
    c.p = run::compile(s.cases[0], action_bytes,
                       [&](const plan::loc& at, const std::string& m) { c.errors.push_back(at.str() + ": " + m); });
    return c;
}

std::string one_case(const std::string& role, const std::string& setup, const std::string& steps = "") {
    return "cases:\n  - id: A\n    role: " + role + "\n    clauses: [MR-PATH-1]\n    setup:\n" + setup +
           (steps.empty() ? "" : "    steps:\n" + steps) + "    expect: [wire_format: {}]\n";
}

}  // namespace

TEST_CASE("compile: posts take their declared defaults, sides from the role") {
    auto c = compile_case(one_case("receiver", "      - post_write: {}\n      - post_send: {imm: 0xFFFFFFFF}\n"
                                               "      - post_recv: {}\n      - close: {}\n"));
    REQUIRE(c.errors.empty());
    REQUIRE(c.p.setup.size() == 4);
    const auto& w = std::get<run::post_op>(c.p.setup[0].o);
    CHECK(w.k == run::post_op::kind::write);
    CHECK(w.on_dut);  // role receiver: the DUT sends
    CHECK(w.size == 4096);
    CHECK(w.count == 1);
    CHECK(w.stream == 0);
    CHECK_FALSE(w.imm);
    CHECK_FALSE(w.offset);
    CHECK_FALSE(w.all_peers);
    CHECK(c.p.setup[0].needs_agent);
    const auto& s = std::get<run::post_op>(c.p.setup[1].o);
    CHECK(s.tag == 1);
    CHECK(s.imm == 0xFFFFFFFFu);
    const auto& r = std::get<run::post_op>(c.p.setup[2].o);
    CHECK_FALSE(r.on_dut);  // receives: the data receiver, the peer
    CHECK_FALSE(c.p.setup[2].needs_agent);
    CHECK(std::get<run::close_op>(c.p.setup[3].o).on_dut);
    CHECK(c.p.dut_sends);
    CHECK(c.p.memory == 8u << 20);

    auto snd = compile_case(one_case("sender", "      - post_write: {side: dut, size: 64, count: 3}\n"
                                               "      - post_send: {}\n      - post_recv: {}\n      - memory: {size: 65536}\n"));
    REQUIRE(snd.errors.empty());
    CHECK(std::get<run::post_op>(snd.p.setup[0].o).on_dut);  // `side` says so
    CHECK(std::get<run::post_op>(snd.p.setup[0].o).count == 3);
    CHECK_FALSE(std::get<run::post_op>(snd.p.setup[1].o).on_dut);  // role sender: the peer sends
    CHECK(std::get<run::post_op>(snd.p.setup[2].o).on_dut);
    CHECK(snd.p.memory == 65536);
    CHECK_FALSE(snd.p.dut_sends);
}

TEST_CASE("compile: filters, paths, lift and triggers become typed operations") {
    auto c = compile_case(one_case("receiver",
                                   "      - delay: {dir: to_dut, by: 5us, for: 1ms, count: 0, skip: 2, match: {opcode: ACK, path: 1}}\n"
                                   "      - fail_path: {path: 2, dir: to_peer}\n      - skew: {path: 3, add: 7us}\n"
                                   "      - move_port: {}\n",
                                   "      - on: {dir: to_dut, match: {opcode: ACK}, nth: 3}\n        do: [drop: {}]\n"
                                   "      - at: 2ms\n        do: [lift: {step: 0}, restore_path: {path: 2}]\n"));
    REQUIRE(c.errors.empty());
    const auto& d = std::get<run::filter_op>(c.p.setup[0].o);
    CHECK(d.k == run::filter_op::kind::delay);
    CHECK(d.d == trace::dir::to_dut);
    CHECK(d.by == nanos{5000});
    CHECK(d.for_ == nanos{1'000'000});
    CHECK(d.count == 0);
    CHECK(d.skip == 2);
    CHECK(d.match == trace::field_map{{"opcode", "ACK"}, {"path", "1"}});
    const auto& f = std::get<run::path_op>(c.p.setup[1].o);
    CHECK((f.fail && f.path == 2 && f.to_peer && !f.to_dut));
    CHECK(std::get<run::skew_op>(c.p.setup[2].o).add == nanos{7000});
    CHECK(std::get<run::move_port_op>(c.p.setup[3].o).path == 0);
    REQUIRE(c.p.steps.size() == 2);
    REQUIRE(c.p.steps[0].on);
    CHECK(c.p.steps[0].on->d == trace::dir::to_dut);
    CHECK(c.p.steps[0].on->nth == 3);
    const auto& drop = std::get<run::filter_op>(c.p.steps[0].actions[0].o);
    CHECK((drop.k == run::filter_op::kind::drop && drop.d == trace::dir::from_dut && drop.count == 1 && !drop.for_));
    CHECK(c.p.steps[1].time == nanos{2'000'000});
    CHECK(std::get<run::lift_op>(c.p.steps[1].actions[0].o).step == 0);
    const auto& up = std::get<run::path_op>(c.p.steps[1].actions[1].o);
    CHECK((!up.fail && up.to_peer && up.to_dut));
}

TEST_CASE("compile: an action where it may not stand, an undeclared argument, a value out of its range") {
    auto c = compile_case(one_case("receiver", "      - lift: {step: 0}\n      - post_send: {tag: 70000, colour: red}\n"
                                               "      - delay: {by: -5us}\n",
                                   "      - at: 1ms\n        do: [memory: {size: 4096}]\n"));
    auto has = [&](const std::string& s) {
        for (const auto& e : c.errors)
            if (e.find(s) != std::string::npos) return true;
        return false;
    };
    CHECK(has("c.yaml:6:9: lift: only a step can end another step's filters"));
    CHECK(has("post_send: 'tag' expects a Tag, 0..65535, got '70000'"));
    CHECK(has("post_send: unknown argument 'colour' (expected one of: side, stream, tag, size, count, imm)"));
    CHECK(has("delay: 'by' expects a duration"));
    CHECK(has("memory: only the setup sets the regions' size, not a step"));
    // An action with an error is not compiled: nothing half-typed runs.
    CHECK(c.p.setup.empty());
}

TEST_CASE("compile: errors about a map's keys come in the order the keys stand, not by name") {
    auto c = compile_case("cases:\n  - id: A\n    clauses: [MR-PATH-1]\n    dut: {zeta: 1, alpha: 2}\n"
                          "    peer: {yak: 1, bee: 2}\n    setup:\n      - post_write: {zz: 1, aa: 2}\n"
                          "    expect: [wire_format: {}]\n");
    REQUIRE(c.errors.size() == 6);
    CHECK_THAT(c.errors[0], Catch::Contains(":4:17: dut: unknown parameter 'zeta'"));
    CHECK_THAT(c.errors[1], Catch::Contains(":4:27: dut: unknown parameter 'alpha'"));
    CHECK_THAT(c.errors[2], Catch::Contains(":5:17: peer: unknown parameter 'yak'"));
    CHECK_THAT(c.errors[3], Catch::Contains(":5:25: peer: unknown parameter 'bee'"));
    CHECK_THAT(c.errors[4], Catch::Contains(":7:26: post_write: unknown argument 'zz'"));
    CHECK_THAT(c.errors[5], Catch::Contains(":7:33: post_write: unknown argument 'aa'"));
}

TEST_CASE("compile: the bytes one action moves are bounded before anything is allocated") {
    auto c = compile_case(one_case("receiver", "      - post_write: {size: 4096, count: 3}\n"), 8192);
    REQUIRE(c.errors.size() == 1);
    CHECK_THAT(c.errors[0], Catch::Contains("post_write: 3 x 4096 bytes is more than 8192 bytes"));
    CHECK(compile_case(one_case("receiver", "      - post_write: {size: 4096, count: 2}\n"), 8192).errors.empty());
}

TEST_CASE("compile: every declared argument of every action is accepted with a value of its type") {
    for (const auto& d : run::action_decls()) {
        if (d.free_fields) continue;  // inject: peer/craft.h's fields (craft_test)
        std::string args;
        for (const auto& a : d.args) {
            std::string v;
            switch (a.type) {
            case run::arg_decl::kind::count: v = "1"; break;
            case run::arg_decl::kind::duration: v = "3us"; break;
            case run::arg_decl::kind::choice: v = std::string(a.choices.substr(0, a.choices.find('|'))); break;
            case run::arg_decl::kind::peer: v = "0"; break;
            case run::arg_decl::kind::fabric_path:
            case run::arg_decl::kind::conn_path: v = "1"; break;
            case run::arg_decl::kind::step: v = "1"; break;
            case run::arg_decl::kind::match: args += std::string(args.empty() ? "" : ", ") + "match: {opcode: ACK}"; continue;
            }
            args += std::string(args.empty() ? "" : ", ") + std::string(a.name) + ": " + v;
        }
        const std::string action = "[" + std::string(d.name) + ": {" + args + "}]";
        const std::string list = d.in_setup ? "setup" : "steps";
        INFO(action << " in " << list);
        std::string text = "cases:\n  - id: A\n    clauses: [MR-PATH-1]\n";
        if (d.in_setup)
            text += "    setup: " + action + "\n";
        else
            text += "    steps:\n      - at: 1us\n        do: " + action + "\n      - at: 2us\n        do: []\n";
        text += "    expect: [wire_format: {}]\n";
        const auto c = compile_case(text);
        CHECK(c.errors.empty());
        for (const auto& e : c.errors) UNSCOPED_INFO(e);
    }
}

TEST_CASE("filter_set: a count of 4294967295 is that many frames, not a filter used up at once") {
    sim::scheduler s;
    run::filter_set f(s);
    run::filter_op op{run::filter_op::kind::drop};
    op.count = 0xFFFFFFFF;
    f.add(op, 0, {});
    trace::trace tr;
    auto& r = tr.add(nanos{0}, trace::dir::from_dut, wire::build(wire::ack_spec(wire::ackh{}, 1)));
    REQUIRE(r.ok());
    CHECK(f.apply(r).dropped);
    CHECK(f.apply(r).dropped);
    f.lift(0);
    CHECK_FALSE(f.apply(r).dropped);
}

TEST_CASE("filter_set: shortfalls are filters with a count that acted on fewer frames, not lifted (D101)") {
    sim::scheduler s;
    run::filter_set f(s);
    run::filter_op three{run::filter_op::kind::drop};
    three.count = 3;
    three.skip = 1;
    plan::loc at;
    at.line = 12;
    f.add(three, -1, at);
    run::filter_op every{run::filter_op::kind::duplicate};
    every.count = 0;
    f.add(every, 0, {});
    run::filter_op lifted{run::filter_op::kind::delay};
    lifted.count = 9;
    f.add(lifted, 1, {});
    f.lift(1);
    trace::trace tr;
    auto& r = tr.add(nanos{0}, trace::dir::from_dut, wire::build(wire::ack_spec(wire::ackh{}, 1)));
    REQUIRE(r.ok());
    CHECK_FALSE(f.apply(r).dropped);  // skipped
    CHECK(f.apply(r).dropped);
    auto sf = f.shortfalls();
    REQUIRE(sf.size() == 1);
    CHECK(sf[0].step == -1);
    CHECK(sf[0].at.line == 12);
    CHECK(sf[0].acted == 1);
    CHECK(sf[0].wanted == 3);
    CHECK(sf[0].what == "drop frames from the DUT: the next 3 after 1");
    CHECK(f.apply(r).dropped);
    CHECK(f.apply(r).dropped);
    CHECK(f.shortfalls().empty());
    CHECK_FALSE(f.apply(r).dropped);  // used up
}

TEST_CASE("filter_set: may_act says whether a filter could still act on a direction (lifted, used up, out of time: no)") {
    sim::scheduler s;
    run::filter_set f(s);
    CHECK_FALSE(f.may_act(trace::dir::to_dut));
    CHECK_FALSE(f.may_act(trace::dir::from_dut));
    run::filter_op once{run::filter_op::kind::drop};
    once.d = trace::dir::to_dut;
    f.add(once, 0, {});
    CHECK(f.may_act(trace::dir::to_dut));
    CHECK_FALSE(f.may_act(trace::dir::from_dut));
    trace::trace tr;
    auto& r = tr.add(nanos{0}, trace::dir::to_dut, wire::build(wire::ack_spec(wire::ackh{}, 1)));
    REQUIRE(r.ok());
    CHECK(f.apply(r).dropped);
    CHECK_FALSE(f.may_act(trace::dir::to_dut));  // used up
    run::filter_op window{run::filter_op::kind::delay};
    window.d = trace::dir::to_dut;
    window.count = 0;
    window.by = nanos{1000};
    window.for_ = nanos{5000};
    f.add(window, 1, {});
    CHECK(f.may_act(trace::dir::to_dut));
    s.advance_to(nanos{5000});
    CHECK_FALSE(f.may_act(trace::dir::to_dut));  // its window closed
    CHECK(f.apply(r).delay == nanos{0});
    run::filter_op every{run::filter_op::kind::mark_ce};
    every.d = trace::dir::to_dut;
    every.count = 0;
    f.add(every, 2, {});
    CHECK(f.may_act(trace::dir::to_dut));
    f.lift(2);
    CHECK_FALSE(f.may_act(trace::dir::to_dut));
}

TEST_CASE("settings: declared once; each default reads back through config_set") {
    const endpoint::config d;
    for (const auto& s : endpoint::settings()) {
        INFO(s.name);
        endpoint::config c;
        REQUIRE(endpoint::config_set(c, s.name, endpoint::setting_text(d, s)).ok());
        CHECK(endpoint::setting_text(c, s) == endpoint::setting_text(d, s));
    }
    endpoint::config c;
    CHECK_THAT(endpoint::config_set(c, "mtu", "4097").err().message, Catch::Contains("expected an integer in 256..4096"));
    CHECK_THAT(endpoint::config_set(c, "retry_limit", "4294967297").err().message, Catch::Contains("1..255"));
    CHECK_THAT(endpoint::config_set(c, "rto_min", "0").err().message, Catch::Contains("a duration"));
    CHECK_THAT(endpoint::config_set(c, "inbound_rate", "1Mbps").err().message, Catch::Contains("at least 100Mbps"));
    CHECK_THAT(endpoint::config_set(c, "colour", "red").err().message, Catch::Contains("unknown parameter 'colour'"));
    REQUIRE(endpoint::config_set(c, "rnr_timer_code", "31").ok());
    CHECK(c.rnr_timer_code == 31);
    REQUIRE(endpoint::config_set(c, "inbound_rate", "20Gbps").ok());
    CHECK(c.inbound_rate_bps == 20e9);
    const auto md = endpoint::settings_markdown();
    CHECK_THAT(md, Catch::Contains("| `rto_min` | duration, above 0 | `100us` |"));
    CHECK_THAT(md, Catch::Contains("| `mtu` | integer, 256..4096 | `4096` |"));
}

TEST_CASE("compile: a topology key nobody declared is refused where it is written, in a case or in defaults") {
    const auto s = load(R"(defaults:
  topology: {bananas: 3}
cases:
  - id: A
    clauses: [MR-PATH-1]
    topology: {paths: 2, colour: red}
    expect: [wire_format: {}]
)");
    std::vector<std::string> errors;
    (void)run::compile(s.cases.at(0), 1ull << 30, [&](const plan::loc& at, const std::string& m) { errors.push_back(at.str() + ": " + m); });
    REQUIRE(errors.size() == 2);
    CHECK_THAT(errors[0], Catch::EndsWith("c.yaml:2:23: unknown topology key 'bananas' (expected paths, peers, delay, path_delay, rate)"));
    CHECK_THAT(errors[1], Catch::EndsWith("c.yaml:6:34: unknown topology key 'colour' (expected paths, peers, delay, path_delay, rate)"));
}

TEST_CASE("describe: an operation with every value written out, defaults included") {
    auto c = compile_case(one_case("receiver", "      - post_send: {tag: 8, size: 8192, stream: 1, side: peer}\n"
                                               "      - post_write: {}\n"
                                               "      - delay: {dir: to_dut, by: 20ms, count: 0, match: {opcode: DATA, tag: 7}}\n"
                                               "      - drop: {skip: 2, for: 1ms}\n"
                                               "      - fail_path: {path: 1, dir: to_dut}\n      - skew: {path: 2, add: 5us}\n"));
    REQUIRE(c.errors.empty());
    REQUIRE(c.p.setup.size() == 6);
    CHECK(run::describe(c.p.setup[0]) == "post_send from the peer: 1 x 8192 bytes, stream 1, tag 8");
    CHECK(run::describe(c.p.setup[1]) == "post_write from the DUT: 1 x 4096 bytes, stream 0");
    CHECK(run::describe(c.p.setup[2]) == "delay frames to the DUT matching opcode=DATA, tag=7: every one, by 20ms");
    CHECK(run::describe(c.p.setup[3]) == "drop frames from the DUT: the next 1 after 2, for 1ms");
    CHECK(run::describe(c.p.setup[4]) == "fail_path 1, towards the DUT");
    CHECK(run::describe(c.p.setup[5]) == "skew PathID 2 by 5us, both directions");
}
