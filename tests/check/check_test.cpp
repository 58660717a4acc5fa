#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "capture/pcap_file.h"
#include "check/check.h"
#include "wire/build.h"
#include "wire/protocol.h"

using namespace mrct;
using namespace std::chrono_literals;

namespace {

wire::frame_spec between(std::uint8_t from, std::uint8_t to, std::uint16_t sport) {
    wire::frame_spec s;
    s.eth.src = {2, 0, 0, 0, 0, from};
    s.eth.dst = {2, 0, 0, 0, 0, to};
    s.ipv4.src = {10, 0, 0, from};
    s.ipv4.dst = {10, 0, 0, to};
    s.ipv4.df = true;
    s.ipv4.ecn = 2;
    s.udp.sport = sport;
    s.udp.dport = wire::k_udp_port;
    s.bth.dest_qp = 0x42;
    return s;
}

core::byte_buffer write_from(std::uint8_t from, std::uint32_t psn, bool df = true) {
    auto s = between(from, from == 1 ? 2 : 1, 0xC000);
    s.ipv4.df = df;
    s.bth.opcode = 0xC0;
    s.bth.psn = psn;
    s.mrh = wire::mrh{1, 0, wire::k_flag_som | wire::k_flag_eom, 0, 0, 0, 0, 0, 0, 0};
    s.reth = wire::reth{0x1000, 0x100, 1024};
    s.payload.assign(1024, 0x5A);
    return wire::build(s);
}

core::byte_buffer ack_from(std::uint8_t from, std::uint32_t cum) {
    auto s = between(from, from == 1 ? 2 : 1, 0xC000);
    s.ipv4.ecn = 0;
    s.bth.opcode = 0xD0;
    s.bth.psn = cum;
    wire::ackh a;
    a.trig_ppsn = wire::ppsn32::of(cum - 1);
    a.grant_rate = 100;
    s.ackh = a;
    return wire::build(s);
}

std::string tmp(const std::string& name) { return std::string(MRCT_TEST_TMP) + "/check_test_" + name; }

// .1 writes PPSN 100..103 to .2, which acknowledges; an ARP and a UDP frame
// to another port in between (not MetaRoCE: never in a trace).
std::string conversation(const std::string& name, bool df = true) {
    const auto path = tmp(name);
    auto w = capture::pcap_writer::create(path);
    REQUIRE(w.ok());
    std::int64_t t = 1'000'000'000;
    for (std::uint32_t p = 100; p < 104; ++p) (*w)->write(t += 1000, write_from(1, p, df));
    core::byte_buffer arp(42, 0xFF);
    arp[12] = 0x08;
    arp[13] = 0x06;
    (*w)->write(t += 1000, arp);
    auto other = between(2, 1, 5000);
    other.udp.dport = 53;
    other.payload.assign(8, 0);
    (*w)->write(t += 1000, wire::build(other));
    (*w)->write(t += 5000, ack_from(2, 104));
    REQUIRE((*w)->close().ok());
    return path;
}

}  // namespace

TEST_CASE("trace_of: the DUT's frames are from_dut, its peer's to_dut, at capture time from the first") {
    const auto cap = conversation("basic.pcap");
    auto addrs = check::addresses_in(cap);
    REQUIRE(addrs.ok());
    CHECK(*addrs == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
    auto p = check::params_of({});
    REQUIRE(p.ok());
    auto a = check::trace_of(cap, "10.0.0.1", *p, 200'000, 5'000'000);
    REQUIRE(a.ok());
    const auto& tr = **a;
    REQUIRE(tr.frames.size() == 5);  // no ARP, no DNS
    for (int i = 0; i < 4; ++i) CHECK(tr.frames[i].d == trace::dir::from_dut);
    CHECK(tr.frames[4].d == trace::dir::to_dut);
    CHECK(tr.frames[0].t == 0ns);
    CHECK(tr.frames[4].t == 10us);
    CHECK(tr.end == 10us);
    CHECK(tr.crossing == 200us);
    CHECK(tr.timing.realtime);
    CHECK(tr.timing.assumed_hold == 5ms);
    auto b = check::trace_of(cap, "10.0.0.2", *p, 0);
    REQUIRE(b.ok());
    CHECK((*b)->frames[0].d == trace::dir::to_dut);
    CHECK((*b)->frames[4].d == trace::dir::from_dut);
    // The record lasts as long as the capture, whatever its last frame.
    const auto longer = tmp("longer.pcap");
    {
        auto w = capture::pcap_writer::create(longer);
        REQUIRE(w.ok());
        (*w)->write(1'000'000'000, write_from(1, 100));
        core::byte_buffer arp(42, 0xFF);
        arp[12] = 0x08;
        arp[13] = 0x06;
        (*w)->write(3'000'000'000, arp);
        REQUIRE((*w)->close().ok());
    }
    auto l = check::trace_of(longer, "10.0.0.1", *p, 0);
    REQUIRE(l.ok());
    CHECK((*l)->frames.size() == 1);
    CHECK((*l)->end == 2s);
    auto none = check::trace_of(cap, "10.0.0.9", *p, 0);
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.err().message, Catch::Contains("no MetaRoCE frame from or to 10.0.0.9"));
}

TEST_CASE("trace_of and judge: a PAUSE frame is the DUT's when it comes from the DUT's MAC (MR-CC-5)") {
    // .1's PAUSE before its first MetaRoCE frame (the MAC is learned from the
    // whole capture), and a PAUSE from a third MAC (a switch's): not .1's.
    const auto cap = tmp("pause.pcap");
    {
        auto w = capture::pcap_writer::create(cap);
        REQUIRE(w.ok());
        core::byte_buffer pause;
        wire::pause_frame_into({2, 0, 0, 0, 0, 1}, 0xFFFF, pause);
        REQUIRE(wire::is_mac_control(pause));
        core::byte_buffer other;
        wire::pause_frame_into({2, 0, 0, 0, 0, 9}, 0x10, other);
        (*w)->write(1'000'000'000, pause);
        (*w)->write(1'000'001'000, other);
        for (std::uint32_t p = 100; p < 104; ++p) (*w)->write(1'000'002'000 + p, write_from(1, p));
        (*w)->write(1'000'010'000, ack_from(2, 104));
        REQUIRE((*w)->close().ok());
    }
    auto p = check::params_of({});
    REQUIRE(p.ok());
    auto a = check::trace_of(cap, "10.0.0.1", *p, 0);
    REQUIRE(a.ok());
    REQUIRE((*a)->frames.size() == 6);  // its PAUSE, its 4 WRITEs, the ACK; not the switch's PAUSE
    CHECK((*a)->frames[0].d == trace::dir::from_dut);
    CHECK(wire::is_mac_control((*a)->frames[0].bytes));
    CHECK((*a)->frames[0].t == 0ns);
    auto b = check::trace_of(cap, "10.0.0.2", *p, 0);
    REQUIRE(b.ok());
    CHECK((*b)->frames.size() == 5);  // nobody's PAUSE is .2's
    // One survey of the capture serves every DUT's trace (judge: one pass,
    // then one per DUT): the same traces.
    auto s = check::survey(cap);
    REQUIRE(s.ok());
    CHECK(s->addresses == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
    CHECK(s->macs.at("10.0.0.1") == std::vector<wire::mac_addr>{{2, 0, 0, 0, 0, 1}});
    auto a2 = check::trace_of(cap, "10.0.0.1", *p, 0, 0, &*s);
    REQUIRE(a2.ok());
    CHECK((*a2)->frames.size() == 6);

    check::options o;
    o.inputs.push_back({cap, {}});
    auto r = check::judge(o);
    REQUIRE(r.ok());
    const auto& first = r->front();
    REQUIRE(first.id == "10.0.0.1/wire_format");
    CHECK(first.v == assertions::verdict::fail);
    CHECK_THAT(first.reason, Catch::Contains("PAUSE") && Catch::Contains("MR-CC-5"));
    CHECK(std::find(first.clauses.begin(), first.clauses.end(), "MR-CC-5") != first.clauses.end());
    const auto& other = (*r)[check::profile().size()];
    REQUIRE(other.id == "10.0.0.2/wire_format");
    CHECK(other.v == assertions::verdict::pass);
}

TEST_CASE("params_of: the configure names, checked") {
    auto p = check::params_of({{"rto_min", "1ms"}, {"num_paths", "4"}});
    REQUIRE(p.ok());
    CHECK(p->rto_min == 1ms);
    CHECK(p->num_paths == 4);
    auto bad = check::params_of({{"banana", "1"}});
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.err().message, Catch::Contains("--param banana=1"));
}

TEST_CASE("judge: every check of the profile for every DUT, and a broken sender fails its clause") {
    check::options o;
    o.inputs.push_back({conversation("df0.pcap", false), {}});  // .1 sends with DF=0: MR-HDR-6's wire_format
    auto r = check::judge(o);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 2 * check::profile().size());
    const auto& first = r->front();
    CHECK(first.id == "10.0.0.1/wire_format");
    CHECK(first.v == assertions::verdict::fail);
    CHECK(std::find(first.clauses.begin(), first.clauses.end(), "MR-HDR-6") != first.clauses.end());
    CHECK(first.tr != nullptr);  // evidence kept for what did not pass
    const auto& other = (*r)[check::profile().size()];
    CHECK(other.id == "10.0.0.2/wire_format");
    CHECK(other.v == assertions::verdict::pass);
    for (std::size_t i = 0; i < r->size(); ++i) CHECK((*r)[i].order == i);
    // Only the DUTs asked for.
    o.inputs.front().duts = {"10.0.0.2"};
    auto only = check::judge(o);
    REQUIRE(only.ok());
    CHECK(only->size() == check::profile().size());
}

TEST_CASE("judge: on a capture that lost frames no pass or fail stands") {
    check::options o;
    check::input in{conversation("df0_lost.pcap", false), {}};
    in.lost = 3;
    in.lost_why = "the emulator's capture of port a is not its wire: 3 frames from its DUT lost";
    o.inputs.push_back(in);
    auto r = check::judge(o);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 2 * check::profile().size());
    // .1's DF=0 failure and .2's pass are both inconclusive now, each saying why
    // and what it would have said.
    const auto& failed = r->front();
    CHECK(failed.id == "10.0.0.1/wire_format");
    CHECK(failed.v == assertions::verdict::inconclusive);
    CHECK_THAT(failed.reason, Catch::Contains("port a is not its wire: 3 frames from its DUT lost: the trace is incomplete") &&
                                  Catch::Contains("it would have said fail"));
    CHECK(failed.tr != nullptr);  // evidence kept: it did not pass
    CHECK(failed.tr->timing.frames_lost == 3);
    const auto& passed = (*r)[check::profile().size()];
    CHECK(passed.id == "10.0.0.2/wire_format");
    CHECK(passed.v == assertions::verdict::inconclusive);
    CHECK_THAT(passed.reason, Catch::Contains("it would have said pass"));
    for (const auto& c : *r) CHECK(c.v != assertions::verdict::pass);
    for (const auto& c : *r) CHECK(c.v != assertions::verdict::fail);
    // Nothing lost: the verdicts stand (the test above, on the same capture).
    o.inputs.front().lost = 0;
    auto whole = check::judge(o);
    REQUIRE(whole.ok());
    CHECK(whole->front().v == assertions::verdict::fail);
}

TEST_CASE("inputs_of_emulation: each port's capture with the DUTs seen on it") {
    namespace fs = std::filesystem;
    const auto dir = tmp("emu");
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir + "/emulate.json") << R"({"ports": {"a": {"addresses": ["10.0.0.1"], "capture": "port-a.pcap"},
        "b": {"addresses": ["10.0.0.2"], "capture": "port-b.pcap"}}})";
    auto in = check::inputs_of_emulation(dir);
    REQUIRE(in.ok());
    REQUIRE(in->size() == 2);
    CHECK((*in)[0].capture == dir + "/port-a.pcap");
    CHECK((*in)[0].duts == std::vector<std::string>{"10.0.0.1"});
    CHECK((*in)[1].duts == std::vector<std::string>{"10.0.0.2"});
    CHECK((*in)[0].lost == 0);  // no lost_in: nothing lost
    // A port whose capture buffer lost frames says so, and where.
    // So does one whose sends to its DUT failed (the capture may show them).
    std::ofstream(dir + "/emulate.json") << R"({"ports": {"a": {"addresses": ["10.0.0.1"], "capture": "port-a.pcap", "lost_in": 0, "send_errors": 2},
        "b": {"addresses": ["10.0.0.2"], "capture": "port-b.pcap", "lost_in": 1941, "send_errors": 0}}})";
    auto lossy = check::inputs_of_emulation(dir);
    REQUIRE(lossy.ok());
    CHECK((*lossy)[0].lost == 2);
    CHECK_THAT((*lossy)[0].lost_why, Catch::Contains("port a") && Catch::Contains("2 sends to it failed"));
    CHECK((*lossy)[1].lost == 1941);
    CHECK_THAT((*lossy)[1].lost_why, Catch::Contains("port b") && Catch::Contains("1941 frames from its DUT lost"));
    std::ofstream(dir + "/emulate.json") << R"({"ports": {"a": {"addresses": []}}})";
    auto bad = check::inputs_of_emulation(dir);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.err().message, Catch::Contains("no capture"));
    auto missing = check::inputs_of_emulation(tmp("nowhere"));
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.err().message, Catch::Contains("no emulate.json"));
}
