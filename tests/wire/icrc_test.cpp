#include <catch2/catch.hpp>

#include <algorithm>

#include <zlib.h>

#include "core/rng.h"
#include "wire/build.h"
#include "wire/icrc.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::wire;

namespace {
// The §2 rule written out again, byte by byte, with zlib: the codec's icrc.cpp
// is not used here.
std::uint32_t reference_icrc(const core::byte_buffer& frame, std::size_t ip_off, unsigned ipv) {
    core::byte_buffer m(8 + frame.size() - ip_off - 4, 0xFF);
    std::copy(frame.begin() + static_cast<long>(ip_off), frame.end() - 4, m.begin() + 8);
    std::uint8_t* ip = m.data() + 8;
    std::size_t ihl;
    if (ipv == 4) {
        ihl = (ip[0] & 0xF) * 4u;
        ip[1] = 0xFF;
        ip[8] = 0xFF;
        ip[10] = 0xFF;
        ip[11] = 0xFF;
    } else {
        ihl = 40;
        ip[0] |= 0x0F;
        ip[1] = ip[2] = ip[3] = 0xFF;
        ip[7] = 0xFF;
    }
    ip[ihl + 6] = ip[ihl + 7] = 0xFF;
    ip[ihl + 8 + 4] = 0xFF;
    return static_cast<std::uint32_t>(::crc32(0, m.data(), static_cast<uInt>(m.size())));
}

std::uint32_t carried_icrc(const core::byte_buffer& f) { return icrc_read(f.data() + f.size() - 4); }
}  // namespace

TEST_CASE("builder's ICRC equals the written-out §2 rule on random frames") {
    core::rng r(11);
    for (unsigned ipv : {4u, 6u}) {
        for (auto op : k_all_opcodes) {
            for (int i = 0; i < 50; ++i) {
                auto s = random_spec(r, op, ipv);
                auto f = build(s);
                std::size_t ip_off = 14 + (s.eth.has_vlan ? 4 : 0);
                REQUIRE(carried_icrc(f) == reference_icrc(f, ip_off, ipv));
            }
        }
    }
}

TEST_CASE("ICRC ignores the variant fields and covers everything else") {
    for (unsigned ipv : {4u, 6u}) {
        auto base = sample_catalog()[0].spec;  // WRITE
        base.ip_version = ipv;
        const auto icrc0 = carried_icrc(build(base));
        auto same = [&](auto mutate) {
            auto s = base;
            mutate(s);
            return carried_icrc(build(s)) == icrc0;
        };
        // Variant: a switch may rewrite these (TTL, ECN, flow label ...).
        CHECK(same([](frame_spec& s) { s.ipv4.ttl = 1; s.ipv6.hop_limit = 1; }));
        CHECK(same([](frame_spec& s) { s.ipv4.ecn = 3; s.ipv6.ecn = 3; }));
        CHECK(same([](frame_spec& s) { s.ipv4.dscp = 46; s.ipv6.dscp = 46; }));
        CHECK(same([](frame_spec& s) { s.ipv6.flow_label = 0xABCDE; }));
        CHECK(same([](frame_spec& s) { s.ov.udp_checksum = 0x1234; }));
        CHECK(same([](frame_spec& s) { s.ov.ipv4_checksum = 0x1234; }));
        CHECK(same([](frame_spec& s) { s.bth.fecn = true; s.bth.becn = true; s.bth.resv6 = 0x2A; }));
        // Invariant: a source-port change changes the ICRC (§2), and so does everything else.
        CHECK_FALSE(same([](frame_spec& s) { s.udp.sport ^= 1; }));
        CHECK_FALSE(same([](frame_spec& s) { s.bth.psn ^= 1; }));
        CHECK_FALSE(same([](frame_spec& s) { s.bth.ack_req = !s.bth.ack_req; }));
        CHECK_FALSE(same([](frame_spec& s) { s.mrh->stream_seq ^= 1; }));
        CHECK_FALSE(same([](frame_spec& s) { s.payload[0] ^= 1; }));
        CHECK_FALSE(same([](frame_spec& s) { s.ipv4.src[3] ^= 1; s.ipv6.src[15] ^= 1; }));
        if (ipv == 4) {
            CHECK_FALSE(same([](frame_spec& s) { s.ipv4.identification = 1; }));
            CHECK_FALSE(same([](frame_spec& s) { s.ipv4.df = false; }));
        }
    }
}

TEST_CASE("ICRC from the UDP payload alone matches the full frame for conforming senders") {
    core::rng r(5);
    for (unsigned ipv : {4u, 6u}) {
        for (auto op : k_all_opcodes) {
            auto s = random_spec(r, op, ipv);
            s.ipv4.df = true;
            s.ipv4.identification = 0;
            auto f = build(s);
            auto d = decode_ethernet(f);
            REQUIRE(d.ok());
            udp_endpoints ep{ipv, s.ipv4.src, s.ipv4.dst, s.ipv6.src, s.ipv6.dst, s.udp.sport, s.udp.dport};
            core::bytes_view udp_payload(f.data() + d.f.bth_offset, f.size() - d.f.bth_offset - 4);
            CHECK(icrc_compute_udp(ep, udp_payload) == d.f.icrc);
        }
    }
}

TEST_CASE("ICRC is sent least significant byte first") {
    auto s = sample_catalog()[0].spec;
    s.ov.icrc = 0x11223344;
    auto f = build(s);
    CHECK(f[f.size() - 4] == 0x44);
    CHECK(f[f.size() - 1] == 0x11);
}

TEST_CASE("ICRC over IPv4 with options and over short IPv6 frames takes the byte path correctly") {
    auto s = sample_catalog()[0].spec;
    s.ipv4_options = {0x94, 0x04, 0x00, 0x00};  // Router Alert
    auto f = build(s);
    auto d = decode_ethernet(f);
    REQUIRE(d.ok());
    CHECK(d.f.ipv4.ihl == 6);
    CHECK(carried_icrc(f) == reference_icrc(f, 14, 4));
    auto c = ctrl_spec(ctrl_type::close, {}, 6);  // 4 bytes after the BTH: too short for whole chunks
    auto g = build(c);
    CHECK(carried_icrc(g) == reference_icrc(g, 14, 6));
    CHECK(decode_ethernet(g).ok());
}
