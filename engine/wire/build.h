// Building frames, with every computed field overridable (STYLE habit 1): a
// conformance tester must be able to send broken packets on purpose.
//
// By default the builder computes: EtherType, IPv4 total length and header
// checksum, IPv6 payload length, UDP length, UDP checksum (0 over IPv4, computed
// over IPv6), BTH PadCnt and the zero pad bytes, CTRLH TLV length, each TLV's
// Length, and the ICRC. Each has an override in frame_spec::overrides.
// Op headers are written when present in the spec, in the canonical order
// MRH, RETH, SETH, ImmDt, ACKH, NAKH, RNRH, CTRLH+TLVs, whatever the opcode, so a
// test can also build a frame whose headers disagree with its opcode.
#pragma once

#include <optional>
#include <vector>

#include "core/bytes.h"
#include "wire/checksum.h"
#include "wire/ctrl.h"
#include "wire/frame.h"
#include "wire/headers.h"

namespace mrct::wire {

struct frame_spec {
    bool with_ethernet = true;
    eth_header eth{};     // ethertype computed unless overridden
    unsigned ip_version = 4;
    ipv4_header ipv4{};   // total_length, checksum computed; ihl from options
    core::byte_buffer ipv4_options;  // multiple of 4 bytes, at most 40
    ipv6_header ipv6{};   // payload_length computed
    udp_header udp{};     // length, checksum computed
    struct bth bth{};     // pad_cnt computed
    std::optional<struct mrh> mrh;
    std::optional<struct reth> reth;
    std::optional<struct seth> seth;
    std::optional<std::uint32_t> immdt;
    std::optional<struct ackh> ackh;
    std::optional<struct nakh> nakh;
    std::optional<struct rnrh> rnrh;
    std::optional<struct ctrlh> ctrlh;  // tlv_length computed
    std::vector<tlv_spec> tlvs;
    core::byte_buffer payload;
    // When set, written instead of `payload` (no copy into the spec); the
    // viewed bytes must outlive build_into().
    core::bytes_view payload_view;
    // A payload described, not carried (large simulations, issue 21): this
    // many zero bytes count in every length field and in the ICRC (computed
    // as if they were there, wire/crc32.h), but the frame stops after the op
    // headers and the ICRC follows them. IPv4 only, a multiple of 4 bytes
    // (no pad), and `payload`/`payload_view` empty. Only a decoder told so
    // (decode_options::symbolic_payload) reads such a frame; any other sees
    // it truncated. The fabric counts it at its full length (packet_pool).
    std::uint32_t symbolic_payload = 0;

    struct overrides {
        std::optional<std::uint16_t> ethertype;
        std::optional<std::uint8_t> ipv4_ihl;
        std::optional<std::uint16_t> ip_total_length;      // IPv4 total length
        std::optional<std::uint16_t> ipv4_checksum;
        std::optional<std::uint16_t> ipv6_payload_length;
        std::optional<std::uint16_t> udp_length;
        std::optional<std::uint16_t> udp_checksum;
        std::optional<std::uint8_t> pad_cnt;
        std::optional<core::byte_buffer> pad_bytes;        // replaces the zero pad
        std::optional<std::uint16_t> ctrl_tlv_length;
        std::optional<std::uint32_t> icrc;
        bool omit_icrc = false;
        core::byte_buffer trailer;                          // after the IP packet
        std::optional<std::size_t> truncate_to;             // cut the finished frame
    } ov;
};

// Builds the frame into `out` (cleared first).
void build_into(const frame_spec& spec, core::byte_buffer& out);
core::byte_buffer build(const frame_spec& spec);

// An IEEE 802.3x PAUSE frame from SRC (MR-CC-5 forbids a MetaRoCE NIC to
// send one): to 01:80:C2:00:00:01, EtherType 0x8808, opcode 1, QUANTA, zero
// padded to 60 bytes (the FCS is the port's).
void pause_frame_into(const mac_addr& src, std::uint16_t quanta, core::byte_buffer& out);

// The spec that builds `f` again: header fields, reserved bits and non-zero
// pad bytes are kept; computed fields are left to the builder. For any frame the
// builder made without overrides, build(to_spec(decode(build(s)))) == build(s).
frame_spec to_spec(const frame& f);

}  // namespace mrct::wire
