// CTRL TLVs (§4): typed reading with the model's rules, and TLV construction.
//
// Reading: unknown TLV types are skipped; for a repeated TLV the first wins; a
// known TLV with the wrong length makes the whole CTRL invalid (the endpoint
// ignores and counts it; a CONNECT gets REJECT reason 3). Value ranges (e.g.
// NUM_PATHS 1..256) are not length faults and are left to the endpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/bytes.h"
#include "wire/protocol.h"

namespace mrct::wire {

struct tlv_spec {
    std::uint8_t type = 0;
    core::byte_buffer value;
    std::optional<std::uint16_t> length;  // override the computed Length field
};

struct ctrl_fields {
    std::optional<std::uint8_t> version_major, version_minor;
    std::optional<std::uint16_t> num_paths;
    std::optional<std::uint32_t> src_conn_id;       // 24-bit ID (upper byte reserved)
    std::optional<std::uint16_t> mtu;
    std::optional<std::vector<std::uint32_t>> initial_ppsn;  // 24-bit each, path 0 first
    std::optional<std::uint8_t> reject_reason;
    std::optional<std::uint16_t> rnr_count;
    std::optional<std::uint8_t> path_id;
    std::optional<std::uint32_t> nonce;
    std::vector<std::uint8_t> unknown_types;  // skipped, in order
    std::optional<std::uint8_t> bad_length_type;  // first known TLV with a wrong length
    bool valid() const { return !bad_length_type; }
};

// The expected length of a known TLV's value (INITIAL_PPSN: any nonzero
// multiple of 4), or nullopt for unknown types.
bool tlv_length_ok(std::uint8_t type, std::size_t len);
bool is_known_tlv(std::uint8_t type);

ctrl_fields read_ctrl_tlvs(core::bytes_view area);

namespace tlv {
tlv_spec version(std::uint8_t major = 1, std::uint8_t minor = 2);
tlv_spec num_paths(std::uint16_t n);
tlv_spec src_conn_id(std::uint32_t id);
tlv_spec mtu(std::uint16_t mtu);
tlv_spec initial_ppsn(const std::vector<std::uint32_t>& ppsns);
tlv_spec reject_reason(std::uint8_t reason);
tlv_spec rnr_count(std::uint16_t count);
tlv_spec path_id(std::uint8_t id);
tlv_spec nonce(std::uint32_t nonce);
}  // namespace tlv

}  // namespace mrct::wire
