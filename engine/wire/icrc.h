// The RoCEv2 invariant CRC (spec model §2).
//
// CRC-32 over 8 bytes of 0xFF, then the IP header, UDP header, BTH and all that
// follows up to the ICRC, with these taken as all ones: IPv4 TOS, TTL, header
// checksum; IPv6 traffic class, flow label, hop limit; UDP checksum; the BTH byte
// holding FECN/BECN/Resv6. Sent least significant byte first.
#pragma once

#include <cstdint>
#include <optional>

#include "core/bytes.h"
#include "wire/headers.h"

namespace mrct::wire {

// `ip_to_icrc`: from the first byte of the IP header up to (not including) the
// ICRC. `ip_header_len`: 20..60 for IPv4 (with options), 40 for IPv6. Returns
// nullopt if the span is too short to hold IP, UDP and BTH headers.
std::optional<std::uint32_t> icrc_compute(core::bytes_view ip_to_icrc, unsigned ip_version,
                                          std::size_t ip_header_len);

// For endpoints that see only the UDP payload (kernel sockets): the ICRC of the
// packet a conforming sender sends, with the IP header rebuilt as §2 requires
// (IPv4: no options, DF set, Identification 0; IPv6: no extension headers).
// `udp_payload_no_icrc`: BTH up to, not including, the ICRC.
struct udp_endpoints {
    unsigned ip_version = 4;
    ipv4_addr src4{}, dst4{};
    ipv6_addr src6{}, dst6{};
    std::uint16_t sport = 0, dport = 0;
};
std::optional<std::uint32_t> icrc_compute_udp(const udp_endpoints& ep, core::bytes_view udp_payload_no_icrc);

inline std::uint32_t icrc_read(const std::uint8_t* p) {
    return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}
inline void icrc_write(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace mrct::wire
