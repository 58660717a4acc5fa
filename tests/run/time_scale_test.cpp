// Coarse time: a case slowed down K times (engine/run/time_scale.h).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "endpoint/config.h"
#include "run/time_scale.h"

using namespace mrct;

namespace {

plan::test_case load_case(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "time_scale_files";
    std::filesystem::create_directories(dir);
    const auto p = (dir / name).string();
    std::ofstream(p) << text;
    auto s = plan::load(p);
    INFO((s.ok() ? std::string() : s.err().message));
    REQUIRE(s.ok());
    REQUIRE(s->cases.size() == 1);
    return s->cases[0];
}

const char* k_case = R"(suite: {name: T}
cases:
  - id: X-1
    title: everything that carries a time or a rate
    clauses: [MR-RNR-4]
    requires: [fine_timing]
    topology:
      paths: 2
      path_delay: {1: 2ms}
      rate: 64Gbps
      impair:
        - queue: {path: 1, dir: to_peer, rate: 10Gbps, kmin: 32768}
        - reorder: {p: 0.1}
    dut: {rto_min: 200us, retry_limit: 9}
    peer: {rnr_timer_code: 10, inbound_rate: 100Gbps}
    handshake:
      - delay: {dir: to_dut, match: {ctrl: ACCEPT}, by: 1ms}
    setup:
      - drop: {match: {opcode: ACK}, for: 50us, count: 0}
      - post_write: {side: dut, size: 65536}
    steps:
      - {at: 1.5ms, do: [skew: {path: 1, add: 10us}]}
      - on: {match: {opcode: SEND}}
        do: [inject: {template: rnr}, inject: {template: ack, grant: 640}]
    expect:
      - rnr_resume: {within: "rnr_time + 10% + 50us"}
      - acks_conform: {}
      - rto_independence: {path: 0, at_most: "rto_min + 4 * rtt(p0) + 20%"}
      - grant_advertised: {rate: 100Gbps}
      - all_complete: {}
    limits: {duration: 60ms}
)";

std::string text(const plan::args& a, const std::string& k) { return a.at(k).text; }

}  // namespace

TEST_CASE("time scales are powers of two up to 128") {
    CHECK(run::valid_time_scale(1));
    CHECK(run::valid_time_scale(64));
    CHECK(run::valid_time_scale(128));
    CHECK_FALSE(run::valid_time_scale(0));
    CHECK_FALSE(run::valid_time_scale(3));
    CHECK_FALSE(run::valid_time_scale(256));
}

TEST_CASE("a TimerCode maps to the code K times longer, where the table has one") {
    CHECK(run::scaled_rnr_code(14, 1) == 14u);
    CHECK(run::scaled_rnr_code(1, 2) == 2u);    // 0.01 -> 0.02 ms
    CHECK(run::scaled_rnr_code(3, 2) == 5u);    // 0.03 -> 0.06 ms
    CHECK(run::scaled_rnr_code(14, 32) == 24u);  // 1.28 -> 40.96 ms
    CHECK(run::scaled_rnr_code(14, 64) == 26u);  // 1.28 -> 81.92 ms
    CHECK(run::scaled_rnr_code(19, 64) == 31u);  // 7.68 -> 491.52 ms
    CHECK(run::scaled_rnr_code(20, 64) == 0u);   // 10.24 x 64 = 655.36 ms, code 0
    CHECK_FALSE(run::scaled_rnr_code(23, 64));
    CHECK_FALSE(run::scaled_rnr_code(0, 2));     // 655.36 ms is the longest
    CHECK_FALSE(run::scaled_rnr_code(32, 2));
}

TEST_CASE("a duration expression's literal times are scaled, its names are not") {
    CHECK(run::scale_expression("rnr_time + 10% + 50us", 64) == "rnr_time + 10% + 3200000ns");
    CHECK(run::scale_expression("rto_min / 2", 64) == "rto_min / 2");
    CHECK(run::scale_expression("rto_min + 4 * rtt(p0) + 20%", 64) == "rto_min + 4 * rtt(p0) + 20%");
    CHECK(run::scale_expression("1.5ms", 2) == "3000000ns");
    CHECK(run::scale_expression("2s+1ns", 4) == "8000000000ns+4ns");
    CHECK(run::scale_expression("5", 64) == "5");  // a bare number is not a time here
}

TEST_CASE("scale_case: times multiplied, rates divided, defaults written out") {
    const auto c = load_case("all.yaml", k_case);
    auto s = run::scale_case(c, 64);
    REQUIRE(s.ok());
    const auto& x = *s;
    // Topology: the default delay (2 us) is written out.
    CHECK(text(x.topology, "delay") == "128000ns");
    CHECK(text(x.topology, "path_delay.1") == "128000000ns");
    CHECK(text(x.topology, "rate") == "1000000000");
    CHECK(text(x.topology, "paths") == "2");
    // Fabric stages: declared durations (with their defaults) and rates.
    CHECK(text(x.impair.at(0).a, "rate") == "156250000");
    CHECK(text(x.impair.at(0).a, "kmin") == "32768");
    CHECK(text(x.impair.at(1).a, "extra") == "640000ns");  // reorder's default 10 us
    CHECK(text(x.impair.at(1).a, "p") == "0.1");
    // Endpoints: every timer, the defaults included (from endpoint::config).
    const endpoint::config d;
    CHECK(text(x.dut, "rto_min") == "12800000ns");
    CHECK(text(x.dut, "rto_initial") == std::to_string(d.rto_initial.count() * 64) + "ns");
    CHECK(text(x.dut, "rto_max") == std::to_string(d.rto_max.count() * 64) + "ns");
    CHECK(text(x.dut, "ack_delay") == std::to_string(d.ack_delay.count() * 64) + "ns");
    CHECK(text(x.dut, "grant_idle") == std::to_string(d.grant_idle.count() * 64) + "ns");
    CHECK(text(x.dut, "inbound_rate") == "6250000000");
    CHECK(text(x.dut, "rnr_timer_code") == "26");  // the default 14
    CHECK(text(x.dut, "retry_limit") == "9");
    CHECK(text(x.peer, "rnr_timer_code") == "22");
    CHECK(text(x.peer, "inbound_rate") == "1562500000");
    // Actions and steps.
    CHECK(text(x.handshake.at(0).a, "by") == "64000000ns");
    CHECK(text(x.setup.at(0).a, "for") == "3200000ns");
    CHECK(text(x.setup.at(1).a, "size") == "65536");
    CHECK(x.steps.at(0).time->text == "96000000ns");
    CHECK(text(x.steps.at(0).actions.at(0).a, "add") == "640000ns");
    CHECK(text(x.steps.at(1).actions.at(0).a, "code") == "26");  // template rnr's default 14
    CHECK(text(x.steps.at(1).actions.at(1).a, "grant") == "10");
    // Assertions: given and default durations, the grant's rate.
    CHECK(text(x.expect.at(0).a, "within") == "rnr_time + 10% + 3200000ns");
    CHECK(text(x.expect.at(1).a, "within") == "320000ns");  // acks_conform's default 5 us
    CHECK(text(x.expect.at(2).a, "at_most") == "rto_min + 4 * rtt(p0) + 20%");
    CHECK(text(x.expect.at(3).a, "rate") == "1562500000");
    // Limits: the given duration and the default settle.
    CHECK(text(x.limits, "duration") == "3840000000ns");
    CHECK(text(x.limits, "settle") == "64000000ns");
    CHECK(x.limits.count("step_late") == 0);
    // Kept: what the case is.
    CHECK(x.id == c.id);
    CHECK(x.needs == c.needs);
}

TEST_CASE("scale_case: scale 1 changes nothing; what cannot be scaled is an error at its position") {
    const auto c = load_case("one.yaml", k_case);
    auto same = run::scale_case(c, 1);
    REQUIRE(same.ok());
    CHECK(same->topology.size() == c.topology.size());
    CHECK(same->dut.size() == c.dut.size());
    CHECK_FALSE(run::scale_case(c, 3).ok());
    auto g = run::scale_case(c, 128);  // GrantRate 640 / 128 = 5: fine; code 10 + 14 = 24: fine
    CHECK(g.ok());
    auto odd = load_case("odd.yaml", R"(suite: {name: T}
cases:
  - id: X-2
    title: a grant that does not divide
    clauses: [MR-GR-2]
    steps:
      - on: {match: {opcode: WRITE}}
        do: [inject: {template: ack, grant: 100}]
    expect:
      - grant_rate: {}
)");
    auto e = run::scale_case(odd, 64);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.err().message, Catch::Contains("odd.yaml:8:") && Catch::Contains("cannot be divided by 64"));
}
