// A decoded MetaRoCE frame (a view into the caller's bytes) or why it was dropped.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/bytes.h"
#include "wire/headers.h"

namespace mrct::wire {

enum class layer : std::uint8_t {
    ethernet, vlan, ipv4, ipv6, udp, bth, mrh, reth, seth, immdt, ackh, nakh, rnrh, ctrlh, tlv, payload, icrc,
};
std::string_view layer_name(layer l);

// Why a frame could not be accepted (MR-HDR-2/3: silent drop, counted by reason).
enum class drop_reason : std::uint8_t {
    truncated,              // fewer bytes than the layer needs
    unsupported_ethertype,  // not IPv4/IPv6 (after at most one 802.1Q tag)
    bad_ip_version,         // version nibble disagrees with the EtherType
    bad_header_length,      // IPv4 IHL < 5
    bad_length,             // a length field disagrees with the bytes present
    bad_checksum,           // IPv4 header checksum
    fragmented,             // IPv4 MF or fragment offset set
    not_udp,                // IP protocol / next header is not UDP
    not_roce_port,          // UDP destination port is not 4791
    bad_icrc,               // MR-HDR-2
    bad_transport_version,  // BTH TVer != 0
    reserved_opcode,        // MR-HDR-3
    bad_version,            // MRH/ACKH/NAKH/RNRH/CTRLH Ver != 1 (MR-HDR-3)
    pad_overrun,            // PadCnt larger than the bytes after the op headers
    misaligned,             // payload/TLVs + pad not a multiple of 4 bytes
    tlv_overrun,            // a TLV runs past the TLV area
};
inline constexpr unsigned k_drop_reason_count = 16;
std::string_view drop_reason_name(drop_reason r);
// "02:4d:52:00:00:01": lower-case hex, colon-separated.
std::string mac_text(const mac_addr& m);

// IEEE 802.3 MAC Control (PAUSE, PFC): not MetaRoCE, and a MetaRoCE NIC must
// not send it (MR-CC-5). Such frames carry no VLAN tag.
inline constexpr std::uint16_t k_ethertype_mac_control = 0x8808;
inline bool is_mac_control(core::bytes_view f) {
    return f.size() >= 14 && f[12] == (k_ethertype_mac_control >> 8) && f[13] == (k_ethertype_mac_control & 0xFF);
}
// The Ethernet source address of any frame of at least 14 bytes.
inline mac_addr ethernet_source(core::bytes_view f) {
    mac_addr m{};
    if (f.size() >= 14) std::copy(f.begin() + 6, f.begin() + 12, m.begin());
    return m;
}

struct drop {
    drop_reason reason;
    layer where;
    std::size_t offset;  // byte offset of the layer (or field) where decoding stopped
};

enum layer_bit : std::uint32_t {
    has_eth = 1u << 0, has_ipv4 = 1u << 1, has_ipv6 = 1u << 2, has_udp = 1u << 3, has_bth = 1u << 4,
    has_mrh = 1u << 5, has_reth = 1u << 6, has_seth = 1u << 7, has_immdt = 1u << 8, has_ackh = 1u << 9,
    has_nakh = 1u << 10, has_rnrh = 1u << 11, has_ctrlh = 1u << 12, has_icrc = 1u << 13,
};

struct frame {
    std::uint32_t layers = 0;
    eth_header eth;
    ipv4_header ipv4;
    ipv6_header ipv6;
    udp_header udp;
    struct bth bth;
    struct mrh mrh;
    struct reth reth;
    struct seth seth;
    std::uint32_t immdt = 0;
    struct ackh ackh;
    struct nakh nakh;
    struct rnrh rnrh;
    struct ctrlh ctrlh;
    core::bytes_view ip_options;  // IPv4 options (IHL > 5)
    core::bytes_view tlvs;        // CTRL: the TLV area (ctrlh.tlv_length bytes)
    core::bytes_view payload;     // data: the payload, pad excluded
    std::uint32_t symbolic_payload = 0;  // data: payload bytes described, not carried (then `payload` is empty)
    core::bytes_view pad;         // the PadCnt bytes
    core::bytes_view trailer;     // bytes after the IP packet (Ethernet padding)
    std::uint32_t icrc = 0;           // as carried (value, not wire order)
    std::uint32_t icrc_computed = 0;  // valid if icrc_checked
    bool icrc_checked = false;
    std::size_t ip_offset = 0, udp_offset = 0, bth_offset = 0;

    bool has(std::uint32_t bits) const { return (layers & bits) == bits; }
    unsigned ip_version() const { return has(has_ipv4) ? 4 : has(has_ipv6) ? 6 : 0; }
    bool icrc_ok() const { return icrc_checked && icrc == icrc_computed; }
    // The payload's length, carried or described.
    std::size_t payload_size() const { return payload.size() + symbolic_payload; }
    std::uint8_t ip_ecn() const { return has(has_ipv4) ? ipv4.ecn : ipv6.ecn; }
};

struct decode_result {
    frame f;
    std::optional<drop> dropped;
    bool ok() const { return !dropped.has_value(); }
};

struct decode_options {
    bool verify_icrc = true;
    // Read frames whose data payload is described, not carried
    // (frame_spec::symbolic_payload): an IPv4 packet that claims more bytes
    // than the frame holds, a multiple of 4 more, is a data packet whose
    // payload of that many zero bytes was left out just before the ICRC; its
    // ICRC is checked as if they were there. Without it such a frame is
    // truncated.
    bool symbolic_payload = false;
};

// Ethernet II frame (FCS excluded, as captured), optional 802.1Q tag.
decode_result decode_ethernet(core::bytes_view bytes, const decode_options& opt = {});
// A raw IPv4 or IPv6 packet (version from the first nibble).
decode_result decode_ip(core::bytes_view bytes, const decode_options& opt = {});

// A walk over a CTRL TLV area already validated by the decoder.
struct tlv_view {
    std::uint8_t type;
    std::uint16_t length;
    core::bytes_view value;
};
class tlv_iterator {
public:
    explicit tlv_iterator(core::bytes_view area) : r_(area) {}
    // The next TLV, or nullopt at the end or at a TLV that overruns the area.
    std::optional<tlv_view> next();

private:
    core::byte_reader r_;
};

}  // namespace mrct::wire
