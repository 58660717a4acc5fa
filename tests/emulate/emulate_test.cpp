#include <catch2/catch.hpp>

#include "emulate/emulate.h"
#include "sim/drivers.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::emulate;
using namespace std::chrono_literals;

namespace {

// A MetaRoCE WRITE from `src_host` (10.0.0.src_host) with UDP source port `sport`.
core::byte_buffer write_frame(std::uint16_t sport, std::uint8_t src_host = 1, std::uint32_t psn = 0) {
    auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(64, 0xAB));
    spec.udp.sport = sport;
    spec.ipv4.src = {10, 0, 0, src_host};
    spec.ipv4.dst = {10, 0, 0, static_cast<std::uint8_t>(src_host == 1 ? 2 : 1)};
    spec.bth.psn = psn;
    return wire::build(spec);
}

// An ARP request: not MetaRoCE, passed on untouched.
core::byte_buffer arp_frame() {
    core::byte_buffer f(42, 0);
    for (int i = 0; i < 6; ++i) f[i] = 0xFF;
    f[12] = 0x08;
    f[13] = 0x06;
    return f;
}

struct rig {
    sim::scheduler s;
    sim::virtual_driver d{s};
    std::unique_ptr<bump> b;
    struct out {
        side to;
        core::nanos t;
        core::byte_buffer bytes;
        std::int64_t stamp;
        bool fabric;
    };
    std::vector<out> got;
    explicit rig(const config& c) {
        auto r = bump::create(s, c, [this](side to, core::bytes_view f, std::int64_t stamp, const fabric::packet_meta* m) {
            got.push_back({to, s.now(), {f.begin(), f.end()}, stamp, m != nullptr});
        });
        REQUIRE(r.ok());
        b = std::move(*r);
    }
};

config parsed(const std::string& yaml) {
    auto c = parse_config(yaml, "emu.yaml");
    REQUIRE(c.ok());
    return *c;
}

}  // namespace

TEST_CASE("bump: MetaRoCE through the stages, other frames at once and untouched") {
    rig r(parsed("paths: 4\ndelay: 10us\n"));
    const auto w = write_frame(0xC001);
    const auto arp = arp_frame();
    r.b->receive(side::a, w, 1234);
    r.b->receive(side::b, arp, 99);
    REQUIRE(r.got.size() == 1);  // the ARP at once, toward A
    CHECK(r.got[0].to == side::a);
    CHECK(r.got[0].bytes == arp);
    CHECK_FALSE(r.got[0].fabric);
    r.d.run();
    REQUIRE(r.got.size() == 2);
    CHECK(r.got[1].to == side::b);
    CHECK(r.got[1].t == 10us);
    CHECK(r.got[1].bytes == w);
    CHECK(r.got[1].stamp == 1234);  // the receive stamp rides along
    CHECK(r.b->other_frames(side::b) == 1);
    CHECK(r.b->addresses(side::a) == std::set<std::string>{"10.0.0.1"});
    CHECK(r.b->addresses(side::b).empty());
    std::uint64_t in = 0, out = 0;
    for (unsigned p = 0; p < r.b->paths(); ++p) {
        in += r.b->counters(side::a, p).in;
        out += r.b->counters(side::a, p).out;
    }
    CHECK(in == 1);
    CHECK(out == 1);
}

TEST_CASE("bump: a stage on one path and direction touches only that path's frames") {
    rig r(parsed("paths: 4\npin: {49153: 1, 49154: 2}\nimpair:\n  - loss: {path: 1, dir: a_to_b, p: 1}\n"));
    for (int i = 0; i < 5; ++i) {
        r.b->receive(side::a, write_frame(49153, 1, i), 0);  // path 1: lost
        r.b->receive(side::a, write_frame(49154, 1, i), 0);  // path 2: passes
        r.b->receive(side::b, write_frame(49153, 2, i), 0);  // path 1, other direction: passes
    }
    r.d.run();
    CHECK(r.got.size() == 10);
    CHECK(r.b->counters(side::a, 1).in == 5);
    CHECK(r.b->counters(side::a, 1).stages.dropped == 5);
    CHECK(r.b->counters(side::a, 1).out == 0);
    CHECK(r.b->counters(side::a, 2).out == 5);
    CHECK(r.b->counters(side::b, 1).out == 5);
}

TEST_CASE("bump: select learn pins each side's k-th source port to path k") {
    rig r(parsed("paths: 3\nselect: learn\n"));
    for (std::uint16_t p : {50000, 40000, 60000, 45000}) r.b->receive(side::a, write_frame(p), 0);
    r.b->receive(side::b, write_frame(51000, 2), 0);
    const auto a = r.b->ports(side::a);
    CHECK(a.at(50000) == 0);
    CHECK(a.at(40000) == 1);
    CHECK(a.at(60000) == 2);
    CHECK(a.at(45000) == 0);  // wraps
    CHECK(r.b->ports(side::b).at(51000) == 0);
}

TEST_CASE("config: the plan's stage syntax, every path and direction, skew per path") {
    auto c = parsed("paths: 2\nseed: 9\ndelay: 5us\npath_delay: {1: 20us}\nrate: 10Gbps\n"
                    "impair:\n  - loss: {p: 0.5}\n  - duplicate: {dir: b_to_a, p: 0.1}\n");
    CHECK(c.fabric.paths == 2);
    CHECK(c.fabric.seed == 9);
    const auto& ab1 = c.fabric.path_stages_ab.at(1);
    REQUIRE(ab1.size() == 3);
    CHECK(ab1[0].kind == "delay");
    CHECK(ab1[0].params.at("delay") == "25000ns");
    CHECK(ab1[1].kind == "queue");
    CHECK(ab1[2].kind == "loss");
    CHECK(c.fabric.path_stages_ba.at(0).size() == 4);  // delay, queue, loss, duplicate
    CHECK(c.fabric.path_stages_ab.at(0).size() == 3);
    // No configuration: plain wires.
    auto plain = parse_config("", "e.yaml");
    REQUIRE(plain.ok());
    CHECK(plain->fabric.path_stages_ab.at(7).empty());
}

TEST_CASE("config: errors name file:line:col and what was expected") {
    auto err = [](const std::string& yaml) {
        auto c = parse_config(yaml, "e.yaml");
        REQUIRE_FALSE(c.ok());
        return c.err().message;
    };
    CHECK_THAT(err("paths: 4\nbanana: 1\n"), Catch::StartsWith("e.yaml:2:1: unknown key 'banana'"));
    CHECK_THAT(err("paths: 300\n"), Catch::StartsWith("e.yaml:1:8: paths must be in 1..256"));
    CHECK_THAT(err("paths: -1\n"), Catch::Contains("paths must be an integer"));
    CHECK_THAT(err("paths: 2\nimpair:\n  - loss: {path: 2}\n"), Catch::StartsWith("e.yaml:3:") && Catch::Contains("path must be in 0..1"));
    CHECK_THAT(err("impair:\n  - loss: {p: 2}\n"), Catch::StartsWith("e.yaml:2:5:"));
    CHECK_THAT(err("impair:\n  - warp: {}\n"), Catch::Contains("warp"));
    CHECK_THAT(err("impair:\n  - loss: {dir: up}\n"), Catch::Contains("dir must be a_to_b, b_to_a or both"));
    CHECK_THAT(err("delay: soon\n"), Catch::StartsWith("e.yaml:1:8:") && Catch::Contains("not a duration"));
    CHECK_THAT(err("select: random\n"), Catch::Contains("select must be hash or learn"));
    CHECK_THAT(err("pin: {70000: 1}\n"), Catch::Contains("1..65535"));
    CHECK_THAT(err("[1, 2"), Catch::StartsWith("e.yaml:"));
    CHECK_THAT(err("? [a]\n: 1\n"), Catch::StartsWith("e.yaml:"));
    // Hostile: refused where it goes wrong, before anything is built (yaml/checked.h).
    CHECK_THAT(err("paths: 2\npaths: 4\n"), Catch::StartsWith("e.yaml:2:1: duplicate key 'paths'"));
    CHECK_THAT(err("impair: " + std::string(50, '[') + std::string(50, ']') + "\n"),
               Catch::StartsWith("e.yaml:1:") && Catch::Contains("nested more than 32 levels deep"));
    CHECK_THAT(err("paths: 2\n---\npaths: 3\n"), Catch::StartsWith("e.yaml:2:1: a second YAML document"));
    CHECK_THAT(err("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                   "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"),
               Catch::StartsWith("e.yaml:5:") && Catch::Contains("holds more than 100000 YAML nodes"));
    auto dev = load_config("/dev/zero");
    REQUIRE_FALSE(dev.ok());
    CHECK_THAT(dev.err().message, Catch::Contains("not a regular file"));
}

TEST_CASE("histogram: median and p99 to 100 ns") {
    histogram h;
    CHECK(h.quantile(0.5) == 0);
    for (int i = 1; i <= 100; ++i) h.add(i * 1000);  // 1..100 us
    CHECK(h.count() == 100);
    CHECK(h.quantile(0.5) == 50'100);  // the bucket's upper edge
    CHECK(h.quantile(0.99) == 99'100);
    CHECK(h.max() == 100'000);
    h.add(50'000'000);  // beyond 10 ms: the maximum
    CHECK(h.quantile(1.0) == 50'000'000);
}

TEST_CASE("summary_text: a port whose capture is not the wire says so (D120)") {
    auto port = [](std::uint64_t lost, std::uint64_t unsent) {
        return nlohmann::ordered_json{{"port", "pcap:e0"},     {"addresses", {"10.0.0.1"}}, {"frames_in", 10},
                                      {"frames_out", 9},       {"lost_in", lost},           {"send_errors", unsent}};
    };
    auto dir = nlohmann::ordered_json{{"frames_in", 1}, {"frames_out", 1}, {"dropped", 0}, {"marked", 0},
                                      {"duplicated", 0}, {"corrupted", 0}, {"other_frames", 0}};
    nlohmann::ordered_json j{{"duration_s", 1.0},
                             {"paths", 8},
                             {"ports", {{"a", port(0, 0)}, {"b", port(1941, 2)}}},
                             {"directions", {{"a_to_b", dir}, {"b_to_a", dir}}},
                             {"delay_error", {{"median_ns", 0}, {"p99_ns", 0}, {"max_ns", 0}, {"frames", 0}}}};
    const auto s = summary_text(j);
    CHECK_THAT(s, Catch::Contains("port a pcap:e0: DUT 10.0.0.1; 10 frames in, 9 out, 0 lost before they were read, 0 sends failed\n"));
    CHECK_THAT(s, Catch::Contains("port b pcap:e0: DUT 10.0.0.1; 10 frames in, 9 out, 1941 lost before they were read, 2 sends "
                                  "failed (the capture is not the wire: mrct check gives no verdict on it, D120)\n"));
}
