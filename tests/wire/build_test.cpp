#include <catch2/catch.hpp>

#include "core/rng.h"
#include "wire/build.h"
#include "wire/checksum.h"
#include "wire/icrc.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::wire;

TEST_CASE("round trip build -> decode -> build is byte-identical for every sample") {
    for (const auto& [name, s] : sample_catalog()) {
        INFO(name);
        auto a = build(s);
        auto d = decode_ethernet(a);
        REQUIRE(d.ok());
        CHECK(build(to_spec(d.f)) == a);
    }
}

TEST_CASE("round trip on random frames of every opcode, IPv4 and IPv6") {
    core::rng r(2024);
    for (unsigned ipv : {4u, 6u}) {
        for (auto op : k_all_opcodes) {
            for (int i = 0; i < 500; ++i) {
                auto s = random_spec(r, op, ipv);
                s.with_ethernet = r.chance(0.8);
                auto a = build(s);
                auto d = s.with_ethernet ? decode_ethernet(a) : decode_ip(a);
                INFO(opcode_name(static_cast<std::uint8_t>(op)) << " ipv" << ipv << " #" << i);
                REQUIRE(d.ok());
                REQUIRE(build(to_spec(d.f)) == a);
            }
        }
    }
}

TEST_CASE("computed fields can each be overridden") {
    auto s = sample_catalog()[1].spec;  // WRITE_IMM, 61-byte payload
    auto base = build(s);
    const std::size_t ip = 14, udp = 34, bth = 42;

    auto t = s;
    t.ov.pad_cnt = 1;
    auto b = build(t);
    CHECK(((b[bth + 1] >> 4) & 3) == 1);
    CHECK(b.size() == base.size());

    t = s;
    t.ov.pad_bytes = core::byte_buffer{0xAA, 0xBB, 0xCC};
    b = build(t);
    auto d = decode_ethernet(b);
    REQUIRE(d.ok());
    CHECK(d.f.pad[0] == 0xAA);
    CHECK(build(to_spec(d.f)) == b);  // non-zero pad survives the round trip

    t = s;
    t.ov.udp_length = 9;
    b = build(t);
    CHECK(((b[udp + 4] << 8) | b[udp + 5]) == 9);

    t = s;
    t.ov.ip_total_length = 77;
    b = build(t);
    CHECK(((b[ip + 2] << 8) | b[ip + 3]) == 77);

    t = s;
    t.ov.udp_checksum = 0xBEEF;
    b = build(t);
    CHECK(((b[udp + 6] << 8) | b[udp + 7]) == 0xBEEF);

    t = s;
    t.ov.icrc = 0xDEADBEEF;
    b = build(t);
    CHECK(icrc_read(b.data() + b.size() - 4) == 0xDEADBEEF);

    t = s;
    t.ov.omit_icrc = true;
    b = build(t);
    CHECK(b.size() == base.size() - 4);

    t = s;
    t.ov.truncate_to = 50;
    CHECK(build(t).size() == 50);
}

TEST_CASE("UDP checksum: zero over IPv4, computed over IPv6") {
    auto s = sample_catalog()[0].spec;
    auto b4 = build(s);
    CHECK(b4[14 + 20 + 6] == 0);
    CHECK(b4[14 + 20 + 7] == 0);
    s.ip_version = 6;
    auto b6 = build(s);
    // Verify with the RFC 8200 pseudo-header: the sum over it and the UDP datagram is 0xFFFF.
    const std::size_t udp = 14 + 40, ulen = b6.size() - udp;
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < 32; i += 2) sum += (b6[14 + 8 + i] << 8) | b6[14 + 9 + i];
    sum += static_cast<std::uint32_t>(ulen) + 17;
    for (std::size_t i = udp; i < b6.size(); i += 2) sum += (b6[i] << 8) | (i + 1 < b6.size() ? b6[i + 1] : 0);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    CHECK(sum == 0xFFFF);
}

TEST_CASE("headers that disagree with the opcode can be built on purpose") {
    auto s = sample_catalog()[0].spec;  // WRITE
    s.bth.opcode = static_cast<std::uint8_t>(opcode::send);  // SEND opcode, RETH present
    auto d = decode_ethernet(build(s));
    REQUIRE(d.ok());  // structurally it is a SEND whose SETH reads RETH's first 8 bytes
    CHECK(d.f.has(has_seth));
    CHECK(d.f.seth.recv_idx == static_cast<std::uint32_t>(s.reth->va >> 32));
}

TEST_CASE("payload_view builds the same bytes as an owned payload") {
    auto s = sample_catalog()[1].spec;  // WRITE_IMM, 61 bytes: exercises the pad too
    const auto owned = build(s);
    const core::byte_buffer data = s.payload;
    s.payload.clear();
    s.payload_view = data;
    CHECK(build(s) == owned);
}

TEST_CASE("build_into overwrites a reused buffer: leftover bytes never show through") {
    core::rng r(11);
    // A buffer that held a large frame, then a small one, then a large one
    // again: every result must equal a build into a fresh vector.
    core::byte_buffer reused(9000, 0xEE);
    for (int i = 0; i < 300; ++i) {
        const opcode op = k_all_opcodes[r.next() % std::size(k_all_opcodes)];
        frame_spec s = random_spec(r, op, r.chance(0.5) ? 4 : 6);
        s.with_ethernet = r.chance(0.8);
        build_into(s, reused);
        const core::byte_buffer fresh = build(s);
        REQUIRE(reused == fresh);
        // Sized once to the exact length: no growth and no trimming.
        core::byte_buffer empty;
        build_into(s, empty);
        REQUIRE(empty.capacity() == empty.size());
    }
}

// A described payload (frame_spec::symbolic_payload): the frame stops after the
// op headers, every length and the ICRC are those of the frame with that many
// zero bytes; decoded only when the decoder is told, truncated otherwise.
TEST_CASE("a symbolic payload: lengths and ICRC of the zero-filled frame, no bytes carried") {
    core::rng r(21);
    for (auto op : {opcode::write, opcode::write_imm, opcode::send, opcode::send_imm}) {
        for (std::uint32_t n : {4u, 256u, 4096u, 9000u}) {
            INFO(opcode_name(static_cast<std::uint8_t>(op)) << " " << n << " bytes");
            auto real = random_spec(r, op, 4);
            real.payload.assign(n, 0);
            real.payload_view = {};
            auto sym = real;
            sym.payload.clear();
            sym.symbolic_payload = n;
            const auto full = build(real), small = build(sym);
            REQUIRE(small.size() + n == full.size());
            // Everything up to the payload, and the ICRC, are the same bytes.
            CHECK(std::equal(small.begin(), small.end() - 4, full.begin()));
            CHECK(std::equal(small.end() - 4, small.end(), full.end() - 4));
            auto d = decode_ethernet(small, {.symbolic_payload = true});
            REQUIRE(d.ok());
            CHECK(d.f.icrc_ok());
            CHECK(d.f.payload.empty());
            CHECK(d.f.symbolic_payload == n);
            CHECK(d.f.payload_size() == n);
            CHECK(build(to_spec(d.f)) == small);  // round trip, as for every frame
            auto dr = decode_ethernet(full, {.symbolic_payload = true});  // real frames still decode as before
            REQUIRE(dr.ok());
            CHECK(dr.f.symbolic_payload == 0);
            CHECK(dr.f.payload_size() == n);
            auto plain = decode_ethernet(small);
            REQUIRE_FALSE(plain.ok());
            CHECK(plain.dropped->reason == drop_reason::truncated);
        }
    }
}

TEST_CASE("a symbolic payload: only data packets, whole multiples of 4, no pad") {
    // An ACK that claims 8 more bytes than it has is truncated, told or not.
    auto ack = build(ack_spec({}, 100));
    auto a = ack;  // IPv4 total length at 16..17
    const std::uint16_t total = static_cast<std::uint16_t>((a[16] << 8 | a[17]) + 8);
    a[16] = static_cast<std::uint8_t>(total >> 8);
    a[17] = static_cast<std::uint8_t>(total);
    const std::uint16_t udp_len = static_cast<std::uint16_t>((a[38] << 8 | a[39]) + 8);  // UDP length at 38..39
    a[38] = static_cast<std::uint8_t>(udp_len >> 8);
    a[39] = static_cast<std::uint8_t>(udp_len);
    a[24] = a[25] = 0;  // header checksum recomputed below
    const auto ck = internet_checksum(core::bytes_view(a).subspan(14, 20));
    a[24] = static_cast<std::uint8_t>(ck >> 8);
    a[25] = static_cast<std::uint8_t>(ck);
    auto d = decode_ethernet(a, {.verify_icrc = false, .symbolic_payload = true});
    REQUIRE_FALSE(d.ok());
    CHECK(d.dropped->reason == drop_reason::truncated);
    // A data frame cut by 3 bytes is not a described payload.
    auto s = data_spec(opcode::write, {}, core::byte_buffer(64, 1));
    auto f = build(s);
    f.erase(f.end() - 7, f.end() - 4);
    auto c = decode_ethernet(f, {.symbolic_payload = true});
    REQUIRE_FALSE(c.ok());
    CHECK(c.dropped->reason == drop_reason::truncated);
}
