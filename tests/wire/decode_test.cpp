#include <catch2/catch.hpp>

#include "core/rng.h"
#include "wire/build.h"
#include "wire/icrc.h"
#include "wire/protocol.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::wire;

namespace {
frame_spec sample(const std::string& name) {
    for (auto& s : sample_catalog())
        if (s.name == name) return s.spec;
    FAIL("no sample " << name);
    return {};
}

drop expect_drop(const frame_spec& s, drop_reason why, layer where) {
    auto bytes = build(s);
    auto d = decode_ethernet(bytes);
    INFO("got " << (d.ok() ? "ok" : std::string(drop_reason_name(d.dropped->reason)) + " at " +
                                        std::string(layer_name(d.dropped->where))));
    REQUIRE_FALSE(d.ok());
    CHECK(drop_reason_name(d.dropped->reason) == drop_reason_name(why));
    CHECK(layer_name(d.dropped->where) == layer_name(where));
    return *d.dropped;
}
}  // namespace

TEST_CASE("every sample decodes to the fields it was built from") {
    for (const auto& [name, s] : sample_catalog()) {
        INFO(name);
        auto bytes = build(s);
        auto d = decode_ethernet(bytes);
        REQUIRE(d.ok());
        const frame& f = d.f;
        CHECK(f.icrc_ok());
        CHECK(f.eth.has_vlan == s.eth.has_vlan);
        CHECK(f.ip_version() == s.ip_version);
        CHECK(f.udp.sport == s.udp.sport);
        CHECK(f.udp.dport == k_udp_port);
        CHECK(f.udp.length == bytes.size() - f.udp_offset);
        auto b = s.bth;
        b.pad_cnt = f.bth.pad_cnt;  // computed
        CHECK(f.bth == b);
        CHECK(f.has(has_mrh) == s.mrh.has_value());
        if (s.mrh) CHECK(f.mrh == *s.mrh);
        if (s.reth) CHECK(f.reth == *s.reth);
        if (s.seth) CHECK(f.seth == *s.seth);
        if (s.immdt) CHECK(f.immdt == *s.immdt);
        if (s.ackh) CHECK(f.ackh == *s.ackh);
        if (s.nakh) CHECK(f.nakh == *s.nakh);
        if (s.rnrh) CHECK(f.rnrh == *s.rnrh);
        if (s.ctrlh) {
            CHECK(f.ctrlh.type == s.ctrlh->type);
            CHECK(f.tlvs.size() == f.ctrlh.tlv_length);
        }
        CHECK(core::byte_buffer(f.payload.begin(), f.payload.end()) == s.payload);
        CHECK((f.payload.size() + f.pad.size() + (f.has(has_ctrlh) ? f.tlvs.size() : 0)) % 4 == 0);
        CHECK(f.pad.size() == f.bth.pad_cnt);
    }
}

TEST_CASE("PadCnt pads payloads and TLVs to 4 bytes") {
    auto wi = sample("write_imm");  // 61-byte payload
    auto d = decode_ethernet(build(wi));
    REQUIRE(d.ok());
    CHECK(d.f.bth.pad_cnt == 3);
    CHECK(d.f.payload.size() == 61);
    auto connect = sample("ctrl_connect");  // CTRLH 4 + TLVs 57
    d = decode_ethernet(build(connect));
    REQUIRE(d.ok());
    CHECK(d.f.ctrlh.tlv_length == 57);
    CHECK(d.f.bth.pad_cnt == 3);
}

TEST_CASE("every truncation of every sample is a drop, never a crash") {
    for (const auto& [name, s] : sample_catalog()) {
        auto bytes = build(s);
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            INFO(name << " cut to " << n);
            auto d = decode_ethernet(core::bytes_view(bytes.data(), n));
            REQUIRE_FALSE(d.ok());
            // Lengths in IP/UDP headers make the frame's truncation visible
            // there, or at the Ethernet header when it is too short to hold one.
            auto l = d.dropped->where;
            CHECK((l == layer::ethernet || l == layer::vlan || l == layer::ipv4 || l == layer::ipv6));
            CHECK(d.dropped->reason == drop_reason::truncated);
        }
    }
}

TEST_CASE("short op headers inside consistent IP/UDP lengths are truncations at that header") {
    auto s = sample("ack");
    s.ackh.reset();
    s.payload.assign(20, 0);  // 20 bytes where ACKH needs 48; lengths all consistent
    expect_drop(s, drop_reason::truncated, layer::ackh);
    auto w = sample("write");
    w.reth.reset();
    w.payload.clear();  // MRH present, RETH missing
    expect_drop(w, drop_reason::truncated, layer::reth);
    auto m = sample("write");
    m.mrh.reset();
    m.reth.reset();
    m.payload.assign(8, 0);
    expect_drop(m, drop_reason::truncated, layer::mrh);
}

TEST_CASE("drop reasons for broken link, IP and UDP layers") {
    auto s = sample("write");
    {
        auto t = s;
        t.ov.ethertype = 0x0806;
        expect_drop(t, drop_reason::unsupported_ethertype, layer::ethernet);
    }
    {
        auto t = s;
        t.ov.ethertype = k_ethertype_ipv6;  // IPv4 header behind an IPv6 EtherType
        expect_drop(t, drop_reason::bad_ip_version, layer::ipv6);
    }
    {
        auto t = s;
        t.ov.ipv4_ihl = 4;
        expect_drop(t, drop_reason::bad_header_length, layer::ipv4);
    }
    {
        auto t = s;
        t.ov.ipv4_checksum = 0x1234;
        expect_drop(t, drop_reason::bad_checksum, layer::ipv4);
    }
    {
        auto t = s;
        t.ipv4.mf = true;
        expect_drop(t, drop_reason::fragmented, layer::ipv4);
    }
    {
        auto t = s;
        t.ipv4.protocol = 6;
        expect_drop(t, drop_reason::not_udp, layer::ipv4);
    }
    {
        auto t = s;
        t.ip_version = 6;
        t.ipv6.next_header = 6;
        expect_drop(t, drop_reason::not_udp, layer::ipv6);
    }
    {
        auto t = s;
        t.ov.ip_total_length = 19;
        expect_drop(t, drop_reason::bad_length, layer::ipv4);
    }
    {
        auto t = s;
        t.ov.ip_total_length = 2000;
        expect_drop(t, drop_reason::truncated, layer::ipv4);
    }
    {
        auto t = s;
        t.ov.udp_length = 40;
        expect_drop(t, drop_reason::bad_length, layer::udp);
    }
    {
        auto t = s;
        t.udp.dport = 4792;
        expect_drop(t, drop_reason::not_roce_port, layer::udp);
    }
}

TEST_CASE("drop reasons for broken MetaRoCE layers (MR-HDR-2, MR-HDR-3)") {
    {
        auto t = sample("send");
        t.ov.icrc = 0;
        expect_drop(t, drop_reason::bad_icrc, layer::icrc);
    }
    {
        // A flipped payload bit after the ICRC was computed: corruption in flight.
        auto bytes = build(sample("send"));
        bytes[bytes.size() - 10] ^= 0x04;
        auto d = decode_ethernet(bytes);
        REQUIRE_FALSE(d.ok());
        CHECK(d.dropped->reason == drop_reason::bad_icrc);
        CHECK_FALSE(d.f.icrc_ok());
        // Without ICRC verification the same frame decodes.
        CHECK(decode_ethernet(bytes, {.verify_icrc = false}).ok());
    }
    {
        auto t = sample("write");
        t.bth.tver = 1;
        expect_drop(t, drop_reason::bad_transport_version, layer::bth);
    }
    for (std::uint8_t op : {0x00, 0x04, 0x81, 0xC4, 0xCF, 0xD4, 0xFF}) {
        auto t = sample("write");
        t.bth.opcode = op;
        expect_drop(t, drop_reason::reserved_opcode, layer::bth);
    }
    for (const char* n : {"write", "ack", "nak", "rnr", "ctrl_close"}) {
        INFO(n);
        auto t = sample(n);
        if (t.mrh) t.mrh->ver = 2;
        if (t.ackh) t.ackh->ver = 0;
        if (t.nakh) t.nakh->ver = 15;
        if (t.rnrh) t.rnrh->ver = 2;
        if (t.ctrlh) t.ctrlh->ver = 2;
        const layer where = t.mrh ? layer::mrh : t.ackh ? layer::ackh : t.nakh ? layer::nakh : t.rnrh ? layer::rnrh : layer::ctrlh;
        expect_drop(t, drop_reason::bad_version, where);
    }
    {
        auto t = sample("ack");
        t.ov.pad_cnt = 2;
        expect_drop(t, drop_reason::pad_overrun, layer::ackh);
    }
    {
        auto t = sample("ack");
        t.payload.assign(4, 0);  // 4 unexplained bytes after a fixed-size header
        expect_drop(t, drop_reason::bad_length, layer::ackh);
    }
    {
        auto t = sample("write");
        t.payload.resize(63);  // 63 + pad 0 is not a multiple of 4
        t.ov.pad_cnt = 0;
        t.ov.pad_bytes = core::byte_buffer{};
        expect_drop(t, drop_reason::misaligned, layer::payload);
    }
    {
        auto t = sample("ctrl_probe");
        t.ov.ctrl_tlv_length = 3;
        expect_drop(t, drop_reason::bad_length, layer::ctrlh);
    }
    {
        auto t = sample("ctrl_probe");
        t.tlvs[1].length = 40;  // NONCE claims more bytes than the TLV area holds
        t.ov.ctrl_tlv_length = static_cast<std::uint16_t>(4 + 7);
        expect_drop(t, drop_reason::tlv_overrun, layer::tlv);
    }
}

TEST_CASE("reserved bits are decoded and kept, not rejected (MR-HDR-1)") {
    auto t = sample("write");
    t.bth.resv6 = 0x15;
    t.bth.resv7 = 0x55;
    t.mrh->flags |= 0x0A;
    t.mrh->resv = 0x9;
    t.ipv4.flag_reserved = true;
    auto d = decode_ethernet(build(t));
    REQUIRE(d.ok());
    CHECK(d.f.bth.resv6 == 0x15);
    CHECK(d.f.bth.resv7 == 0x55);
    CHECK((d.f.mrh.flags & k_flag_reserved_mask) == 0x0A);
    CHECK(d.f.mrh.resv == 0x9);
    CHECK(d.f.ipv4.flag_reserved);

    auto a = sample("ack");
    a.ackh->resv = 0xAB;
    a.ackh->resv2 = 0xCDEF;
    a.ackh->trig_ppsn = ppsn32::of(5, 0x7F);
    d = decode_ethernet(build(a));
    REQUIRE(d.ok());
    CHECK(d.f.ackh.resv == 0xAB);
    CHECK(d.f.ackh.resv2 == 0xCDEF);
    CHECK(d.f.ackh.trig_ppsn.ppsn() == 5);
    CHECK(d.f.ackh.trig_ppsn.resv() == 0x7F);
}

TEST_CASE("Ethernet padding after the IP packet is kept as a trailer") {
    auto t = sample("ctrl_close");
    t.ov.trailer.assign(6, 0);
    auto d = decode_ethernet(build(t));
    REQUIRE(d.ok());
    CHECK(d.f.trailer.size() == 6);
}

TEST_CASE("raw IP decoding (no Ethernet header)") {
    for (unsigned ipv : {4u, 6u}) {
        auto t = sample("nak");
        t.with_ethernet = false;
        t.ip_version = ipv;
        auto d = decode_ip(build(t));
        REQUIRE(d.ok());
        CHECK(d.f.ip_version() == ipv);
        CHECK(d.f.nakh.code == 0x0F);
        CHECK_FALSE(d.f.has(has_eth));
    }
    const std::uint8_t junk[] = {0x55, 0, 0};
    auto d = decode_ip(junk);
    REQUIRE_FALSE(d.ok());
    CHECK(d.dropped->reason == drop_reason::bad_ip_version);
    CHECK_FALSE(decode_ip({}).ok());
}

TEST_CASE("random bytes never crash the decoder") {
    core::rng r(99);
    core::byte_buffer buf;
    for (int i = 0; i < 20000; ++i) {
        buf.resize(r.below(200));
        for (auto& b : buf) b = static_cast<std::uint8_t>(r.next());
        (void)decode_ethernet(buf);
        (void)decode_ip(buf);
    }
    // Random mutations of valid frames reach deep layers.
    auto samples = sample_catalog();
    for (int i = 0; i < 20000; ++i) {
        auto bytes = build(samples[r.below(samples.size())].spec);
        for (int k = 0; k < 3; ++k) bytes[r.below(bytes.size())] ^= static_cast<std::uint8_t>(1u << r.below(8));
        (void)decode_ethernet(bytes, {.verify_icrc = r.chance(0.5)});
    }
    SUCCEED("no crash, no sanitizer report");
}
