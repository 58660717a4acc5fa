// MetaRoCE header values (spec model §2-4). Plain structs: every field of the
// wire format, reserved bits included, so that tests can see and set them.
// Fields are named as in the spec model, snake_case.
#pragma once

#include <array>
#include <cstdint>

#include "wire/sack.h"

namespace mrct::wire {

using mac_addr = std::array<std::uint8_t, 6>;
using ipv4_addr = std::array<std::uint8_t, 4>;
using ipv6_addr = std::array<std::uint8_t, 16>;

struct vlan_tag {
    std::uint8_t pcp = 0;  // 3 bits
    bool dei = false;
    std::uint16_t vid = 0;  // 12 bits
    bool operator==(const vlan_tag&) const = default;
};

struct eth_header {
    mac_addr dst{};
    mac_addr src{};
    bool has_vlan = false;
    vlan_tag vlan{};
    std::uint16_t ethertype = 0;  // of the payload (after the VLAN tag, if any)
    bool operator==(const eth_header&) const = default;
};

struct ipv4_header {
    std::uint8_t ihl = 5;  // 32-bit words
    std::uint8_t dscp = 0;
    std::uint8_t ecn = 0;
    std::uint16_t total_length = 0;
    std::uint16_t identification = 0;
    bool flag_reserved = false;
    bool df = false;
    bool mf = false;
    std::uint16_t frag_offset = 0;
    std::uint8_t ttl = 64;
    std::uint8_t protocol = 17;
    std::uint16_t checksum = 0;
    ipv4_addr src{};
    ipv4_addr dst{};
    bool operator==(const ipv4_header&) const = default;
};

struct ipv6_header {
    std::uint8_t dscp = 0;
    std::uint8_t ecn = 0;
    std::uint32_t flow_label = 0;  // 20 bits
    std::uint16_t payload_length = 0;
    std::uint8_t next_header = 17;
    std::uint8_t hop_limit = 64;
    ipv6_addr src{};
    ipv6_addr dst{};
    bool operator==(const ipv6_header&) const = default;
};

// IP ECN codepoints.
inline constexpr std::uint8_t k_ecn_not_ect = 0;
inline constexpr std::uint8_t k_ecn_ect1 = 1;
inline constexpr std::uint8_t k_ecn_ect0 = 2;
inline constexpr std::uint8_t k_ecn_ce = 3;

struct udp_header {
    std::uint16_t sport = 0;
    std::uint16_t dport = 0;
    std::uint16_t length = 0;
    std::uint16_t checksum = 0;
    bool operator==(const udp_header&) const = default;
};

struct bth {
    std::uint8_t opcode = 0;
    bool se = false;
    bool m = false;
    std::uint8_t pad_cnt = 0;  // 2 bits
    std::uint8_t tver = 0;     // 4 bits
    std::uint16_t p_key = 0xFFFF;
    bool fecn = false;
    bool becn = false;
    std::uint8_t resv6 = 0;     // 6 bits
    std::uint32_t dest_qp = 0;  // 24 bits
    bool ack_req = false;
    std::uint8_t resv7 = 0;  // 7 bits
    std::uint32_t psn = 0;   // 24 bits
    bool operator==(const bth&) const = default;
};

struct mrh {
    std::uint8_t ver = 1;         // 4 bits
    std::uint8_t path_epoch = 0;  // 4 bits
    std::uint8_t flags = 0;       // SOM, EOM, RETX, RNR_RESEND, 4 reserved
    std::uint8_t path_id = 0;
    std::uint8_t attempt = 0;  // 4 bits
    std::uint8_t resv = 0;     // 4 bits after Attempt
    std::uint16_t stream_id = 0;
    std::uint16_t tag = 0;
    std::uint32_t stream_seq = 0;
    std::uint32_t msg_offset = 0;
    bool operator==(const mrh&) const = default;
};

struct reth {
    std::uint64_t va = 0;
    std::uint32_t r_key = 0;
    std::uint32_t dma_len = 0;
    bool operator==(const reth&) const = default;
};

struct seth {
    std::uint32_t recv_idx = 0;
    std::uint32_t msg_len = 0;
    bool operator==(const seth&) const = default;
};

// A 32-bit field holding a 24-bit PPSN: the upper 8 bits are reserved (§2).
struct ppsn32 {
    std::uint32_t raw = 0;
    std::uint32_t ppsn() const { return raw & 0xFFFFFF; }
    std::uint8_t resv() const { return static_cast<std::uint8_t>(raw >> 24); }
    static ppsn32 of(std::uint32_t ppsn, std::uint8_t resv = 0) {
        return {(std::uint32_t{resv} << 24) | (ppsn & 0xFFFFFF)};
    }
    bool operator==(const ppsn32&) const = default;
};

struct ackh {
    std::uint8_t ver = 1;
    std::uint8_t path_epoch = 0;
    std::uint8_t flags = 0;  // bit7 ECE
    std::uint8_t path_id = 0;
    std::uint8_t resv = 0;  // the reserved byte after PathID
    ppsn32 trig_ppsn{};
    sack256 sack{};
    std::uint16_t ce_count = 0;
    std::uint16_t grant_rate = 0xFFFF;
    std::uint16_t rnr_count = 0;
    std::uint16_t resv2 = 0;  // the trailing reserved 16 bits
    bool ece() const { return flags & 0x80; }
    bool operator==(const ackh&) const = default;
};

struct nakh {
    std::uint8_t ver = 1;
    std::uint8_t epoch = 0;
    std::uint8_t code = 0;
    std::uint8_t path_id = 0;
    std::uint8_t resv = 0;
    ppsn32 nak_ppsn{};
    std::uint16_t stream_id = 0;
    std::uint16_t tag = 0;
    std::uint32_t stream_seq = 0;
    bool operator==(const nakh&) const = default;
};

struct rnrh {
    std::uint8_t ver = 1;
    std::uint8_t epoch = 0;
    std::uint8_t timer_code = 0;  // 5 bits
    std::uint8_t resv_timer = 0;  // 3 bits after TimerCode
    std::uint8_t path_id = 0;
    std::uint8_t attempt = 0;       // 4 bits
    std::uint8_t resv_attempt = 0;  // 4 bits after Attempt
    ppsn32 ppsn{};
    std::uint16_t stream_id = 0;
    std::uint16_t tag = 0;
    std::uint32_t stream_seq = 0;
    std::uint16_t rnr_seq = 0;
    std::uint16_t resv = 0;  // the trailing reserved 16 bits
    bool operator==(const rnrh&) const = default;
};

struct ctrlh {
    std::uint8_t ver = 1;
    std::uint8_t resv = 0;  // 4 bits
    std::uint8_t type = 0;
    std::uint16_t tlv_length = 0;  // bytes of TLVs, pad excluded
    bool operator==(const ctrlh&) const = default;
};

}  // namespace mrct::wire
