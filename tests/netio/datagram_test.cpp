// What a UDP socket can carry, and the frame rebuilt around a datagram: both
// checked against the codec (decode, ICRC).
#include <catch2/catch.hpp>

#include "frames.h"
#include "netio/port.h"
#include "wire/build.h"
#include "wire/frame.h"
#include "wire/icrc.h"

using namespace mrct;

using test::write_spec;

TEST_CASE("datagram_of: a conforming frame becomes its UDP datagram") {
    auto f = wire::build(write_spec());
    auto d = netio::datagram_of(f);
    REQUIRE(d.ok());
    CHECK(netio::ip_text(d->src) == "10.1.0.1");
    CHECK(netio::ip_text(d->dst) == "10.1.0.2");
    CHECK(d->sport == 0xC123);
    CHECK(d->dport == 4791);
    CHECK(d->tos == 2);
    CHECK(d->payload.size() == f.size() - 42);
}

TEST_CASE("frame_from_datagram gives back the sender's frame, ICRC valid") {
    auto f = wire::build(write_spec());
    auto d = netio::datagram_of(f);
    REQUIRE(d.ok());
    auto g = netio::frame_from_datagram(d->src, d->sport, d->dst, d->dport, d->tos, 64, d->payload);
    // Only the placeholder MACs differ.
    REQUIRE(g.size() == f.size());
    CHECK(std::equal(g.begin() + 12, g.end(), f.begin() + 12));
    auto dec = wire::decode_ethernet(g);
    REQUIRE(dec.ok());
    CHECK(dec.f.icrc_ok());
    CHECK(dec.f.ipv4.df);
    CHECK(dec.f.ipv4.identification == 0);
    CHECK(dec.f.ip_ecn() == 2);
}

TEST_CASE("datagram_of refuses what a UDP socket cannot send exactly") {
    auto with = [](auto mutate) {
        auto s = write_spec();
        mutate(s);
        return netio::datagram_of(wire::build(s));
    };
    CHECK_THAT(with([](wire::frame_spec& s) { s.ov.truncate_to = 60; }).err().message, Catch::Contains("total length"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.ipv4.identification = 9; }).err().message, Catch::Contains("Identification"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.ipv4.df = false; }).err().message, Catch::Contains("DF"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.ipv4_options.assign(4, 1); }).err().message, Catch::Contains("options"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.ov.udp_length = 9; }).err().message, Catch::Contains("UDP length"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.ov.ipv4_checksum = 1; }).err().message, Catch::Contains("checksum"));
    CHECK_THAT(with([](wire::frame_spec& s) { s.eth.ethertype = 0x88B5; s.ov.ethertype = 0x88B5; }).err().message,
               Catch::Contains("IPv4 or IPv6"));
    // A bad ICRC or a reserved opcode is still a datagram: UDP carries it.
    CHECK(with([](wire::frame_spec& s) { s.ov.icrc = 0; }).ok());
    CHECK(with([](wire::frame_spec& s) { s.bth.opcode = 0xDF; }).ok());
}

TEST_CASE("parse_ipv4") {
    CHECK(netio::parse_ipv4("192.168.7.1").ok());
    CHECK_FALSE(netio::parse_ipv4("192.168.7").ok());
    CHECK_FALSE(netio::parse_ipv4("192.168.7.256").ok());
    CHECK_FALSE(netio::parse_ipv4("192.168.7.1x").ok());
}

TEST_CASE("check_raw_frame: raw ports send only from local to the DUT") {
    auto f = wire::build(write_spec());
    netio::ip_address local, dut, other;
    local.v4 = {10, 1, 0, 1};
    dut.v4 = {10, 1, 0, 2};
    other.v4 = {10, 1, 0, 9};
    CHECK(netio::check_raw_frame(f, local, dut).ok());
    CHECK_THAT(netio::check_raw_frame(f, other, dut).err().message, Catch::Contains("source 10.1.0.1"));
    CHECK_THAT(netio::check_raw_frame(f, local, other).err().message, Catch::Contains("destination 10.1.0.2"));
    CHECK_FALSE(netio::check_raw_frame(core::bytes_view(f.data(), 20), local, dut).ok());
    // A further peer's address (local=IP+IP...) may send too.
    CHECK(netio::check_raw_frame(f, other, dut, {local}).ok());
}

namespace {

wire::frame_spec write_spec6() {
    auto s = write_spec();
    s.ip_version = 6;
    s.ipv6.src = netio::parse_ip("fd00:77::1").value().v6;
    s.ipv6.dst = netio::parse_ip("fd00:77::2").value().v6;
    s.ipv6.ecn = 2;
    s.ipv6.dscp = 10;
    return s;
}

}  // namespace

TEST_CASE("IPv6: a frame becomes its datagram and comes back the same, ICRC and UDP checksum valid") {
    auto f = wire::build(write_spec6());
    auto d = netio::datagram_of(f);
    REQUIRE(d.ok());
    CHECK(netio::ip_text(d->src) == "fd00:77::1");
    CHECK(netio::ip_text(d->dst) == "fd00:77::2");
    CHECK(d->tos == ((10 << 2) | 2));
    auto g = netio::frame_from_datagram(d->src, d->sport, d->dst, d->dport, d->tos, 64, d->payload);
    REQUIRE(g.size() == f.size());
    CHECK(std::equal(g.begin() + 12, g.end(), f.begin() + 12));  // the UDP checksum too: the builder's
    auto dec = wire::decode_ethernet(g);
    REQUIRE(dec.ok());
    CHECK(dec.f.icrc_ok());
    CHECK(dec.f.ip_ecn() == 2);
    // What a socket cannot send: a flow label, a wrong UDP checksum.
    auto s = write_spec6();
    s.ipv6.flow_label = 5;
    CHECK_THAT(netio::datagram_of(wire::build(s)).err().message, Catch::Contains("flow label"));
    s = write_spec6();
    s.ov.udp_checksum = 0x1234;
    CHECK_THAT(netio::datagram_of(wire::build(s)).err().message, Catch::Contains("UDP checksum"));
}

TEST_CASE("parse_ip and ip_text, both versions") {
    auto a = netio::parse_ip("fd00::2");
    REQUIRE(a.ok());
    CHECK(a->version == 6);
    CHECK(netio::ip_text(*a) == "fd00::2");
    CHECK(netio::parse_ip("10.0.0.7")->version == 4);
    CHECK_FALSE(netio::parse_ip("fd00::zz").ok());
    CHECK(netio::parse_ip("::").value().unspecified());
}
