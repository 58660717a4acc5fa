// MetaRoCE 1.2 wire constants (spec model §2-4).
//
// Everything a corrected layout or changed default would touch lives here or in
// headers.h: the codec is versioned through k_model_version and these tables.
#pragma once

#include <cstdint>
#include <string_view>

namespace mrct::wire {

inline constexpr std::string_view k_model_version = "metaroce-1.2-model";

inline constexpr std::uint16_t k_udp_port = 4791;
inline constexpr std::uint16_t k_entropy_base = 0xC000;  // data sport = 0xC000 | entropy14
inline constexpr std::uint16_t k_ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t k_ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t k_ethertype_vlan = 0x8100;
inline constexpr std::uint8_t k_ip_proto_udp = 17;
inline constexpr std::uint32_t k_listener_qp = 0xFFFFFF;
inline constexpr std::uint16_t k_default_pkey = 0xFFFF;

inline constexpr std::uint8_t k_bth_tver = 0;   // MR-HDR-1
inline constexpr std::uint8_t k_mr_version = 1;  // MRH/ACKH/NAKH/RNRH/CTRLH Ver, MR-HDR-1
// The VERSION TLV of this model (§4): CONNECT says 1.2; ACCEPT says 1 and the
// smaller of the two minors; a different major is a mismatch.
inline constexpr std::uint8_t k_version_major = 1, k_version_minor = 2;

// Header sizes in bytes.
inline constexpr std::size_t k_eth_len = 14;
inline constexpr std::size_t k_vlan_len = 4;
inline constexpr std::size_t k_ipv4_min_len = 20;
inline constexpr std::size_t k_ipv6_len = 40;
inline constexpr std::size_t k_udp_len = 8;
inline constexpr std::size_t k_bth_len = 12;
inline constexpr std::size_t k_mrh_len = 16;
inline constexpr std::size_t k_reth_len = 16;
inline constexpr std::size_t k_seth_len = 8;
inline constexpr std::size_t k_immdt_len = 4;
inline constexpr std::size_t k_ackh_len = 48;
inline constexpr std::size_t k_nakh_len = 16;
inline constexpr std::size_t k_rnrh_len = 20;
inline constexpr std::size_t k_ctrlh_len = 4;
inline constexpr std::size_t k_tlv_hdr_len = 3;
inline constexpr std::size_t k_icrc_len = 4;

enum class opcode : std::uint8_t {
    write = 0xC0,
    write_imm = 0xC1,
    send = 0xC2,
    send_imm = 0xC3,
    ack = 0xD0,
    nak = 0xD1,
    rnr = 0xD2,
    ctrl = 0xD3,
};

// Every opcode not listed in §2 is reserved (MR-HDR-3).
constexpr bool is_known_opcode(std::uint8_t op) {
    return (op >= 0xC0 && op <= 0xC3) || (op >= 0xD0 && op <= 0xD3);
}
constexpr bool is_data_opcode(std::uint8_t op) { return op >= 0xC0 && op <= 0xC3; }
constexpr bool is_write_opcode(std::uint8_t op) { return op == 0xC0 || op == 0xC1; }
constexpr bool is_send_opcode(std::uint8_t op) { return op == 0xC2 || op == 0xC3; }
constexpr bool is_imm_opcode(std::uint8_t op) { return op == 0xC1 || op == 0xC3; }
std::string_view opcode_name(std::uint8_t op);  // "WRITE", ..., "RESERVED"

// MRH flags (§3).
inline constexpr std::uint8_t k_flag_som = 0x80;
inline constexpr std::uint8_t k_flag_eom = 0x40;
inline constexpr std::uint8_t k_flag_retx = 0x20;
inline constexpr std::uint8_t k_flag_rnr_resend = 0x10;
inline constexpr std::uint8_t k_flag_reserved_mask = 0x0F;
// ACKH flags (§4).
inline constexpr std::uint8_t k_ack_flag_ece = 0x80;
inline constexpr std::uint8_t k_ack_flag_reserved_mask = 0x7F;

enum class nak_code : std::uint8_t {
    invalid_request = 0x01,
    remote_access = 0x02,
    remote_operational = 0x03,
    psn_out_of_window = 0x0B,
    unknown_connection = 0x0E,
    header_mismatch = 0x0F,
    connection_closing = 0x10,
    invalid_path = 0x20,
};
std::string_view nak_code_name(std::uint8_t code);  // "UNKNOWN" if not listed

enum class ctrl_type : std::uint8_t {
    connect = 1,
    accept = 2,
    reject = 3,
    close = 4,
    close_ack = 5,
    probe = 6,
    probe_reply = 7,
    rnr_query = 8,
    rnr_sync = 9,
    path_reset = 10,
    path_reset_ack = 11,
};
std::string_view ctrl_type_name(std::uint8_t type);  // "UNKNOWN" if not listed

enum class tlv_type : std::uint8_t {
    version = 1,
    num_paths = 2,
    src_conn_id = 3,
    mtu = 4,
    initial_ppsn = 5,
    reject_reason = 6,
    rnr_count = 7,
    path_id = 8,
    nonce = 9,
};
std::string_view tlv_type_name(std::uint8_t type);  // "UNKNOWN" if not listed

enum class reject_reason : std::uint8_t { version = 1, resources = 2, parameters = 3 };

// GrantRate units and sentinels (§4 ACKH).
inline constexpr std::uint16_t k_grant_unlimited = 0xFFFF;
inline constexpr std::uint64_t k_grant_unit_bps = 100'000'000;  // 100 Mb/s

}  // namespace mrct::wire
