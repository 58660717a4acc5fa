// The runner: validation with file:line:col, verdicts, determinism, filters,
// outputs.
#include <algorithm>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "reports/reports.h"
#include "run/mini_plan.h"
#include "run/case_exec.h"
#include "run/runner.h"
#include "run/time_scale.h"

using namespace mrct;
using test::k_plan;
using assertions::verdict;

namespace {

std::string write(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "run_test_files";
    std::filesystem::create_directories(dir);
    const auto p = (dir / name).string();
    std::ofstream(p) << text;
    return p;
}

plan::suite load(const std::string& name, const std::string& text) {
    auto s = plan::load(write(name, text));
    REQUIRE(s.ok());
    return *s;
}

// The errors validate gives a plan of this text (it must give some).
std::string validation_error(const std::string& name, const std::string& text) {
    auto st = run::validate(load(name, text));
    REQUIRE_FALSE(st.ok());
    return st.err().message;
}

// A valid plan's cases against the reference, their traces kept.
std::vector<run::case_result> run_sim_with_traces(const plan::suite& s) {
    REQUIRE(run::validate(s).ok());
    run::run_options o;
    o.keep_traces = true;
    return run::run_suite(s, *run::parse_dut("sim"), o);
}

}  // namespace

TEST_CASE("message bytes: the same for a seed, different across seeds, every length filled") {
    CHECK(run::detail::pattern(0, 7).empty());
    const auto a = run::detail::pattern(4099, 7);
    CHECK(a == run::detail::pattern(4099, 7));
    CHECK(a != run::detail::pattern(4099, 8));
    const auto shorter = run::detail::pattern(13, 7);  // a prefix: eight bytes per step, the tail from the next step
    CHECK(std::equal(shorter.begin(), shorter.end(), a.begin()));
    // Not constant and not zero anywhere near the end (the tail is written).
    CHECK(std::count(a.end() - 64, a.end(), std::uint8_t{0}) < 8);
    CHECK(std::set<std::uint8_t>(a.begin(), a.end()).size() > 200);
}

TEST_CASE("the reference DUT passes; bug profiles fail the case citing their clause") {
    auto s = load("p1.yaml", k_plan);
    REQUIRE(run::validate(s).ok());
    run::run_options o;
    auto ref = run::run_suite(s, *run::parse_dut("sim"), o);
    REQUIRE(ref.size() == 3);
    CHECK(ref[0].v == verdict::pass);
    CHECK(ref[1].v == verdict::pass);
    CHECK(ref[2].v == verdict::skipped);
    CHECK_THAT(ref[2].reason, Catch::Contains("rtl_backdoor"));

    REQUIRE_FALSE(run::parse_dut("sim:bug=").ok());  // empty: an error, not the reference DUT
    auto nf = run::run_suite(s, *run::parse_dut("sim:bug=no-fast-retx"), o);
    CHECK(nf[0].v == verdict::fail);
    CHECK(nf[1].v == verdict::pass);
    auto fr = run::run_suite(s, *run::parse_dut("sim:bug=frozen-rnr"), o);
    CHECK(fr[0].v == verdict::pass);
    CHECK(fr[1].v == verdict::fail);
    CHECK_THAT(fr[1].reason, Catch::Contains("never resumed"));
}

TEST_CASE("same seed, same results; the seed changes the run") {
    auto s = load("p2.yaml", k_plan);
    auto strip = [](std::string j) { return std::regex_replace(j, std::regex("\"wall_s\": [0-9.e-]+"), "\"wall_s\": 0"); };
    run::run_options o;
    o.seed = 7;
    o.jobs = 2;
    auto a = run::run_suite(s, *run::parse_dut("sim"), o);
    auto b = run::run_suite(s, *run::parse_dut("sim"), o);
    auto doc = [&](const std::vector<run::case_result>& rs) {
        std::vector<reports::json> cs;
        for (const auto& r : rs) cs.push_back(reports::case_json(r, r.order));
        return reports::strip_times(reports::results(s, {"sim", {"x", "y", "none"}, 7, "", false}, cs, rs.size())).dump();
    };
    CHECK(strip(doc(a)) == strip(doc(b)));
    o.seed = 8;
    auto c = run::run_suite(s, *run::parse_dut("sim"), o);
    CHECK(c[0].seed != a[0].seed);
}

TEST_CASE("filters by case glob and clause glob; repeat") {
    auto s = load("p3.yaml", k_plan);
    run::run_options o;
    o.filters = {"RNR-*"};
    CHECK(run::select(s, o).size() == 1);
    o.filters.clear();
    o.clauses = {"MR-SACK-*", "MR-HDR-?"};
    CHECK(run::select(s, o).size() == 2);
    o.clauses.clear();
    o.filters = {"LOSS-1"};
    o.repeat = 3;
    auto r = run::run_suite(s, *run::parse_dut("sim"), o);
    REQUIRE(r.size() == 3);
    CHECK(r[0].id == "LOSS-1#1");
    CHECK(r[0].seed != r[1].seed);
}

TEST_CASE("a stop request runs no further cases") {
    auto s = load("p4.yaml", k_plan);
    std::atomic<bool> stop{true};
    run::run_options o;
    o.stop = &stop;
    CHECK(run::run_suite(s, *run::parse_dut("sim"), o).empty());
}

TEST_CASE("a DUT that cannot be made gives an error verdict, and the run goes on") {
    auto s = load("p5.yaml", k_plan);
    run::dut_factory broken = []() -> core::result<std::unique_ptr<dut::dut>> { return core::error{"agent unreachable"}; };
    auto r = run::run_suite(s, broken, {});
    REQUIRE(r.size() == 3);
    CHECK(r[0].v == verdict::error);
    CHECK_THAT(r[0].reason, Catch::Contains("agent unreachable"));
}

TEST_CASE("unknown DUT specs and bug names are usage errors") {
    CHECK_FALSE(run::parse_dut("agent+udp").ok());
    CHECK_THAT(run::parse_dut("simx").err().message, Catch::Contains("agent+dpdk:OPTIONS"));  // every kind named
    CHECK_THAT(run::parse_dut("sim:foo=bar").err().message,
               Catch::Contains("'foo=bar' is not bug=NAME or variant=NAME[+NAME...]"));
    CHECK_THAT(run::parse_dut("sim:bug=nope").err().message, Catch::Contains("unknown bug profile 'nope'"));
    CHECK_THAT(run::parse_dut("sim:variant=nope").err().message, Catch::Contains("unknown conforming variant 'nope'"));
    CHECK_FALSE(run::parse_dut("sim:variant=").ok());
    CHECK_FALSE(run::parse_dut("sim:").ok());
    CHECK(run::parse_dut("sim:variant=ack-each+stream-rr").ok());
    // A bug profile making other legal choices too (D157); each key once.
    CHECK(run::parse_dut("sim:bug=frozen-rnr,variant=ack-each+stream-rr").ok());
    CHECK(run::parse_dut("sim:variant=ack-each,bug=frozen-rnr").ok());
    CHECK_THAT(run::parse_dut("sim:bug=frozen-rnr,bug=shared-rto").err().message, Catch::Contains("each at most once"));
    CHECK_THAT(run::parse_dut("sim:bug=frozen-rnr,variant=nope").err().message,
               Catch::Contains("unknown conforming variant 'nope'"));
}

TEST_CASE("sim:variant= runs the reference making other legal choices, and hello says which (D153)") {
    auto make = run::parse_dut("sim:variant=ack-each+close-late");
    REQUIRE(make.ok());
    auto d = (*make)();
    REQUIRE(d.ok());
    CHECK((*d)->hello().name == "mrct-reference (in-process, variant ack-each+close-late)");
    CHECK((*d)->hello().bug == "none");
}

TEST_CASE("validation reports every problem with file:line:col") {
    const auto m = validation_error("bad.yaml", R"(cases:
  - id: X
    clauses: [MR-NOPE-1]
    dut: {rto_min: fast}
    topology:
      paths: 300
      impair:
        - loss: {p: 2}
    setup:
      - post_wrte: {size: 10}
      - drop: {match: {colour: red}}
    steps:
      - {at: soon, do: []}
    expect:
      - rnr_resume: {within: "rnr_time +"}
      - no_such_check: {}
)");
    CHECK_THAT(m, Catch::Contains("bad.yaml:3:15: unknown clause ID 'MR-NOPE-1'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:4:20: dut: parameter 'rto_min' = 'fast'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:6:14: topology.paths must be 1..256"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:8:11: stage 'loss': parameter 'p' = '2'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:10:9: unknown action 'post_wrte'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:11:32: unknown match field 'colour'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:13:14: at: expects a duration"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:15:9: assertion 'rnr_resume', parameter 'within'"));
    CHECK_THAT(m, Catch::Contains("bad.yaml:16:9: unknown assertion 'no_such_check'"));
}

TEST_CASE("validation: every integer within the field it feeds, and the bytes an action allocates bounded (issue 23)") {
    const auto m = validation_error("numbers.yaml", R"(cases:
  - id: X
    clauses: [MR-HDR-1]
    setup:
      - post_send: {side: dut, tag: 70000, stream: 65536, count: -1}
      - post_write: {side: dut, size: 18446744073709551617}
      - post_write: {side: dut, size: 4294967297, imm: 0x1FFFFFFFF}
      - post_write: {side: dut, size: 1048576, count: 2048}
      - memory: {size: 2147483648}
      - drop: {match: {opcode: ACK}, count: 4294967296, skip: 1}
    topology: {paths: 18446744073709551617, peers: -1, path_delay: {banana: 5us}}
    dut: {bug: no-such-bug}
    expect:
      - wire_format: {}
    limits: {duration: 0}
)");
    CHECK_THAT(m, Catch::Contains("numbers.yaml:5:37: post_send: 'tag' expects a Tag, 0..65535, got '70000'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:5:52: post_send: 'stream' expects a StreamID, 0..65535, got '65536'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:5:66: post_send: 'count' expects a count, 0..4294967295, got '-1'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:6:39: post_write: 'size' expects a message length, 0..4294967295 bytes"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:7:39: post_write: 'size' expects"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:7:56: post_write: 'imm' expects 32-bit immediate data"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:8:9: post_write: 2048 x 1048576 bytes is more than 1073741824 bytes"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:9:9: memory: 1 x 2147483648 bytes is more than 1073741824 bytes"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:10:45: drop: 'count' expects a count, 0..4294967295, got '4294967296'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:11:23: topology.paths must be 1..256, got '18446744073709551617'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:11:52: topology.peers must be 1..64, got '-1'"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:15:24: limits.duration must be longer than 0"));
    CHECK_THAT(m, Catch::Contains("topology.path_delay: 'banana' is not a path number"));
    CHECK_THAT(m, Catch::Contains("numbers.yaml:12:16: dut.bug: unknown bug profile 'no-such-bug'"));
    // In range, in hex where immediate data may be: no complaint.
    auto ok = load("numbers_ok.yaml", R"(cases:
  - id: X
    clauses: [MR-HDR-1]
    setup:
      - post_send: {side: dut, tag: 65535, stream: 0, count: 2, imm: 0xFFFFFFFF}
    expect:
      - wire_format: {}
)");
    CHECK(run::validate(ok).ok());
}

TEST_CASE("validation: each error once, at most k_max_plan_errors of them, and the action bytes limit from the plan's limits") {
    std::string keys;
    for (int i = 0; i < 150; ++i) keys += (keys.empty() ? "" : ", ") + std::string("k") + std::to_string(i) + ": 1";
    const std::string text = "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    sweep: {paths: [1, 2, 3]}\n    dut: {" + keys +
                             "}\n    expect: [{wire_format: {}}]\n";
    const auto m = validation_error("many_errors.yaml", text);
    CHECK(std::count(m.begin(), m.end(), '\n') == static_cast<long>(run::k_max_plan_errors));  // 100 lines and the note
    CHECK_THAT(m, Catch::EndsWith("(50 more errors not shown: fix these first)"));  // 150 distinct, not 450
    auto s = load("action_bytes.yaml", "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    setup: [{post_write: {side: dut, size: 4096, count: 3}}]\n"
                                       "    expect: [{wire_format: {}}]\n");
    CHECK(run::validate(s).ok());
    s.lim.action_bytes = 8192;
    CHECK_THAT(run::validate(s).err().message,
               Catch::Contains("action_bytes.yaml:4:14: post_write: 3 x 4096 bytes is more than 8192 bytes, the most one action may "
                               "move or take (--plan-limit action_bytes=N raises it)"));
}

TEST_CASE("validation: fabric paths and directions are checked where they are written") {
    // Each of these once passed validation and then did nothing (an impairment
    // on a path the fabric lacks, a direction no frame has) or failed mid-run.
    const auto m = validation_error("paths.yaml", R"(cases:
  - id: X
    clauses: [MR-PATH-1]
    topology:
      paths: 4
      impair:
        - loss: {path: 4, p: 1}
        - loss: {dir: up, p: 1}
        - loss: {path: two, p: 1}
        - loss: {path: all, dir: both, p: 0}
    setup:
      - fail_path: {path: 3, dir: to_peer}
      - fail_path: {path: 7, dir: nowhere}
      - restore_path: {dir: both}
      - drop: {dir: sideways}
      - mark_ce: {dir: to_dut}
      - move_port: {path: 4}
      - skew: {path: 3, add: 5us}
      - post_write: {size: 64, peer: 1}
    expect: [wire_format: {}]
  - id: Y
    clauses: [MR-PATH-1]
    peer: {num_paths: 8}
    topology:
      paths: 2
      impair:
        - duplicate: {path: 7, p: 1}
    expect: [wire_format: {}]
)");
    CHECK_THAT(m, Catch::Contains("paths.yaml:7:24: impair 'loss': no fabric path 4 (this case's fabric has paths 0..3)"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:8:23: impair 'loss': dir must be one of to_peer, to_dut, both, got 'up'"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:9:24: impair 'loss': path must be a fabric path number or all, got 'two'"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:13:35: fail_path: dir must be one of to_peer, to_dut, both, got 'nowhere'"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:13:27: fail_path: no fabric path 7"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:14:9: restore_path: 'path' is required"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:15:21: drop: dir must be one of from_dut, to_dut, got 'sideways'"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:17:27: move_port: no path 4 (the connection has PathIDs 0..3)"));
    CHECK_THAT(m, Catch::Contains("paths.yaml:19:38: post_write: no peer 1 (this case has peers 0..0)"));
    // What is right passes: line 10's impairment, line 12's fail_path, line 16's mark_ce, line
    // 18's skew, and case Y's path 7 (the peer's 8 paths make the fabric 8 wide).
    CHECK_THAT(m, !Catch::Contains("paths.yaml:10:") && !Catch::Contains("paths.yaml:12:") &&
                      !Catch::Contains("paths.yaml:16:") && !Catch::Contains("paths.yaml:18:") &&
                      !Catch::Contains("paths.yaml:27:"));
}

TEST_CASE("handshake: filters act on the wire before the connection opens") {
    auto s = load("hs.yaml", R"(cases:
  - id: LOST-ACCEPT
    title: the first ACCEPT is lost
    clauses: [MR-CONN-1]
    handshake:
      - drop: {dir: to_dut, match: {ctrl: ACCEPT}, count: 1}
    setup: [post_write: {side: dut, size: 8192}]
    expect:
      - frame_count: {match: {ctrl: CONNECT}, at_least: 2, at_most: 2}
      - ctrl_repeat: {}
  - id: SETUP-DROP
    title: the same drop in setup comes too late
    clauses: [MR-CONN-1]
    setup:
      - drop: {dir: to_dut, match: {ctrl: ACCEPT}, count: 1}
      - post_write: {side: dut, size: 8192}
    expect:
      - frame_count: {match: {ctrl: CONNECT}, at_least: 1, at_most: 1}
)");
    auto r = run_sim_with_traces(s);
    REQUIRE(r.size() == 2);
    INFO(r[0].reason);
    CHECK(r[0].v == verdict::pass);
    // The setup's drop found no ACCEPT to drop: its count checks pass, and
    // the case says its premise did not arise (D101).
    CHECK(r[1].v == verdict::inconclusive);
    CHECK_THAT(r[1].reason, Catch::Contains("the setup's drop frames to the DUT matching ctrl=ACCEPT: the next 1 acted on 0 of 1"));
    for (const auto& a : r[1].asserts)
        if (a.name != "premise") CHECK(a.o.v == verdict::pass);
    bool labelled = false;
    for (const auto& f : r[0].tr->frames) labelled |= f.dropped && f.action == "dropped by handshake";
    CHECK(labelled);

    const auto m = validation_error("hsbad.yaml", R"(cases:
  - id: X
    title: posts cannot come before the connection
    clauses: [MR-CONN-1]
    handshake:
      - post_write: {side: dut, size: 8192}
      - drop: {dir: sideways}
    expect: [wire_format: {}]
)");
    CHECK_THAT(m, Catch::Contains("hsbad.yaml:6:9: handshake: only drop, duplicate, delay and mark_ce act on the wire "
                                  "before the connection opens, not 'post_write'"));
    CHECK_THAT(m, Catch::Contains("hsbad.yaml:7:21: drop: dir must be one of from_dut, to_dut, got 'sideways'"));
}

TEST_CASE("handshake: a connection that does not open through the handshake's filters fails the case; otherwise it is an error") {
    // A DUT that never repeats CONNECT (connect-once) loses the same ACCEPT
    // twice: to a `handshake:` filter, which says the case tests the
    // handshake's recovery, and to a fabric impairment, which does not.
    auto s = load("hslost.yaml", R"(cases:
  - id: LOST-ACCEPT
    title: the first ACCEPT is lost by the handshake's filter
    clauses: [MR-CONN-1]
    handshake:
      - drop: {dir: to_dut, match: {ctrl: ACCEPT}, count: 1}
    expect: [wire_format: {}]
  - id: IMPAIRED
    title: the first ACCEPT is lost by the fabric
    clauses: [MR-CONN-1]
    topology:
      impair:
        - match_drop: {path: all, dir: to_dut, opcode: CTRL, count: 1}
    expect: [wire_format: {}]
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim:bug=connect-once"), {});
    REQUIRE(r.size() == 2);
    CHECK(r[0].v == verdict::fail);
    REQUIRE(r[0].asserts.size() == 1);  // in place of the expectations, which had no connection to check
    const auto& a = r[0].asserts[0];
    CHECK(a.name == "handshake");
    CHECK(a.clauses == std::vector<std::string>{"MR-CONN-1"});
    CHECK(a.at.line == 6);  // the handshake's first filter
    CHECK(a.o.message ==
          "the connection between DUT and peer was not established within 20 ms with the handshake's filters in force; "
          "from the DUT: 1 CONNECT; to the DUT: 1 ACCEPT (1 dropped by the filters)");
    CHECK(a.o.frames.size() == 2);
    CHECK(r[1].v == verdict::error);
    // The cause as far as the wire shows it (the impair stage lost the ACCEPT before the DUT's wire).
    CHECK(r[1].reason == "the connection between DUT and peer was not established within 20 ms: "
                         "from the DUT: 1 CONNECT; to the DUT: no CTRL frame");
    // The reference repeats its CONNECT and passes both.
    auto ok = run::run_suite(s, *run::parse_dut("sim"), {});
    CHECK(ok[0].v == verdict::pass);
    CHECK(ok[1].v == verdict::pass);
}

TEST_CASE("handshake: an ACCEPT that comes after the peer's CONNECTs ran out leaves the case unopened, with the cause") {
    // The DUT accepts, but its ACCEPT arrives after the peer sent CONNECT
    // retry-limit times and gave up (beside stress-ng a held DUT did this
    // over agent+udp): the DUT has a connection the peer has not, and the
    // case may not go on with it.
    auto s = load("late.yaml", R"(cases:
  - id: LATE-ACCEPT
    title: every frame from the DUT takes 15 ms
    clauses: [MR-CONN-1]
    role: sender
    topology:
      impair:
        - delay: {path: all, dir: to_peer, delay: 15ms}
    setup:
      - post_recv: {side: dut, tag: 1, size: 4096, count: 1}
      - post_send: {side: peer, stream: 1, tag: 1, size: 4096, count: 1}
    expect: [wire_format: {}]
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim"), {});
    REQUIRE(r.size() == 1);
    CHECK(r[0].v == verdict::error);
    CHECK_THAT(r[0].reason, Catch::StartsWith("the connection between DUT and peer was not established within 20 ms: "
                                              "from the DUT: "));
    CHECK_THAT(r[0].reason, Catch::EndsWith("; the engine gave up on its CONNECT after 7 transmissions (the retry limit), "
                                            "before the DUT's ACCEPT came"));
}

TEST_CASE("lift: a step ends another step's filters") {
    auto s = load("lift.yaml", R"(cases:
  - id: LIFT
    title: ACKs withheld until the DUT's first resend, then let through
    clauses: [MR-SACK-1]
    setup: [post_write: {side: dut, size: 65536}]
    steps:
      - at: 0us
        do: [drop: {dir: to_dut, match: {opcode: ACK}, count: 0}]
      - on: {match: {opcode: WRITE, retx: true}}
        do: [lift: {step: 0}]
    expect:
      - all_complete: {}
      - frame_count: {dir: to_dut, match: {opcode: ACK}, at_least: 1}
      - frame_count: {match: {opcode: WRITE, retx: true}, at_least: 1}
  - id: NO-LIFT
    title: the same drop, never lifted
    clauses: [MR-SACK-1]
    setup: [post_write: {side: dut, size: 65536}]
    steps:
      - at: 0us
        do: [drop: {dir: to_dut, match: {opcode: ACK}, count: 0}]
    expect:
      - frame_count: {dir: to_dut, match: {opcode: ACK}, at_least: 0, at_most: 0}
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim"), {});
    REQUIRE(r.size() == 2);
    INFO(r[0].reason);
    CHECK(r[0].v == verdict::pass);
    CHECK(r[1].v == verdict::pass);

    const auto m = validation_error("liftbad.yaml", R"(cases:
  - id: X
    title: lifts that cannot work
    clauses: [MR-SACK-1]
    setup:
      - lift: {step: 0}
    steps:
      - at: 0us
        do: [lift: {step: 0}]
      - at: 1us
        do: [lift: {step: 5}, lift: {}]
    expect: [wire_format: {}]
)");
    CHECK_THAT(m, Catch::Contains("liftbad.yaml:6:9: lift: only a step can end another step's filters"));
    CHECK_THAT(m, Catch::Contains("liftbad.yaml:9:27: lift: step must be another step of this case, 0..1, got '0'"));
    CHECK_THAT(m, Catch::Contains("liftbad.yaml:11:27: lift: step must be another step of this case, 0..1, got '5'"));
    CHECK_THAT(m, Catch::Contains("liftbad.yaml:11:31: lift: 'step' is required"));
}

TEST_CASE("premise (D101): a fault written with a count that did not act in full, or a step that never ran, leaves the case inconclusive") {
    // 64 KiB over 8 paths is 2 packets a path: a 6th on path 1 never comes.
    auto s = load("premise.yaml", R"(cases:
  - id: ACTED
    title: the drop acts and the trigger fires
    clauses: [MR-SACK-3]
    setup:
      - drop: {match: {opcode: DATA, path: 1}, count: 1}
      - post_write: {side: dut, size: 65536}
    steps:
      - on: {match: {opcode: DATA, path: 1, retx: true}}
        do: [drop: {dir: to_dut, match: {opcode: ACK}, count: 0, for: 1us}]
    expect:
      - all_complete: {}
  - id: NO-SIXTH
    title: a drop of a 6th packet a path never carries
    clauses: [MR-SACK-3]
    setup:
      - drop: {match: {opcode: DATA, path: 1}, skip: 5, count: 1}
      - post_write: {side: dut, size: 65536}
    expect:
      - all_complete: {}
      - data_integrity: {}
  - id: NO-TRIGGER
    title: a step waiting for a resend nobody needs
    clauses: [MR-SACK-3]
    setup: [post_write: {side: dut, size: 65536}]
    steps:
      - on: {match: {opcode: DATA, retx: true}, nth: 2}
        do: [inject: {template: ack, path: 1}]
    expect:
      - all_complete: {}
  - id: FAILS-ANYWAY
    title: a check that fails is not excused by a premise not met
    clauses: [MR-SACK-3]
    setup:
      - drop: {match: {opcode: DATA, path: 1}, skip: 5, count: 3}
      - post_write: {side: dut, size: 65536}
    expect:
      - frame_count: {match: {opcode: ACK}, at_least: 1}
  - id: COUNT-0
    title: every one, and a lifted filter, ask for nothing
    clauses: [MR-SACK-3]
    setup:
      - drop: {match: {opcode: DATA, path: 7, retx: true}, count: 0}
      - post_write: {side: dut, size: 65536}
    steps:
      - at: 0us
        do: [drop: {match: {opcode: DATA, path: 6, retx: true}, count: 5}]
      - at: 1us
        do: [lift: {step: 0}]
    expect:
      - all_complete: {}
  - id: NO-LOSS
    title: a case under loss that lost nothing; a queue and a delay ask for nothing
    clauses: [MR-SACK-3]
    topology:
      impair:
        - loss: {dir: to_peer, p: 0}
        - queue: {rate: 1000Gbps}
        - delay: {delay: 1us}
        - duplicate: {dir: to_dut, path: 2, p: 1}
    setup: [post_write: {side: dut, size: 65536}]
    expect:
      - all_complete: {}
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim"), {});
    REQUIRE(r.size() == 6);
    auto premise = [](const run::case_result& c) -> const run::assertion_result* {
        for (const auto& a : c.asserts)
            if (a.name == "premise") return &a;
        return nullptr;
    };
    INFO(r[0].reason);
    CHECK(r[0].v == verdict::pass);
    CHECK(premise(r[0]) == nullptr);

    CHECK(r[1].v == verdict::inconclusive);
    REQUIRE(premise(r[1]));
    CHECK(r[1].reason ==
          "premise: the case's premise did not arise: the setup's drop frames from the DUT matching opcode=DATA, path=1: "
          "the next 1 after 5 acted on 0 of 1");
    CHECK(premise(r[1])->at.line == 17);  // the drop's place in the plan
    for (const auto& a : r[1].asserts)
        if (a.name != "premise") CHECK(a.o.v == verdict::pass);  // the checks themselves passed: nothing was tested

    CHECK(r[2].v == verdict::inconclusive);
    CHECK_THAT(r[2].reason, Catch::Contains("step 0 (on the 2nd frame from the DUT matching opcode=DATA, retx=true; 0 matched) did not run"));

    CHECK(r[3].v == verdict::fail);  // frame_count from the DUT: ACKs are the peer's
    REQUIRE(premise(r[3]));
    CHECK(premise(r[3])->o.v == verdict::inconclusive);

    INFO(r[4].reason);
    CHECK(r[4].v == verdict::pass);

    // 64 KiB in 16 packets and the connection's own CTRL frames: the loss
    // stage saw them all and dropped none. Only it is named.
    CHECK(r[5].v == verdict::inconclusive);
    CHECK_THAT(r[5].reason, Catch::Matches("premise: the case's premise did not arise: topology.impair loss \\(to_peer, p=0\\) "
                                           "acted on none of the [0-9]+ frames it saw"));
    REQUIRE(premise(r[5]));
    CHECK(premise(r[5])->at.line > 0);
}

TEST_CASE("a trigger's after: the step runs that long after its frame; scaled with the case; a bad duration is a plan error") {
    auto s = load("after.yaml", R"(cases:
  - id: AFTER
    title: a step 2 ms after the first DATA frame
    clauses: [MR-SACK-3]
    setup: [post_write: {side: dut, size: 8192}]
    steps:
      - on: {match: {opcode: DATA}, after: 2ms}
        do: [post_write: {side: dut, size: 4096}]
    expect:
      - all_complete: {}
)");
    auto r = run_sim_with_traces(s);
    REQUIRE(r.size() == 1);
    INFO(r[0].reason);
    CHECK(r[0].v == verdict::pass);
    const auto& tr = *r[0].tr;
    core::nanos first_data{-1};
    for (const auto& f : tr.frames)
        if (f.d == trace::dir::from_dut && f.data()) {
            first_data = f.t;
            break;
        }
    REQUIRE(first_data.count() >= 0);
    REQUIRE(tr.step_times.count(0));
    CHECK(tr.step_times.at(0) - first_data == std::chrono::milliseconds(2));

    auto scaled = run::scale_case(s.cases[0], 4);
    REQUIRE(scaled.ok());
    REQUIRE(scaled->steps[0].on->after);
    CHECK(scaled->steps[0].on->after->text == "8000000ns");

    const auto m = validation_error("afterbad.yaml", R"(cases:
  - id: X
    title: after what
    clauses: [MR-SACK-1]
    setup: [post_write: {side: dut, size: 8192}]
    steps:
      - on: {match: {opcode: DATA}, after: soon}
        do: [post_write: {side: dut, size: 4096}]
    expect: [all_complete: {}]
)");
    CHECK_THAT(m, Catch::Contains("afterbad.yaml:7:44: after: expects a duration such as 2ms, got 'soon'"));
}

TEST_CASE("JUnit keeps failures, errors, skipped and inconclusive apart") {
    auto s = load("p6.yaml", k_plan);
    auto r = run::run_suite(s, *run::parse_dut("sim:bug=frozen-rnr"), {});
    r.push_back(r[0]);
    r.back().id = "INC-1";
    r.back().v = verdict::inconclusive;
    r.back().reason = "no loss";
    std::vector<reports::json> cs;
    for (std::size_t i = 0; i < r.size(); ++i) cs.push_back(reports::case_json(r[i], i));
    const auto x = reports::junit(reports::results(s, {"sim:bug=frozen-rnr", {}, 1, "", false}, cs, r.size()));
    CHECK_THAT(x, Catch::Contains("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\""));
    CHECK_THAT(x, Catch::Contains("<failure message=\"rnr_resume: tag 2 never resumed"));
    CHECK_THAT(x, Catch::Contains("<skipped message=\"inconclusive: no loss\"/>"));
    CHECK_THAT(x, Catch::Contains("<skipped message=\"skipped: the DUT lacks capability 'rtl_backdoor'\"/>"));
    CHECK_THAT(x, Catch::Contains("<property name=\"clauses\" value=\"MR-RNR-4\"/>"));
    // The engine's priority (D76): in results.json and the report's header
    // for a real-time run, absent otherwise.
    const auto rt = reports::results(s, {"agent+udp:x", {}, 1, "", false, {}, "nice -10 (was 0)"}, cs, r.size());
    CHECK(rt["priority"] == "nice -10 (was 0)");
    CHECK_THAT(reports::html(rt), Catch::Contains("engine priority nice -10 (was 0)"));
    CHECK_FALSE(reports::results(s, {"sim", {}, 1, "", false}, cs, r.size()).contains("priority"));
}

TEST_CASE("the peer departs from the reference on cue: forged RNR and ACK, port moves, role both") {
    auto s = load("p7.yaml", R"(cases:
  - id: RNR-CUE
    title: forged RNR on the first SEND of tag 6
    clauses: [MR-RNR-4]
    peer: {rnr_timer_code: 10}
    setup:
      - post_recv: {side: peer, tag: 6, size: 8192}
      - post_send: {side: dut, stream: 1, tag: 6, size: 8192}
    steps:
      - on: {match: {opcode: SEND, tag: 6, offset: 0}}
        do: [inject: {template: rnr}]
    expect:
      - rnr_resume: {}
      - frame_count: {dir: to_dut, match: {opcode: RNR}, at_least: 1, at_most: 1}
  - id: RNR-TIMED
    title: a forged RNR needs a triggering SEND
    clauses: [MR-RNR-4]
    steps:
      - {at: 5us, do: [inject: {template: rnr}]}
    expect:
      - wire_format: {}
  - id: MOVE
    title: peer moves its port
    clauses: [MR-PATH-3]
    role: sender
    setup:
      - post_write: {size: 65536, count: 4}
    steps:
      - {at: 2us, do: [move_port: {path: 1}]}
    expect:
      - all_complete: {}
      - data_integrity: {}
  - id: BOTH
    title: data both ways
    clauses: [MR-OOO-1]
    role: both
    setup:
      - post_write: {side: dut, size: 65536}
      - post_write: {side: peer, size: 65536}
    expect:
      - all_complete: {}
      - data_integrity: {}
      - frame_count: {dir: to_dut, match: {opcode: WRITE}, at_least: 16}
      - frame_count: {dir: from_dut, match: {opcode: WRITE}, at_least: 16}
  - id: QUERY
    title: an RNR_QUERY on cue is answered by RNR_SYNC alone (no rejection kept)
    clauses: [MR-RNR-6]
    role: sender
    steps:
      - {at: 5us, do: [inject: {template: rnr_query}]}
    expect:
      - frame_count: {dir: to_dut, match: {ctrl: RNR_QUERY}, at_least: 1, at_most: 1}
      - frame_count: {match: {ctrl: RNR_SYNC}, at_least: 1, at_most: 1}
      - frame_count: {match: {opcode: RNR}, at_least: 0, at_most: 0}
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim"), {});
    REQUIRE(r.size() == 5);
    INFO(r[4].reason);
    CHECK(r[4].v == verdict::pass);
    CHECK(r[0].v == verdict::pass);
    CHECK(r[1].v == verdict::error);
    CHECK_THAT(r[1].reason, Catch::Contains("template rnr answers the SEND that triggered the step"));
    CHECK(r[2].v == verdict::pass);
    CHECK(r[3].v == verdict::pass);
    auto frozen = run::run_suite(s, *run::parse_dut("sim:bug=frozen-rnr"), {});
    CHECK(frozen[0].v == verdict::fail);
}

TEST_CASE("coverage: every MUST needs two cases, one a fault or negative case") {
    auto s = load("cov.yaml", R"(cases:
  - id: PLAIN
    title: no fault
    clauses: [MR-HDR-4]
    setup: [post_write: {side: dut, size: 100}]
    expect: [wire_format: {}]
  - id: PLAIN-2
    title: no fault either
    clauses: [MR-HDR-4]
    setup: [post_recv: {side: peer, tag: 2, size: 100}, post_send: {side: dut, tag: 2, size: 100}]
    expect: [wire_format: {}]
  - id: DROP
    title: a drop
    clauses: [MR-SACK-3]
    setup: [drop: {match: {opcode: DATA}}, post_write: {side: dut, size: 100}]
    expect: [wire_format: {}]
  - id: NO-RECV
    title: a SEND without a receive
    clauses: [MR-RNR-1]
    setup: [post_send: {side: dut, tag: 3, size: 100}]
    expect: [wire_format: {}]
)");
    CHECK_FALSE(run::is_fault_case(s.cases[0]));
    CHECK_FALSE(run::is_fault_case(s.cases[1]));
    CHECK(run::is_fault_case(s.cases[2]));
    CHECK(run::is_fault_case(s.cases[3]));
    const auto cov = run::check_coverage(s);
    auto has = [](const std::vector<std::string>& v, const std::string& x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    CHECK(has(cov.no_fault, "MR-HDR-4"));     // cited twice, never under a fault
    CHECK_FALSE(has(cov.no_fault, "MR-SACK-3"));
    CHECK(has(cov.thin, "MR-SACK-3 (1)"));    // under a fault, but only once
    CHECK(has(cov.thin, "MR-PATH-5 (0)"));    // a SHOULD nobody cites
}

// ---------------------------------------------------------------- agent DUTs
#include <atomic>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

namespace {

// Ends a test agent's accept loop: `stop` set, then a connection of its own
// to wake the blocking accept, and the thread joined.
void stop_accepting(std::atomic<bool>& stop, const boost::asio::ip::tcp::acceptor& acc, std::thread& t) {
    stop = true;
    boost::system::error_code ec;
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket s(io);
    s.connect(acc.local_endpoint(), ec);
    t.join();
}

// An agent on 127.0.0.1 that says hello and then never answers again (hung).
struct hung_agent {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acc{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    std::atomic<bool> stop{false};
    std::thread t;
    hung_agent() {
        t = std::thread([this] {
            while (!stop) {
                boost::system::error_code ec;
                boost::asio::ip::tcp::socket s(io);
                acc.accept(s, ec);
                if (ec || stop) return;
                std::string buf;
                auto n = boost::asio::read_until(s, boost::asio::dynamic_buffer(buf), '\n', ec);
                if (ec) continue;
                auto req = nlohmann::json::parse(buf.substr(0, n - 1));
                nlohmann::json hello = {{"id", req["id"]}, {"ok", true}, {"name", "hung"}, {"capabilities", {"write"}}};
                boost::asio::write(s, boost::asio::buffer(hello.dump() + "\n"), ec);
                std::this_thread::sleep_for(std::chrono::milliseconds(400));  // and nothing more on this connection
            }
        });
    }
    ~hung_agent() {
        stop_accepting(stop, acc, t);
    }
    std::string spec() const {
        return "agent+udp:agent=127.0.0.1:" + std::to_string(acc.local_endpoint().port()) +
               ",dut=127.0.0.2,local=127.0.0.1,timeout=100ms";
    }
};

}  // namespace

TEST_CASE("agent DUT: a hung agent makes each case an error with the reason; the run goes on") {
    auto s = load("agent_hung.yaml", R"(suite: {name: T}
cases:
  - id: A-1
    title: one write
    clauses: [MR-OOO-1]
    setup:
      - post_write: {side: dut, size: 4096}
    expect:
      - all_complete: {}
  - id: A-2
    title: another
    clauses: [MR-OOO-1]
    setup:
      - post_write: {side: dut, size: 4096}
    expect:
      - all_complete: {}
)");
    hung_agent a;
    auto make = run::parse_dut(a.spec());
    REQUIRE(make.ok());
    auto r = run::run_suite(s, *make, {});
    REQUIRE(r.size() == 2);
    CHECK(r[0].v == run::verdict::error);
    CHECK_THAT(r[0].reason, Catch::Contains("agent reset: no response within 100 ms"));
    // The agent is still stuck: the next case's hello gets no answer either.
    CHECK(r[1].v == run::verdict::error);
    CHECK_THAT(r[1].reason, Catch::Contains("no response within 100 ms"));
}

namespace {
// An agent on 127.0.0.1 that closes its first `drop` connections unread (a
// dying agent's listening socket took them), then answers hello: with ok,
// or refusing (`refuse`: a wrong token).
struct dropping_agent {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acc{io, {boost::asio::ip::make_address("127.0.0.1"), 0}};
    std::atomic<int> connections{0};
    std::atomic<bool> stop{false};
    std::thread t;
    dropping_agent(int drop, bool refuse) {
        t = std::thread([this, drop, refuse] {
            while (!stop) {
                boost::system::error_code ec;
                boost::asio::ip::tcp::socket s(io);
                acc.accept(s, ec);
                if (ec || stop) return;
                if (++connections <= drop) {
                    s.set_option(boost::asio::socket_base::linger(true, 0), ec);  // a reset, as a dying process's
                    s.close(ec);
                    continue;
                }
                std::string buf;
                auto n = boost::asio::read_until(s, boost::asio::dynamic_buffer(buf), '\n', ec);
                if (ec) continue;
                auto req = nlohmann::json::parse(buf.substr(0, n - 1));
                nlohmann::json hello = refuse ? nlohmann::json{{"id", req["id"]}, {"ok", false},
                                                               {"error", {{"code", "unauthorized"}, {"message", "bad token"}}}}
                                              : nlohmann::json{{"id", req["id"]}, {"ok", true}, {"name", "dropping"},
                                                               {"capabilities", {"write"}}};
                boost::asio::write(s, boost::asio::buffer(hello.dump() + "\n"), ec);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
    }
    ~dropping_agent() {
        stop_accepting(stop, acc, t);
    }
    std::string spec(const std::string& reconnect) const {
        return "agent+udp:agent=127.0.0.1:" + std::to_string(acc.local_endpoint().port()) +
               ",dut=127.0.0.2,local=127.0.0.1,timeout=500ms,reconnect=" + reconnect;
    }
};
}  // namespace

TEST_CASE("agent DUT: a connection dropped before hello's answer is tried again within reconnect; a refusal is not") {
    // Opens the DUT against an agent that drops `drop` connections first:
    // the open's error (empty: it opened) and the connections it made.
    auto open = [](int drop, bool refuse, const std::string& reconnect) {
        dropping_agent a(drop, refuse);
        auto make = run::parse_dut(a.spec(reconnect));
        REQUIRE(make.ok());
        auto d = (*make)();
        return std::make_pair(d.ok() ? std::string() : d.err().message, a.connections.load());
    };
    // Two connections reset, the third answers: the DUT opens.
    CHECK(open(2, false, "3s") == std::make_pair(std::string(), 3));
    // One try (reconnect=0): the reset is the error.
    const auto [once, tried] = open(1, false, "0");
    CHECK_THAT(once, Catch::Contains("hello"));
    CHECK(tried == 1);
    // A hello answered with a refusal is asked once.
    const auto [refused, asked] = open(0, true, "3s");
    CHECK_THAT(refused, Catch::Contains("unauthorized"));
    CHECK(asked == 1);
}

TEST_CASE("agent DUT specs: options are checked") {
    using namespace std::chrono_literals;
    CHECK_THAT(run::parse_dut("agent+udp:agent=127.0.0.1:7700").err().message, Catch::Contains("dut=IP is required"));
    CHECK_THAT(run::parse_dut("agent+udp:dut=10.0.0.1,local=10.0.0.2,colour=blue").err().message,
               Catch::Contains("unknown agent option 'colour'"));
    CHECK_THAT(run::parse_dut("agent+pcap:dut=10.0.0.1,local=10.0.0.2").err().message, Catch::Contains("iface=NAME"));
    CHECK_THAT(run::parse_dut("agent+carrier-pigeon:dut=10.0.0.1").err().message, Catch::Contains("unknown wire"));
    CHECK_THAT(run::parse_dut("agent+udp:dut=10.0.0.300,local=10.0.0.2").err().message, Catch::Contains("not an IPv4"));
    CHECK(run::parse_dut("agent+udp:agent=10.0.0.1:7701,dut=10.0.0.1,local=10.0.0.2,token=t,timeout=3s").ok());
    CHECK_THAT(run::parse_dut("agent+dpdk:dut=10.0.0.1,local=10.0.0.2,eal=--no-huge").err().message,
               Catch::Contains("dut_mac=MAC is required"));
    auto o = dut::parse_agent_options(
        "dpdk", "dut=10.0.0.1,local=10.0.0.2,dut_mac=02:00:00:00:00:09,port=0,eal=--no-huge --vdev=net_af_packet0,iface=v0");
    REQUIRE(o.ok());
    CHECK(o->eal == "--no-huge --vdev=net_af_packet0,iface=v0");
    CHECK(o->dpdk_port == "0");
    CHECK(o->shares_host);  // by default the host probe runs (docs/timing.md)
    auto apart = dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,host=separate");
    REQUIRE(apart.ok());
    CHECK_FALSE(apart->shares_host);
    CHECK_THAT(run::parse_dut("agent+udp:dut=10.0.0.1,local=10.0.0.2,host=maybe").err().message,
               Catch::Contains("host=maybe: shared or separate"));
    auto pid = dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,pid=4242");
    REQUIRE(pid.ok());
    CHECK(pid->pid == 4242);
    for (const char* bad : {"pid=", "pid=0", "pid=-3", "pid=12x"})
        CHECK_THAT(dut::parse_agent_options("udp", std::string("dut=10.0.0.1,local=10.0.0.2,") + bad).err().message,
                   Catch::Contains("a process ID"));
    // local=IP+IP+...: an address for each further peer of a case (topology.peers), on every wire.
    auto more = dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2+10.0.0.11+10.0.0.12");
    REQUIRE(more.ok());
    CHECK(netio::ip_text(more->local_ip) == "10.0.0.2");
    REQUIRE(more->more_local.size() == 2);
    CHECK(netio::ip_text(more->more_local[1]) == "10.0.0.12");
    CHECK_THAT(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2+10.0.0.2").err().message,
               Catch::Contains("10.0.0.2 is listed twice"));
    CHECK_THAT(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2+fd00::3").err().message,
               Catch::Contains("must all be IPv4 or all IPv6"));
    CHECK_THAT(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2+").err().message, Catch::Contains("local=10.0.0.2+: "));
    CHECK(dut::parse_agent_options("pcap", "dut=10.0.0.1,local=10.0.0.2+10.0.0.3,iface=v0")->more_local.size() == 1);
    // tx=packet: agent+udp's frames leave by a packet socket (udp_options::packet_iface).
    CHECK(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,tx=packet")->tx_packet);
    CHECK_FALSE(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,tx=udp")->tx_packet);
    CHECK_THAT(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,tx=raw").err().message,
               Catch::Contains("tx=raw: udp or packet"));
    CHECK_THAT(dut::parse_agent_options("pcap", "dut=10.0.0.1,local=10.0.0.2,iface=v0,tx=packet").err().message,
               Catch::Contains("for agent+udp only"));
    // wire_rtt=: a fabric's round trip between the engine and the DUT (D146).
    CHECK(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2")->wire_rtt == core::nanos{0});
    CHECK(dut::parse_agent_options("pcap", "dut=10.0.0.1,local=10.0.0.2,iface=v0,wire_rtt=400us")->wire_rtt == 400us);
    for (const char* bad : {"wire_rtt=2s", "wire_rtt=soon", "wire_rtt="})
        CHECK_THAT(dut::parse_agent_options("udp", std::string("dut=10.0.0.1,local=10.0.0.2,") + bad).err().message,
                   Catch::Contains("a duration from 0 to 1s"));
    // fabric=: whether frames of different source ports keep their order on the way (D158).
    CHECK_FALSE(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2")->in_order);
    CHECK(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,fabric=none")->in_order);
    CHECK_FALSE(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,fabric=unknown")->in_order);
    CHECK_THAT(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2,fabric=cable").err().message,
               Catch::Contains("fabric=cable: none"));
    // The run's quickest answer: shared by every DUT the run makes from one
    // parse (one per case), the least sample kept, none (0) ignored.
    auto shared = dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2");
    REQUIRE(shared.ok());
    const dut::agent_options case2 = *shared;  // the factory copies its options for each case
    CHECK(dut::note_quickest(*shared->quickest_answer, core::nanos{0}) == core::nanos{0});
    CHECK(dut::note_quickest(*shared->quickest_answer, 700us) == 700us);
    CHECK(dut::note_quickest(*case2.quickest_answer, 0us) == 700us);
    CHECK(dut::note_quickest(*case2.quickest_answer, 450us) == 450us);
    CHECK(dut::note_quickest(*shared->quickest_answer, 900us) == 450us);
    CHECK(dut::parse_agent_options("udp", "dut=10.0.0.1,local=10.0.0.2")->quickest_answer->load() == 0);  // another run
}

namespace {

// The reference DUT behind a wrapper that forwards everything; subclasses
// change one behaviour.
class forwarding_dut : public dut::dut {
public:
    mrct::dut::info hello() const override { return in_->hello(); }
    core::status configure(const std::map<std::string, std::string>& p) override { return in_->configure(p); }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        return in_->start(s, self, seed, tx);
    }
    void receive(core::bytes_view f) override { in_->receive(f); }
    void listen() override { in_->listen(); }
    std::uint32_t connect(endpoint::address p) override { return in_->connect(p); }
    bool established(std::uint32_t c) const override { return in_->established(c); }
    std::vector<std::uint32_t> accepted() const override { return in_->accepted(); }
    bool in_error(std::uint32_t c) const override { return in_->in_error(c); }
    core::status close(std::uint32_t c) override { return in_->close(c); }
    std::uint32_t register_mr(std::size_t n) override { return in_->register_mr(n); }
    std::uint64_t mr_va(std::uint32_t k) const override { return in_->mr_va(k); }
    core::status post_recv(std::uint32_t c, std::uint16_t t, std::uint32_t k, std::uint64_t o, std::uint32_t n,
                           std::uint64_t w) override {
        return in_->post_recv(c, t, k, o, n, w);
    }
    core::status post_write(std::uint32_t c, std::uint16_t st, core::bytes_view d, std::uint64_t va, std::uint32_t k,
                            std::uint64_t w, std::optional<std::uint32_t> imm) override {
        return in_->post_write(c, st, d, va, k, w, imm);
    }
    core::status post_send(std::uint32_t c, std::uint16_t st, std::uint16_t t, core::bytes_view d, std::uint64_t w,
                           std::optional<std::uint32_t> imm) override {
        return in_->post_send(c, st, t, d, w, imm);
    }
    std::vector<endpoint::completion> poll() override { return in_->poll(); }
    core::result<core::byte_buffer> read_mem(std::uint32_t k, std::uint64_t o, std::size_t n) override {
        return in_->read_mem(k, o, n);
    }
    std::map<std::string, std::uint64_t> counters() const override { return in_->counters(); }

protected:
    std::unique_ptr<mrct::dut::dut> in_ = mrct::dut::make_sim();
};

// Once it has sent its first frame, sends a copy of it every 100 ns forever:
// a DUT flooding the wire. Or (deaf) one that never hears the wire.
class flood_dut final : public forwarding_dut {
public:
    explicit flood_dut(bool deaf = false) : deaf_(deaf) {}
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        s_ = &s;
        tx_ = tx;
        return in_->start(s, self, seed, [this](core::bytes_view fr, core::nanos age) {
            if (first_.empty() && !deaf_) {
                first_.assign(fr.begin(), fr.end());
                flood();
            }
            tx_(fr, age);
        });
    }
    void receive(core::bytes_view f) override {
        if (!deaf_) in_->receive(f);
    }

private:
    void flood() {
        s_->after(std::chrono::nanoseconds(100), [this] {
            tx_(first_, core::nanos{0});
            flood();
        });
    }
    sim::scheduler* s_ = nullptr;
    frame_tx tx_;
    core::byte_buffer first_;
    bool deaf_ = false;
};

}  // namespace

TEST_CASE("a DUT flooding the wire ends its case as error; the next case runs") {
    auto s = load("flood.yaml", R"(suite: {name: T}
cases:
  - id: F-1
    title: flooded
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - post_write: {size: 65536}
    expect:
      - all_complete: {}
    limits: {max_frames: 5000}
)");
    REQUIRE(run::validate(s).ok());
    run::dut_factory make = []() -> core::result<std::unique_ptr<dut::dut>> { return std::unique_ptr<dut::dut>(new flood_dut); };
    run::run_options o;
    o.repeat = 2;  // the second run starts after the first was flooded
    o.keep_traces = true;
    auto r = run::run_suite(s, make, o);
    REQUIRE(r.size() == 2);
    for (const auto& c : r) {
        CHECK(c.v == run::verdict::error);
        CHECK_THAT(c.reason, Catch::Contains("the DUT flooded the wire (more than 5000 frames recorded)"));
        // The error keeps what the case saw, for the pcap and the timeline.
        REQUIRE(c.tr);
        CHECK(c.frames == 5000);
        CHECK(c.tr->frames.size() == 5000);
        CHECK(c.sim_time > core::nanos{0});
    }
    // And a bad limit is a plan error.
    auto bad = load("flood_bad.yaml", R"(suite: {name: T}
cases:
  - id: F-3
    title: bad
    clauses: [MR-OOO-1]
    expect:
      - all_complete: {}
    limits: {max_frames: lots}
)");
    CHECK_THAT(run::validate(bad).err().message, Catch::Contains("limits.max_frames must be 1..999999999999, got 'lots'"));
    auto late = load("late_bad.yaml", R"(suite: {name: T}
cases:
  - id: F-4
    title: bad
    clauses: [MR-OOO-1]
    expect:
      - all_complete: {}
    limits: {step_late: soon, settle: later, deadline: 1ms}
)");
    const auto msg = run::validate(late).err().message;
    CHECK_THAT(msg, Catch::Contains("limits.step_late expects a duration"));
    CHECK_THAT(msg, Catch::Contains("limits.settle expects a duration"));
    CHECK_THAT(msg, Catch::Contains("unknown limit 'deadline' (expected duration, settle, max_frames, step_late)"));
}

namespace {

// The reference DUT, setting `cut` (a run stopped a second time) at its
// `at`-th poll: once the case's steps are running (execute polls it each slice).
class cutting_dut final : public forwarding_dut {
public:
    cutting_dut(std::atomic<bool>& cut, unsigned at) : cut_(cut), at_(at) {}
    std::vector<endpoint::completion> poll() override {
        if (++polls_ == at_) cut_.store(true);
        return in_->poll();
    }

private:
    std::atomic<bool>& cut_;
    unsigned at_;
    unsigned polls_ = 0;
};

}  // namespace

TEST_CASE("a run stopped a second time cuts the running case short: skipped, marked interrupted, its frames kept (D143)") {
    auto s = load("cut.yaml", R"(suite: {name: T}
cases:
  - id: C-1
    title: cut
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - memory: {size: 8388608}
      - post_write: {size: 8388608}
    expect:
      - all_complete: {}
)");
    REQUIRE(run::validate(s).ok());
    const auto& c = s.cases.at(0);
    std::atomic<bool> stop{false}, cut{false};
    // Not stopped: the case passes (the control).
    auto whole = run::run_case(c, *run::parse_dut("sim"), 7, 0, 0, {&stop, &cut});
    CHECK(whole.v == run::verdict::pass);
    CHECK_FALSE(whole.interrupted);
    // Cut while its steps ran (the 3rd slice of 50 us): not judged.
    run::dut_factory at3 = [&]() -> core::result<std::unique_ptr<dut::dut>> {
        return std::unique_ptr<dut::dut>(new cutting_dut(cut, 3));
    };
    stop = true;
    auto r = run::run_case(c, at3, 7, 0, 0, {&stop, &cut});
    CHECK(r.v == run::verdict::skipped);
    CHECK(r.interrupted);
    CHECK_THAT(r.reason, Catch::StartsWith("interrupted: the run was stopped a second time while the case ran, "));
    CHECK_THAT(r.reason, Catch::Contains("not judged"));
    REQUIRE(r.tr);
    CHECK(r.frames > 0);  // the evidence of what the DUT did so far
    CHECK(r.frames < whole.frames);
    CHECK(r.asserts.empty());
    // Already set when the case begins: it ends in its set-up.
    cut = true;
    auto early = run::run_case(c, *run::parse_dut("sim"), 7, 0, 0, {&stop, &cut});
    CHECK(early.v == run::verdict::skipped);
    CHECK(early.interrupted);
    CHECK_THAT(early.reason, Catch::Contains("stopped a second time in its set-up"));
    // The reports carry the mark: results.json's entry and JUnit's properties.
    const auto entry = reports::case_json(r, 0);
    CHECK(entry["interrupted"] == true);
    CHECK(entry["verdict"] == "skipped");
    CHECK_FALSE(reports::case_json(whole, 0).contains("interrupted"));
    const auto x = reports::junit(reports::results(s, {"sim", {}, 7, "", true}, {entry}, 1));
    CHECK_THAT(x, Catch::Contains("<property name=\"interrupted\" value=\"true\"/>"));
    CHECK_THAT(x, Catch::Contains("<skipped message=\"skipped: interrupted: the run was stopped a second time"));
}

TEST_CASE("a case whose setup fails keeps the frames it saw (the connection attempts)") {
    auto s = load("deaf.yaml", R"(suite: {name: T}
cases:
  - id: D-1
    title: deaf
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - post_write: {size: 4096}
    expect:
      - all_complete: {}
)");
    REQUIRE(run::validate(s).ok());
    run::dut_factory make = []() -> core::result<std::unique_ptr<dut::dut>> {
        return std::unique_ptr<dut::dut>(new flood_dut(/*deaf=*/true));
    };
    run::run_options o;
    o.keep_traces = true;
    auto r = run::run_suite(s, make, o);
    REQUIRE(r.size() == 1);
    CHECK(r[0].v == run::verdict::error);
    CHECK_THAT(r[0].reason, Catch::Contains("connected to the DUT within 20 ms"));
    REQUIRE(r[0].tr);
    REQUIRE(r[0].frames >= 2);  // the peer's CONNECT and its retries, unanswered
    for (const auto& f : r[0].tr->frames) CHECK(f.d == trace::dir::to_dut);
}

// CONN-032 on a real wire (issue 19): §4 lets an unanswered CLOSE be repeated
// max(initial RTO, largest RTO) after the first, up to rto_max. A case that
// stopped watching `settle` after the transfer ended before a slow DUT's
// repeat and failed it. Here the DUT's initial RTO (40 ms) is far beyond the
// settle (1 ms): the case must watch until the repeat comes and is answered.
TEST_CASE("a case goes on while the DUT's unanswered CTRL request may still be repeated") {
    auto s = load("ctrl_watch.yaml", R"(suite: {name: T}
cases:
  - id: CLOSE-1
    title: a lost CLOSE, repeated by a slow timer
    clauses: [MR-CONN-3]
    dut: {rto_initial: 40ms, rto_max: 100ms}
    limits: {duration: 500ms, settle: 1ms}
    setup:
      - post_write: {side: dut, stream: 0, size: 8192, count: 1}
      - drop: {dir: from_dut, match: {ctrl: CLOSE}, count: 1}
    steps:
      - {at: 5us, do: [close: {side: dut}]}
    expect:
      - ctrl_repeat: {}
      - frame_count: {match: {ctrl: CLOSE}, at_least: 2, at_most: 2}
      - frame_count: {dir: to_dut, match: {ctrl: CLOSE_ACK}, at_least: 1}
)");
    REQUIRE(run::validate(s).ok());
    auto r = run::run_suite(s, *run::parse_dut("sim"), {});
    REQUIRE(r.size() == 1);
    CHECK(r[0].v == verdict::pass);
    CHECK(r[0].sim_time > std::chrono::milliseconds(40));  // it waited for the repeat
    CHECK(r[0].sim_time < std::chrono::milliseconds(60));  // and stopped once it was answered
}

namespace {

// The reference DUT as a real-time stack looks to the runner: no
// `fine_timing`. `refuse_timers`: it takes no timer settings (configure fails
// on ack_delay), as an agent for a fixed-function NIC might.
class coarse_dut final : public forwarding_dut {
public:
    using params = std::map<std::string, std::string>;
    // `seen`: where configure's parameters go (it outlives the DUT, which the
    // runner destroys at the end of the case).
    explicit coarse_dut(bool refuse_timers = false, std::shared_ptr<params> seen = std::make_shared<params>())
        : seen_(std::move(seen)), refuse_(refuse_timers) {}
    mrct::dut::info hello() const override {
        auto i = in_->hello();
        std::erase(i.capabilities, std::string("fine_timing"));
        return i;
    }
    core::status configure(const std::map<std::string, std::string>& p) override {
        *seen_ = p;
        if (refuse_ && p.count("ack_delay")) return core::error{"parameter 'ack_delay': not supported"};
        return in_->configure(p);
    }

private:
    std::shared_ptr<params> seen_;
    bool refuse_ = false;
};

// A fine_timing case: the DUT's SEND meets no receive until `post_at`; the
// peer's RNRs carry TimerCode `code`.
std::string fine_plan(const std::string& code = "10", const std::string& post_at = "500us",
                      const std::string& limits = "") {
    return R"(suite: {name: T}
cases:
  - id: FINE-1
    title: an RNR pause, resumed within 10 % + 50 us
    clauses: [MR-RNR-4]
    requires: [fine_timing]
    peer: {rnr_timer_code: )" + code + R"(}
    setup:
      - post_send: {side: dut, stream: 1, tag: 2, size: 8192}
    steps:
      - {at: )" + post_at + R"(, do: [post_recv: {side: peer, tag: 2, size: 8192}]}
    expect:
      - rnr_resume: {}
      - all_complete: {}
)" + limits;
}

}  // namespace

TEST_CASE("coarse time: a fine_timing case runs 64 times slower on a DUT without the capability") {
    auto s = load("fine.yaml", fine_plan());
    const auto& c = s.cases.at(0);
    auto seen = std::make_shared<coarse_dut::params>();
    auto coarse = [&]() -> core::result<std::unique_ptr<dut::dut>> {
        return std::unique_ptr<dut::dut>(std::make_unique<coarse_dut>(false, seen));
    };
    auto r = run::run_case(c, coarse, 7);
    CHECK(r.v == verdict::pass);
    CHECK(r.time_scale == 64);
    // The DUT was given every timer, scaled, the defaults included.
    CHECK(seen->at("ack_delay") == "1280000ns");
    CHECK(seen->at("rto_min") == "6400000ns");
    CHECK(seen->at("rnr_timer_code") == "26");
    // The pause was the peer's TimerCode 10 + 12 (20.48 ms): the run lasted that long.
    CHECK(r.sim_time > std::chrono::milliseconds(20));

    SECTION("as written on the simulated DUT, which has the capability") {
        auto w = run::run_case(c, *run::parse_dut("sim"), 7);
        CHECK(w.v == verdict::pass);
        CHECK(w.time_scale == 1);
        CHECK(w.sim_time < std::chrono::milliseconds(2));
    }
    SECTION("time scale 1: skipped for the missing capability") {
        auto k = run::run_case(c, coarse, 7, 1);
        CHECK(k.v == verdict::skipped);
        CHECK_THAT(k.reason, Catch::Contains("lacks capability 'fine_timing'"));
    }
    SECTION("an explicit scale runs on any DUT, and a broken DUT still fails") {
        auto k = run::run_case(c, *run::parse_dut("sim"), 7, 8);
        CHECK(k.v == verdict::pass);
        CHECK(k.time_scale == 8);
        auto frozen = run::run_case(c, *run::parse_dut("sim:bug=frozen-rnr"), 7, 8);
        CHECK(frozen.v == verdict::fail);
        CHECK(frozen.time_scale == 8);
    }
    SECTION("a case that is not fine_timing runs as written") {
        auto plain = load("plain.yaml", k_plan);
        auto p = run::run_case(plain.cases.at(1), coarse, 7);
        CHECK(p.time_scale == 1);
        CHECK(seen->count("ack_delay") == 0);
    }
}

TEST_CASE("coarse time: a DUT that refuses the scaled timers skips the case, saying why") {
    auto s = load("fine2.yaml", fine_plan());
    auto refusing = []() -> core::result<std::unique_ptr<dut::dut>> { return std::unique_ptr<dut::dut>(new coarse_dut(true)); };
    auto r = run::run_case(s.cases.at(0), refusing, 7);
    CHECK(r.v == verdict::skipped);
    CHECK_THAT(r.reason, Catch::Contains("64 times slower") && Catch::Contains("ack_delay") && Catch::Contains("not supported"));
}

TEST_CASE("coarse time: a case that cannot be scaled is skipped with the plan position; auto takes a smaller scale") {
    // TimerCode 23 (30.72 ms): no code is 64 times longer; 16 times is code 31.
    auto s = load("fine3.yaml", fine_plan("23", "40ms", "    limits: {duration: 100ms}\n"));
    auto coarse = []() -> core::result<std::unique_ptr<dut::dut>> { return std::unique_ptr<dut::dut>(new coarse_dut()); };
    auto k64 = run::run_case(s.cases.at(0), coarse, 7, 64);
    CHECK(k64.v == verdict::skipped);
    CHECK_THAT(k64.reason, Catch::Contains("fine3.yaml:7:28") && Catch::Contains("no TimerCode is 64 times code 23"));
    auto a = run::run_case(s.cases.at(0), coarse, 7);  // auto: 16 maps code 23 to 31
    CHECK(a.time_scale == 16);
    CHECK(a.v == verdict::pass);
    CHECK(run::run_case(s.cases.at(0), *run::parse_dut("sim"), 7).v == verdict::pass);
}

namespace {

// The reference DUT as a real-time DUT whose engine-side receive path lost
// frames in the first `lossy` attempts (a shared counter: the runner makes a
// fresh DUT per attempt). No verdict on an incomplete trace stands: each
// such attempt ends inconclusive on timing alone, deterministically.
class lossy_dut final : public forwarding_dut {
public:
    lossy_dut(std::shared_ptr<int> made, int lossy) : lost_(++*made <= lossy ? 3 : 0) {}
    bool realtime() const override { return true; }
    std::uint64_t frames_lost() const override { return lost_; }

private:
    std::uint64_t lost_;
};

// The result of case `id` in a run's results (a test failure if none).
const run::case_result& find(const std::vector<run::case_result>& rs, const std::string& id) {
    for (const auto& r : rs)
        if (r.id == id) return r;
    FAIL("no result " << id);
    return rs.front();
}

const char* k_one_write = R"(suite: {name: T}
cases:
  - id: W-1
    title: one write
    clauses: [MR-SACK-3]
    setup:
      - post_write: {side: dut, size: 65536}
    expect:
      - all_complete: {}
      - data_integrity: {}
)";

}  // namespace

TEST_CASE("timing retries: a real-time case inconclusive on timing alone runs again, its earlier attempts kept") {
    auto s = load("retry.yaml", k_one_write);
    const auto& c = s.cases.at(0);
    auto made = std::make_shared<int>(0);
    auto lossy_first = [&](int lossy) {
        *made = 0;
        return [&made, lossy]() -> core::result<std::unique_ptr<dut::dut>> {
            return std::unique_ptr<dut::dut>(std::make_unique<lossy_dut>(made, lossy));
        };
    };
    SECTION("the second attempt judges") {
        auto r = run::run_case(c, lossy_first(1), 3, 0, 2);
        CHECK(*made == 2);
        CHECK(r.v == verdict::pass);
        CHECK(r.attempts == 2);
        REQUIRE(r.doubted_before.size() == 1);
        CHECK_THAT(r.doubted_before[0], Catch::Contains("dropped 3 of the DUT's frames unread"));
    }
    SECTION("no retries: the first attempt's inconclusive stands") {
        auto r = run::run_case(c, lossy_first(1), 3, 0, 0);
        CHECK(*made == 1);
        CHECK(r.v == verdict::inconclusive);
        CHECK(run::timing_doubted(r));
        CHECK(r.attempts == 1);
        CHECK(r.doubted_before.empty());
    }
    SECTION("at most 1 + retries attempts") {
        auto r = run::run_case(c, lossy_first(10), 3, 0, 2);
        CHECK(*made == 3);
        CHECK(r.v == verdict::inconclusive);
        CHECK(r.attempts == 3);
        CHECK(r.doubted_before.size() == 2);
    }
}

TEST_CASE("timing retries: a run being stopped makes no further attempt; the doubted verdict stands (D143)") {
    auto s = load("retry-stopped.yaml", k_one_write);
    auto made = std::make_shared<int>(0);
    run::dut_factory make = [&made]() -> core::result<std::unique_ptr<dut::dut>> {
        return std::unique_ptr<dut::dut>(std::make_unique<lossy_dut>(made, 1));
    };
    std::atomic<bool> stop{true}, cut{false};
    auto r = run::run_case(s.cases.at(0), make, 3, 0, 2, {&stop, &cut});
    CHECK(*made == 1);
    CHECK(r.v == verdict::inconclusive);
    CHECK(r.attempts == 1);
    CHECK_FALSE(r.interrupted);
}

namespace {
// A real-time DUT whose engine-side interface dropped frames below the
// sockets during the first `lossy` attempts (interface_drops, D144).
class if_dropping_dut final : public forwarding_dut {
public:
    if_dropping_dut(std::shared_ptr<int> made, int lossy, std::uint64_t rx, std::uint64_t tx)
        : drops_{++*made <= lossy ? rx : 0, *made <= lossy ? tx : 0, "veth-e"} {}
    bool realtime() const override { return true; }
    netio::if_drops interface_drops() const override { return drops_; }

private:
    netio::if_drops drops_;
};
}  // namespace

TEST_CASE("an interface's own drops during a real-time case void its verdicts, as a socket's do (D144)") {
    auto s = load("if-drops.yaml", k_one_write);
    const auto& c = s.cases.at(0);
    auto made = std::make_shared<int>(0);
    auto dropping = [&](int lossy, std::uint64_t rx, std::uint64_t tx) {
        *made = 0;
        return run::dut_factory([&made, lossy, rx, tx]() -> core::result<std::unique_ptr<dut::dut>> {
            return std::unique_ptr<dut::dut>(std::make_unique<if_dropping_dut>(made, lossy, rx, tx));
        });
    };
    auto rx = run::run_case(c, dropping(1, 2, 0), 3, 0, 0);
    CHECK(rx.v == verdict::inconclusive);
    CHECK(run::timing_doubted(rx));
    CHECK_THAT(rx.reason, Catch::Contains("the engine's interface veth-e dropped 2 received frames during the case"));
    REQUIRE(rx.tr);
    CHECK(rx.tr->timing.if_rx_dropped == 2);
    const auto entry = reports::case_json(rx, 0);
    CHECK(entry["timing"]["if_rx_dropped"] == 2);
    CHECK(entry["timing"]["ifaces"] == "veth-e");
    auto tx = run::run_case(c, dropping(1, 0, 5), 3, 0, 0);
    CHECK(tx.v == verdict::inconclusive);
    CHECK_THAT(tx.reason, Catch::Contains("dropped 5 outgoing frames") && Catch::Contains("never have reached it"));
    // A timing retry on a fresh DUT whose interfaces dropped nothing judges.
    auto again = run::run_case(c, dropping(1, 1, 1), 3, 0, 2);
    CHECK(again.v == verdict::pass);
    CHECK(again.attempts == 2);
    REQUIRE(again.doubted_before.size() == 1);
    CHECK_THAT(again.doubted_before[0], Catch::Contains("dropped 1 received and 1 outgoing frames"));
    // None dropped: the verdict stands.
    CHECK(run::run_case(c, dropping(0, 9, 9), 3, 0, 0).v == verdict::pass);
    CHECK(run::detail::interface_loss(trace::timing_figures{}).empty());
}

namespace {
// A real-time DUT whose frame counters say the lab lost frames (D148): it
// reports `in_less` fewer frames received and `out_more` more sent than it
// did; `drop_counts` leaves both out, as an agent that has none does.
class miscounting_dut final : public forwarding_dut {
public:
    miscounting_dut(std::int64_t in_less, std::uint64_t out_more, bool drop_counts)
        : in_less_(in_less), out_more_(out_more), drop_(drop_counts) {}
    bool realtime() const override { return true; }
    std::map<std::string, std::uint64_t> counters() const override {
        auto c = forwarding_dut::counters();
        if (drop_) {
            c.erase("frames_in");
            c.erase("frames_out");
            return c;
        }
        auto& in = c["frames_in"];
        in = in_less_ < 0 ? 0 : in - std::min<std::uint64_t>(in, static_cast<std::uint64_t>(in_less_));
        c["frames_out"] += out_more_;
        return c;
    }

private:
    std::int64_t in_less_;  // < 0: reports 0 frames received
    std::uint64_t out_more_;
    bool drop_;
};
}  // namespace

TEST_CASE("frames a lab lost where no interface of the engine's counts them void a real-time case's verdicts (D148)") {
    auto s = load("lab-loss.yaml", k_one_write);
    const auto& c = s.cases.at(0);
    auto counting = [](std::int64_t in_less, std::uint64_t out_more, bool drop = false) {
        return run::dut_factory([=]() -> core::result<std::unique_ptr<dut::dut>> {
            return std::unique_ptr<dut::dut>(std::make_unique<miscounting_dut>(in_less, out_more, drop));
        });
    };
    SECTION("counts that agree: the verdict stands, the figures are kept") {
        auto r = run::run_case(c, counting(0, 0), 3, 0, 0);
        CHECK(r.v == verdict::pass);
        REQUIRE(r.tr);
        const auto& tm = r.tr->timing;
        REQUIRE(tm.dut_frames_in);
        REQUIRE(tm.dut_frames_out);
        CHECK(tm.sent_before_read > 0);
        CHECK(*tm.dut_frames_in >= tm.sent_before_read);
        CHECK(*tm.dut_frames_out == tm.recorded_from_dut);
        CHECK(tm.received_for_sure > 0);
        CHECK(tm.lab_lost_to_dut == 0);
        CHECK(tm.lab_lost_from_dut == 0);
        CHECK(tm.counters_read_from > core::nanos{0});
        CHECK(tm.counters_read_to >= tm.counters_read_from);
        const auto entry = reports::case_json(r, 0);
        CHECK(entry["timing"]["lab_frames"]["lost_to_dut"] == 0);
        CHECK(entry["timing"]["lab_frames"]["sent_before_read"] == tm.sent_before_read);
    }
    SECTION("frames sent to the DUT it never counted") {
        auto r = run::run_case(c, counting(3, 0), 3, 0, 0);
        CHECK(r.v == verdict::inconclusive);
        CHECK(run::timing_doubted(r));
        REQUIRE(r.tr);
        CHECK(r.tr->timing.lab_lost_to_dut == 3);
        CHECK_THAT(r.reason, Catch::Contains("the lab lost frames between the engine and the DUT where no interface of the "
                                             "engine's counts them: the DUT counted ") &&
                                 Catch::Contains("frames received (frames_in) of the") &&
                                 Catch::Contains("it would have said pass"));
        CHECK(reports::case_json(r, 0)["timing"]["lab_frames"]["lost_to_dut"] == 3);
    }
    SECTION("frames the DUT counted sending that never reached the engine") {
        auto r = run::run_case(c, counting(0, 2), 3, 0, 0);
        CHECK(r.v == verdict::inconclusive);
        REQUIRE(r.tr);
        CHECK(r.tr->timing.lab_lost_from_dut == 2);
        CHECK_THAT(r.reason, Catch::Contains("frames sent (frames_out) where the engine received"));
    }
    SECTION("a frames_in below what the DUT's own ACKs name is contradicted, not used") {
        auto r = run::run_case(c, counting(-1, 0), 3, 0, 0);
        CHECK(r.v == verdict::pass);
        REQUIRE(r.tr);
        CHECK(r.tr->timing.dut_frames_in_contradicted);
        CHECK(r.tr->timing.lab_lost_to_dut == 0);
        CHECK(reports::case_json(r, 0)["timing"]["lab_frames"]["frames_in_contradicted"] == true);
    }
    SECTION("an agent without the counters: nothing compared") {
        auto r = run::run_case(c, counting(3, 2, true), 3, 0, 0);
        CHECK(r.v == verdict::pass);
        REQUIRE(r.tr);
        CHECK_FALSE(r.tr->timing.dut_frames_in);
        CHECK_FALSE(reports::case_json(r, 0)["timing"].contains("lab_frames"));
    }
    SECTION("frames the engine's receive path dropped, which say so themselves, are not counted twice") {
        auto r = run::run_case(c, counting(0, 2), 3, 0, 0);
        REQUIRE(r.tr);
        auto tr = *r.tr;
        tr.timing.frames_lost = 2;
        run::detail::count_lab_loss(tr, tr.timing.counters_read_from - tr.crossing);
        CHECK(tr.timing.lab_lost_from_dut == 0);
        CHECK(run::detail::lab_loss(tr.timing).empty());
    }
    CHECK(run::detail::lab_loss(trace::timing_figures{}).empty());
}

namespace {
// A real-time DUT behind a lab that copies frames (D149): its 5th frame
// reaches the engine twice (`copy_out`), or it counts `in_more` frames
// received beyond those the engine sent.
class copied_dut final : public forwarding_dut {
public:
    copied_dut(bool copy_out, std::uint64_t in_more) : copy_out_(copy_out), in_more_(in_more) {}
    bool realtime() const override { return true; }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        return forwarding_dut::start(s, self, seed, [this, tx](core::bytes_view f, core::nanos age) {
            tx(f, age);
            if (copy_out_ && ++sent_ == 5) tx(f, age);
        });
    }
    std::map<std::string, std::uint64_t> counters() const override {
        auto c = forwarding_dut::counters();
        c["frames_in"] += in_more_;
        return c;
    }

private:
    bool copy_out_;
    std::uint64_t in_more_;
    unsigned sent_ = 0;
};
}  // namespace

TEST_CASE("frames a lab copied void a real-time case's verdicts; the DUT's own repeats do not (D149)") {
    auto s = load("lab-copies.yaml", k_one_write);
    const auto& c = s.cases.at(0);
    auto copied = [](bool copy_out, std::uint64_t in_more) {
        return run::dut_factory([=]() -> core::result<std::unique_ptr<dut::dut>> {
            return std::unique_ptr<dut::dut>(std::make_unique<copied_dut>(copy_out, in_more));
        });
    };
    SECTION("a frame of the DUT's recorded twice, counted sent once") {
        auto r = run::run_case(c, copied(true, 0), 3, 0, 0);
        CHECK(r.v == verdict::inconclusive);
        CHECK(run::timing_doubted(r));
        REQUIRE(r.tr);
        const auto& tm = r.tr->timing;
        // The lab's copy, and any repeat of the DUT's own on a slow host (a
        // CTRL or a resend sent again, byte for byte, counted sent: seen under
        // ASan): the surplus is the lab's one.
        CHECK(tm.copies_from_dut >= 1);
        CHECK(tm.lab_dup_from_dut == 1);
        REQUIRE(tm.dut_frames_out_end);
        CHECK(tm.recorded_from_dut == *tm.dut_frames_out_end + 1);
        CHECK_THAT(r.reason, Catch::Contains("the lab duplicated frames between the engine and the DUT: the engine received") &&
                                 Catch::Contains(std::to_string(tm.copies_from_dut) + " of them the same bytes as another (D149)") &&
                                 Catch::Contains("it would have said pass"));
        const auto entry = reports::case_json(r, 0);
        CHECK(entry["timing"]["lab_frames"]["dup_from_dut"] == 1);
        CHECK(entry["timing"]["lab_frames"]["copies_from_dut"] == tm.copies_from_dut);
    }
    SECTION("more frames counted received than the engine sent") {
        auto r = run::run_case(c, copied(false, 2), 3, 0, 0);
        CHECK(r.v == verdict::inconclusive);
        REQUIRE(r.tr);
        CHECK(r.tr->timing.lab_dup_to_dut == 2);
        CHECK_THAT(r.reason, Catch::Contains("frames received (frames_in), 2 more than the engine sent it"));
    }
    SECTION("copies in the trace the DUT counted sending are its own: no surplus, the verdict stands") {
        auto r = run::run_case(c, copied(false, 0), 3, 0, 0);
        REQUIRE(r.tr);
        auto tr = *r.tr;
        CHECK(r.v == verdict::pass);
        // Without the DUT's own repeats, if a slow host made any (a CTRL or a
        // resend sent again byte for byte, counted sent): none but the test's below.
        {
            std::set<std::string> seen_bytes;
            std::erase_if(tr.frames, [&](const trace::record& f) {
                if (f.d != trace::dir::from_dut ||
                    seen_bytes.insert(std::string(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size())).second)
                    return false;
                tr.timing.dut_frames_out = *tr.timing.dut_frames_out - 1;
                tr.timing.dut_frames_out_end = *tr.timing.dut_frames_out_end - 1;
                return true;
            });
        }
        // The same trace with the DUT's 5th frame recorded twice and counted twice.
        std::size_t fifth = 0, seen = 0;
        for (std::size_t i = 0; i < tr.frames.size(); ++i)
            if (tr.frames[i].d == trace::dir::from_dut && ++seen == 5) fifth = i;
        REQUIRE(seen >= 5);
        auto copy = tr.frames[fifth];
        tr.frames.insert(tr.frames.begin() + static_cast<std::ptrdiff_t>(fifth) + 1, copy);
        tr.timing.dut_frames_out_end = *tr.timing.dut_frames_out_end + 1;
        tr.timing.dut_frames_out = *tr.timing.dut_frames_out + 1;
        run::detail::count_lab_loss(tr, tr.timing.counters_read_from - tr.crossing);
        CHECK(tr.timing.copies_from_dut == 1);
        CHECK(tr.timing.lab_dup_from_dut == 0);
        CHECK(run::detail::lab_loss(tr.timing).empty());
        // Counted once: the lab's copy.
        tr.timing.dut_frames_out_end = *tr.timing.dut_frames_out_end - 1;
        run::detail::count_lab_loss(tr, tr.timing.counters_read_from - tr.crossing);
        CHECK(tr.timing.lab_dup_from_dut == 1);
        // Unless it was recorded after the second read was asked for: the DUT
        // may have sent it after it counted (sync-only's SYNCs on the wire).
        REQUIRE(tr.timing.frames_in_read_at > core::nanos{0});
        const auto stamped = tr.frames[fifth + 1].t;
        tr.frames[fifth + 1].t = tr.timing.frames_in_read_at + std::chrono::microseconds(1);
        run::detail::count_lab_loss(tr, tr.timing.counters_read_from - tr.crossing);
        CHECK(tr.timing.lab_dup_from_dut == 0);
        tr.frames[fifth + 1].t = stamped;
        // A surplus with no copy in the trace (a frame of an earlier case) is not the lab's copy.
        tr.frames.erase(tr.frames.begin() + static_cast<std::ptrdiff_t>(fifth) + 1);
        tr.timing.dut_frames_out_end = *tr.timing.dut_frames_out_end - 1;
        run::detail::count_lab_loss(tr, tr.timing.counters_read_from - tr.crossing);
        CHECK(tr.timing.copies_from_dut == 0);
        CHECK(tr.timing.lab_dup_from_dut == 0);
    }
}

namespace {
// A real-time DUT behind a lab that loses its `lose`th data packet and sends
// its `copy`th twice (D151), counting each frame it sent once; or, with
// `own_repeat`, a DUT that sends its `copy`th data packet twice itself
// (counted twice: no RETX on the repeat, the bug resend_identity catches).
class netting_dut final : public forwarding_dut {
public:
    netting_dut(unsigned lose, unsigned copy, bool own_repeat) : lose_(lose), copy_(copy), own_repeat_(own_repeat) {}
    bool realtime() const override { return true; }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        return forwarding_dut::start(s, self, seed, [this, tx](core::bytes_view f, core::nanos age) {
            const auto d = wire::decode_ethernet(f, {.verify_icrc = false});
            const bool data = d.ok() && wire::is_data_opcode(d.f.bth.opcode) && !(d.f.mrh.flags & wire::k_flag_retx);
            const unsigned n = data ? ++data_ : 0;
            if (n && n == lose_) return;
            tx(f, age);
            if (n && n == copy_) tx(f, age);
        });
    }
    std::map<std::string, std::uint64_t> counters() const override {
        auto c = forwarding_dut::counters();
        if (own_repeat_ && data_ >= copy_) c["frames_out"] += 1;
        return c;
    }

private:
    unsigned lose_, copy_;
    bool own_repeat_;
    unsigned data_ = 0;
};
}  // namespace

TEST_CASE("a loss and a copy of the DUT's frames that net out in frames_out void a real-time case's verdicts (D151)") {
    // k_one_write, resend_identity first: it judges the DUT's resends (MR-SACK-3).
    std::string plan = k_one_write;
    const std::string expect = "    expect:\n";
    plan.insert(plan.find(expect) + expect.size(), "      - resend_identity: {}\n");
    auto s = load("lab-nets.yaml", plan.c_str());
    const auto& c = s.cases.at(0);
    auto make = [](unsigned lose, unsigned copy, bool own) {
        return run::dut_factory([=]() -> core::result<std::unique_ptr<dut::dut>> {
            return std::unique_ptr<dut::dut>(std::make_unique<netting_dut>(lose, copy, own));
        });
    };
    SECTION("the lab lost the 3rd data packet and copied the 6th: counts balance, the DUT's data shows both") {
        auto r = run::run_case(c, make(3, 6, false), 3, 0, 0);
        CHECK(r.v == verdict::inconclusive);
        REQUIRE(r.tr);
        const auto& tm = r.tr->timing;
        REQUIRE(tm.dut_frames_out_end);
        CHECK(tm.recorded_from_dut == *tm.dut_frames_out_end);  // netted out: D149 alone sees nothing
        CHECK(tm.lab_dup_from_dut == 0);
        CHECK(tm.data_copies_from_dut == 1);
        CHECK(tm.resent_unseen_from_dut == 1);
        CHECK(tm.lab_netted_from_dut == 1);
        CHECK_THAT(r.reason, Catch::Contains("the lab duplicated frames and lost others") &&
                                 Catch::Contains("1 of the DUT's first transmissions (RETX clear) reached the engine twice, byte for byte") &&
                                 Catch::Contains("(D151)") && Catch::Contains("it would have said fail"));
        REQUIRE_FALSE(r.asserts.empty());
        CHECK(r.asserts.front().name == "resend_identity");
        CHECK(reports::case_json(r, 0)["timing"]["lab_frames"]["netted_from_dut"] == 1);
    }
    SECTION("a DUT that sends a data packet twice itself, with no loss, still fails resend_identity") {
        auto r = run::run_case(c, make(0, 6, true), 3, 0, 0);
        CHECK(r.v == verdict::fail);
        REQUIRE(r.tr);
        CHECK(r.tr->timing.data_copies_from_dut == 1);
        CHECK(r.tr->timing.resent_unseen_from_dut == 0);
        CHECK(r.tr->timing.lab_netted_from_dut == 0);
        CHECK_THAT(r.reason, Catch::Contains("resend_identity") && Catch::Contains("lacks RETX"));
    }
    SECTION("a loss alone is a resend without its original, and no copy: nothing nets out") {
        auto r = run::run_case(c, make(3, 0, false), 3, 0, 0);
        REQUIRE(r.tr);
        CHECK(r.tr->timing.resent_unseen_from_dut == 1);
        CHECK(r.tr->timing.lab_netted_from_dut == 0);
        CHECK(r.tr->timing.lab_lost_from_dut == 1);  // D148 sees it in the counts
        CHECK(r.v == verdict::inconclusive);
    }
}

TEST_CASE("a run whose lab has shown both a loss and a copy voids failures a copy of the DUT's may explain (D152)") {
    std::string plan = k_one_write;
    const std::string expect = "    expect:\n";
    plan.insert(plan.find(expect) + expect.size(), "      - resend_identity: {}\n");
    auto s = load("lab-nets-run.yaml", plan.c_str());
    // The DUTs the run makes, in order: 'n' behind a lab that lost its 3rd
    // data packet and copied its 6th (D151 shows both), 'l' one that lost
    // the 3rd (D148), 'c' one that copied the 6th, counted once (D149), 'r'
    // a DUT that sends its 6th twice itself, counted twice: to the engine,
    // as a lab's copy netting out a loss of another frame would look.
    auto run = [&](const std::string& kinds, std::vector<std::string>* order = nullptr, std::size_t hold = run::k_netting_hold) {
        auto made = std::make_shared<std::size_t>(0);
        run::dut_factory make = [kinds, made]() -> core::result<std::unique_ptr<dut::dut>> {
            const char k = kinds.at((*made)++);
            return std::unique_ptr<dut::dut>(std::make_unique<netting_dut>(k == 'n' || k == 'l' ? 3 : 0, k == 'l' ? 0 : 6, k == 'r'));
        };
        run::run_options o;
        o.repeat = static_cast<unsigned>(kinds.size());
        o.timing_retries = 0;
        o.seed = 3;
        o.keep_traces = true;
        o.netting_hold = hold;
        if (order) o.progress = [order](const run::case_result& r, std::size_t, std::size_t) { order->push_back(r.id); };
        auto out = run::run_suite(s, make, o);
        CHECK(*made == kinds.size());
        return out;
    };
    SECTION("alone, the DUT's repeat fails resend_identity") {
        run::lab_seen lab;
        auto rs = run("r");
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].v == verdict::fail);
        CHECK_THAT(rs[0].reason, Catch::Contains("lacks RETX"));
        CHECK(run::may_net_out(rs[0]));
        lab.note(rs[0]);
        CHECK_FALSE(lab.both());
    }
    SECTION("after a case whose lab lost and copied frames, the same failure is inconclusive") {
        auto rs = run("nr");
        REQUIRE(rs.size() == 2);
        CHECK(find(rs, "W-1#1").v == verdict::inconclusive);
        CHECK_THAT(find(rs, "W-1#1").reason, Catch::Contains("(D151)"));
        const auto& r = find(rs, "W-1#2");
        CHECK(r.v == verdict::inconclusive);
        // The DUT's own repeat is one copy; a slow host may add the sim's CTRL
        // repeats (identical bytes too), so the count is the trace's.
        REQUIRE(r.tr);
        CHECK(r.tr->timing.copies_from_dut >= 1);
        CHECK_THAT(r.reason, Catch::Contains("resend_identity") &&
                                 Catch::Contains(std::to_string(r.tr->timing.copies_from_dut) + " of the ") &&
                                 Catch::Contains("are the same bytes as an earlier one") &&
                                 Catch::Contains("first shown by W-1#1) and copied them (first shown by W-1#1)") &&
                                 Catch::Contains("(D152)") && Catch::Contains("it would have said fail") &&
                                 Catch::Contains("lacks RETX"));
    }
    SECTION("before it, the failure waits for the run's lab, then is judged and handed on") {
        std::vector<std::string> order;
        auto rs = run("rn", &order);
        REQUIRE(rs.size() == 2);
        CHECK(find(rs, "W-1#1").v == verdict::inconclusive);
        CHECK_THAT(find(rs, "W-1#1").reason, Catch::Contains("first shown by W-1#2") && Catch::Contains("(D152)"));
        CHECK(order == std::vector<std::string>{"W-1#1", "W-1#2"});
    }
    SECTION("a loss in one case and a copy in another show the lab too") {
        auto rs = run("lcr");
        REQUIRE(rs.size() == 3);
        CHECK_THAT(find(rs, "W-1#1").reason, Catch::Contains("(D148)"));
        CHECK_THAT(find(rs, "W-1#2").reason, Catch::Contains("(D149)"));
        CHECK(find(rs, "W-1#3").v == verdict::inconclusive);
        CHECK_THAT(find(rs, "W-1#3").reason, Catch::Contains("lost frames (first shown by W-1#1) and copied them (first shown by W-1#2)"));
    }
    SECTION("a lab that only lost frames: the DUT's repeat stands as its own, handed on when the run ends") {
        std::vector<std::string> order;
        auto rs = run("rl", &order);
        REQUIRE(rs.size() == 2);
        CHECK(find(rs, "W-1#1").v == verdict::fail);
        CHECK_THAT(find(rs, "W-1#1").reason, Catch::Contains("lacks RETX"));
        CHECK(order == std::vector<std::string>{"W-1#2", "W-1#1"});
    }
    SECTION("past netting_hold failures waiting, the oldest is handed on as it stands") {
        std::vector<std::string> order;
        auto rs = run("rrn", &order, 1);
        REQUIRE(rs.size() == 3);
        CHECK(find(rs, "W-1#1").v == verdict::fail);  // handed on when the second waited
        CHECK(find(rs, "W-1#2").v == verdict::inconclusive);
        CHECK_THAT(find(rs, "W-1#2").reason, Catch::Contains("first shown by W-1#3") && Catch::Contains("(D152)"));
        CHECK(order == std::vector<std::string>{"W-1#1", "W-1#2", "W-1#3"});
    }
}

namespace {
// A real-time DUT behind a lab that reorders within a flow (D150): its 5th
// frame reaches the engine after its 12th.
// Or (data_only) its `hold`th data packet after its `release`th, a sim DUT
// with bug profile `bug` behind it.
class reordered_dut final : public forwarding_dut {
public:
    reordered_dut() = default;
    reordered_dut(const std::string& bug, unsigned hold, unsigned release) : hold_(hold), release_(release), data_only_(true) {
        in_ = mrct::dut::make_sim(bug);
    }
    bool realtime() const override { return true; }
    // The lab says it keeps frames of all source ports in order (fabric=none)
    // where a bug is planted: D158's order failure then stands unless the run
    // shows otherwise.
    bool declared_in_order() const override { return data_only_; }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        return forwarding_dut::start(s, self, seed, [this, tx](core::bytes_view f, core::nanos age) {
            const auto d = wire::decode_ethernet(f, {.verify_icrc = false});
            const unsigned n = !data_only_ || (d.ok() && wire::is_data_opcode(d.f.bth.opcode)) ? ++sent_ : 0;
            if (n == hold_) {
                held_.assign(f.begin(), f.end());
                return;
            }
            tx(f, age);
            if (n == release_) tx(held_, age);
        });
    }

private:
    unsigned hold_ = 5, release_ = 12;
    bool data_only_ = false;
    unsigned sent_ = 0;
    core::byte_buffer held_;
};
}  // namespace

TEST_CASE("a lab that reorders the DUT's frames within a flow voids a real-time case's verdicts (D150)") {
    auto s = load("lab-order.yaml", k_one_write);
    auto r = run::run_case(s.cases.at(0), run::dut_factory([]() -> core::result<std::unique_ptr<dut::dut>> {
                               return std::unique_ptr<dut::dut>(std::make_unique<reordered_dut>());
                           }),
                           3, 0, 0);
    REQUIRE(r.tr);
    CHECK(r.tr->timing.reordered_from_dut >= 1);
    CHECK(r.v == verdict::inconclusive);
    CHECK(run::timing_doubted(r));
    CHECK_THAT(r.reason, Catch::Contains("the lab reordered frames within a flow: ") &&
                             Catch::Contains("of the DUT's new data packets reached the engine after a later one of the same "
                                             "path and source port") &&
                             Catch::Contains("(D150)"));
    CHECK(reports::case_json(r, 0)["timing"]["reordered_from_dut"] == r.tr->timing.reordered_from_dut);
}

namespace {
const char* k_query_case = R"(
  - id: Q-1
    title: an RNR_QUERY after a lost RNR
    clauses: [MR-RNR-6]
    role: sender
    setup:
      - drop: {dir: from_dut, match: {opcode: RNR}, count: 1}
      - post_send: {side: peer, stream: 1, tag: 8, size: 8192, count: 1}
    steps:
      - at: 2ms
        do:
          - post_recv: {side: dut, tag: 8, size: 8192, count: 1}
    expect:
      - query_answer: {}
)";
}  // namespace

TEST_CASE("a failure on the order of the DUT's frames from two source ports waits for the run's lab to show reordering (D158)") {
    auto run = [](const std::string& cases, std::vector<std::string>* order = nullptr) {
        auto s = load("lab-order-run.yaml", ("suite: {name: T}\ncases:\n" + cases).c_str());
        run::run_options o;
        o.timing_retries = 0;
        o.seed = 3;
        if (order) o.progress = [order](const run::case_result& r, std::size_t, std::size_t) { order->push_back(r.id); };
        // A DUT that answers RNR_QUERY with RNR_SYNC first (sync-first),
        // behind a lab that delivers its 2nd data packet after its 6th: a
        // case where it sends no data shows no reordering.
        return run::run_suite(s, [] {
            return core::result<std::unique_ptr<dut::dut>>(std::unique_ptr<dut::dut>(std::make_unique<reordered_dut>("sync-first", 2, 6)));
        }, o);
    };
    // k_one_write's W-1, whose DUT sends data: the lab's reordering shows.
    const std::string write_case = std::string(k_one_write).substr(std::string(k_one_write).find("  - id: W-1"));
    SECTION("alone, RNR_SYNC before the RNR it answers for fails query_answer") {
        auto rs = run(k_query_case);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].v == verdict::fail);
        CHECK_THAT(rs[0].reason, Catch::Contains("query_answer") && Catch::Contains("sent RNR_SYNC (frame #"));
    }
    SECTION("after a case whose lab reordered a flow, it is inconclusive") {
        auto rs = run(write_case + k_query_case);
        REQUIRE(rs.size() == 2);
        CHECK_THAT(find(rs, "W-1").reason, Catch::Contains("(D150)"));
        const auto& q = find(rs, "Q-1");
        CHECK(q.v == verdict::inconclusive);
        CHECK_THAT(q.reason, Catch::Contains("this run's lab reordered frames within a flow (first shown by W-1, D150)") &&
                                 Catch::Contains("(D158)") && Catch::Contains("it would have said fail") &&
                                 Catch::Contains("sent RNR_SYNC (frame #"));
    }
    SECTION("before it, the failure waits for the run's lab, then is judged and handed on") {
        std::vector<std::string> order;
        auto rs = run(std::string(k_query_case) + write_case, &order);
        REQUIRE(rs.size() == 2);
        CHECK(find(rs, "Q-1").v == verdict::inconclusive);
        CHECK_THAT(find(rs, "Q-1").reason, Catch::Contains("first shown by W-1"));
        CHECK(order == std::vector<std::string>{"Q-1", "W-1"});  // released by W-1's result, ahead of it (as D152's)
    }
}

TEST_CASE("timing retries: a retry inconclusive for its own run's reason names what doubted the attempt before") {
    // Seen beside stress-ng (SACK-001 scaled): the first attempt judged and
    // was doubted for timing; the retry lost no packet, so had nothing to
    // judge. Its reason alone ("no loss was detected") hid the figures.
    const std::vector<std::string> before{"fast_retransmit: events ran up to 6.318 ms late; this check needs 3.200 ms"};
    run::case_result r;
    r.v = verdict::inconclusive;
    r.reason = "fast_retransmit: no loss was detected by SACK in this run";
    run::assertion_result a;
    a.o = assertions::inconclusive("no loss was detected by SACK in this run");
    r.asserts.push_back(a);
    run::name_earlier_doubt(r, before);
    CHECK(r.reason == "fast_retransmit: no loss was detected by SACK in this run (the attempt before was doubted for "
                      "timing: fast_retransmit: events ran up to 6.318 ms late; this check needs 3.200 ms)");
    // A retry doubted for timing again, a verdict, or no retry: the reason stays.
    auto doubted = r;
    doubted.reason = "x";
    doubted.asserts[0].o.timing_doubt = true;
    run::name_earlier_doubt(doubted, before);
    CHECK(doubted.reason == "x");
    auto passed = r;
    passed.v = verdict::pass;
    passed.reason = "";
    run::name_earlier_doubt(passed, before);
    CHECK(passed.reason.empty());
    auto first = r;
    first.reason = "y";
    run::name_earlier_doubt(first, {});
    CHECK(first.reason == "y");
}

namespace {
// A real-time DUT without fine_timing whose first attempt's receive path
// lost frames (lossy_dut's counter): the case runs scaled, and is doubted
// for timing once.
class lossy_coarse_dut final : public forwarding_dut {
public:
    explicit lossy_coarse_dut(std::shared_ptr<int> made) : lost_(++*made <= 1 ? 3 : 0) {}
    bool realtime() const override { return true; }
    std::uint64_t frames_lost() const override { return lost_; }
    mrct::dut::info hello() const override {
        auto i = in_->hello();
        std::erase(i.capabilities, std::string("fine_timing"));
        return i;
    }

private:
    std::uint64_t lost_;
};
}  // namespace

TEST_CASE("timing retries: a case run slowed down runs again twice as slow under --time-scale auto (D69)") {
    auto s = load("retry-scaled.yaml", fine_plan());
    const auto& c = s.cases.at(0);
    auto made = std::make_shared<int>(0);
    auto make = [&made]() -> core::result<std::unique_ptr<dut::dut>> {
        return std::unique_ptr<dut::dut>(std::make_unique<lossy_coarse_dut>(made));
    };
    auto r = run::run_case(c, make, 3, 0, 1);
    CHECK(*made == 2);
    CHECK(r.attempts == 2);
    CHECK(r.time_scale == 128);
    REQUIRE(r.doubted_before.size() == 1);
    CHECK_THAT(r.doubted_before[0], Catch::StartsWith("at 64 times slower: ") && Catch::Contains("unread"));
    // An explicit time scale stays as asked.
    *made = 0;
    auto fixed = run::run_case(c, make, 3, 64, 1);
    CHECK(fixed.time_scale == 64);
}

TEST_CASE("timing retries: only a case whose every inconclusive check was doubted for timing qualifies") {
    run::case_result r;
    r.v = verdict::inconclusive;
    run::assertion_result doubted, unmet, failed;
    doubted.o.v = verdict::inconclusive;
    doubted.o.timing_doubt = true;
    unmet.o.v = verdict::inconclusive;  // the run did not produce the condition (no loss, a grant never approached)
    failed.o.v = verdict::fail;
    r.asserts = {doubted};
    CHECK(run::timing_doubted(r));
    r.asserts = {doubted, unmet};
    CHECK_FALSE(run::timing_doubted(r));  // another attempt cannot make the case judge
    r.asserts = {doubted, failed};
    r.v = verdict::fail;
    CHECK_FALSE(run::timing_doubted(r));  // a failure is never run again
    r.v = verdict::pass;
    r.asserts = {};
    CHECK_FALSE(run::timing_doubted(r));
}

namespace {

using namespace std::chrono_literals;

// A real-time DUT beside the engine whose agent answered polls in 40 and
// 100 us and one other call (at 1 ms) in 900 us.
class slow_call_dut final : public forwarding_dut {
public:
    bool realtime() const override { return true; }
    bool shares_host() const override { return true; }
    call_times agent_call_times() const override {
        call_times t;
        t.polls = {{0us, 40us}, {200us, 100us}, {400us, 100us}};
        t.others = {{1000us, 900us}};
        t.calls = 4;
        t.median = 100us;
        t.max = 900us;
        return t;
    }
};

}  // namespace

TEST_CASE("a slow agent call beside the engine counts as a span the DUT may have been held, less the quickest call (D97)") {
    auto s = load("slowcall.yaml", k_one_write);
    auto r = run::run_case(s.cases.at(0), [] { return core::result<std::unique_ptr<dut::dut>>(std::make_unique<slow_call_dut>()); }, 3);
    REQUIRE(r.tr);
    const auto& late = r.tr->timing.late;
    // 900 us less the quickest call's 40 us (not less the median poll's 100 us).
    CHECK(std::any_of(late.begin(), late.end(), [](const auto& l) { return l.due == 1000us && l.late == 860us; }));
    CHECK(r.tr->timing.held_between(1000us, 1860us) >= 860us);
}

// D146: a timing check's failure on a wire whose quickest answer is beyond
// the crossing window is not judged; the run measures the wire (a probe)
// when it knows no quicker answer.
TEST_CASE("judge_wire: a timing failure beyond the crossing window is inconclusive, and the case's verdict follows (D146)") {
    using namespace std::chrono_literals;
    using assertions::verdict;
    auto make = [](core::nanos known) {
        auto tr = std::make_shared<trace::trace>();
        tr->timing.realtime = true;
        tr->crossing = 200us;
        tr->timing.answer_min_run = known;
        run::case_result r;
        r.tr = tr;
        auto a = [](const char* name, verdict v, const char* msg) {
            run::assertion_result x;
            x.name = name;
            x.o.v = v;
            x.o.message = msg;
            return x;
        };
        r.asserts = {a("all_complete", verdict::pass, "8 work requests completed"),
                     a("no_go_back_n", verdict::fail, "PPSN 101 on path 1 was resent although an ACK had already covered it"),
                     a("data_integrity", verdict::pass, "all bytes as written")};
        r.v = verdict::fail;
        r.reason = "no_go_back_n: " + r.asserts[1].o.message;
        return r;
    };
    // Nothing known of the wire: it wants measuring; a quick answer known: not.
    CHECK(run::wire_may_cross(make(0us)));
    CHECK(run::wire_may_cross(make(9ms)));  // only a DUT's first frame long after the engine's ACCEPT
    CHECK_FALSE(run::wire_may_cross(make(50us)));
    // The probe measured 60 us: the failure stands.
    auto quick = make(9ms);
    CHECK_FALSE(run::judge_wire(quick, 60us));
    CHECK(quick.v == verdict::fail);
    // It measured 700 us: inconclusive, and the case with it, its reason the check's.
    auto slow = make(9ms);
    CHECK(run::judge_wire(slow, 700us));
    CHECK(slow.v == verdict::inconclusive);
    CHECK_THAT(slow.reason, Catch::StartsWith("no_go_back_n: the DUT's quickest answer on the wire in this run took 700.000 us"));
    CHECK_THAT(slow.reason, Catch::Contains("it would have said fail: PPSN 101"));
    // No probe answer (0): the case's own figure decides.
    auto own = make(900us);
    CHECK(run::judge_wire(own, 0us));
    CHECK(own.v == verdict::inconclusive);
    // A failure of a check with no timing need (data_integrity) stands, and the case fails.
    auto integrity = make(9ms);
    integrity.asserts[2].o.v = verdict::fail;
    integrity.asserts[2].o.message = "bytes 0-4095 differ";
    CHECK(run::judge_wire(integrity, 700us));
    CHECK(integrity.v == verdict::fail);
    CHECK_THAT(integrity.reason, Catch::StartsWith("data_integrity: bytes 0-4095 differ"));
    CHECK_FALSE(run::wire_may_cross(integrity));  // what fails is no timing check's
    // A timing-free failure stands too.
    auto free = make(9ms);
    free.asserts[1].o.timing_free = true;
    CHECK_FALSE(run::wire_may_cross(free));
    CHECK_FALSE(run::judge_wire(free, 700us));
    CHECK(free.v == verdict::fail);
    // A check timed inside itself (grant_rate), and a count short where the
    // scenario may not have arisen (rnr_sent), are judged by when frames
    // reached the DUT: doubted the same way.
    for (const char* name : {"grant_rate", "rnr_sent"}) {
        auto other = make(9ms);
        other.asserts[1].name = name;
        other.asserts[1].o.count_short = std::string(name) == "rnr_sent";
        CHECK(run::wire_may_cross(other));
        CHECK(run::judge_wire(other, 700us));
        CHECK(other.v == verdict::inconclusive);
    }
    auto plain = make(9ms);  // rnr_sent's other failures (an RNR never acknowledged) are the DUT's frames alone
    plain.asserts[1].name = "rnr_sent";
    CHECK_FALSE(run::wire_may_cross(plain));
    // Virtual time: no wire.
    auto sim = make(0us);
    std::const_pointer_cast<trace::trace>(sim.tr)->timing.realtime = false;
    CHECK_FALSE(run::wire_may_cross(sim));
    CHECK_FALSE(run::judge_wire(sim, 700us));
}
