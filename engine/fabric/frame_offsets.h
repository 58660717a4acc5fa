// Where the IP header starts in an Ethernet frame (at most one 802.1Q tag):
// shared by the stages that rewrite IP fields and the ECMP path selection.
#pragma once

#include <cstdint>
#include <span>

#include "wire/protocol.h"

namespace mrct::fabric {

// Byte offset of the IPv4/IPv6 header, or -1 if the frame is not IP.
inline int ip_offset(std::span<const std::uint8_t> f) {
    if (f.size() < wire::k_eth_len) return -1;
    std::uint16_t type = static_cast<std::uint16_t>((f[12] << 8) | f[13]);
    int off = wire::k_eth_len;
    if (type == wire::k_ethertype_vlan) {
        if (f.size() < wire::k_eth_len + wire::k_vlan_len) return -1;
        type = static_cast<std::uint16_t>((f[16] << 8) | f[17]);
        off += wire::k_vlan_len;
    }
    if (type != wire::k_ethertype_ipv4 && type != wire::k_ethertype_ipv6) return -1;
    return off;
}

}  // namespace mrct::fabric
