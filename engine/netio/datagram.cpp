#include <cstdio>

#include "netio/port.h"
#include "wire/checksum.h"

namespace mrct::netio {

core::byte_buffer frame_from_datagram(const wire::ipv4_addr& src, std::uint16_t sport, const wire::ipv4_addr& dst,
                                      std::uint16_t dport, std::uint8_t tos, std::uint8_t ttl, core::bytes_view payload) {
    core::byte_buffer f(14 + 20 + 8 + payload.size());
    std::uint8_t* p = f.data();
    // Ethernet: locally administered placeholder MACs (UDP sockets do not show them).
    const std::uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0xFE}, smac[6] = {0x02, 0, 0, 0, 0, 0xFF};
    std::copy(dmac, dmac + 6, p);
    std::copy(smac, smac + 6, p + 6);
    p[12] = 0x08;
    p[13] = 0x00;
    std::uint8_t* ip = p + 14;
    const std::size_t total = 20 + 8 + payload.size();
    ip[0] = 0x45;
    ip[1] = tos;
    ip[2] = static_cast<std::uint8_t>(total >> 8);
    ip[3] = static_cast<std::uint8_t>(total);
    ip[4] = ip[5] = 0;     // Identification 0
    ip[6] = 0x40;          // DF
    ip[7] = 0;
    ip[8] = ttl;
    ip[9] = 17;
    ip[10] = ip[11] = 0;
    std::copy(src.begin(), src.end(), ip + 12);
    std::copy(dst.begin(), dst.end(), ip + 16);
    const auto sum = wire::internet_checksum(core::bytes_view(ip, 20));
    ip[10] = static_cast<std::uint8_t>(sum >> 8);
    ip[11] = static_cast<std::uint8_t>(sum);
    std::uint8_t* u = ip + 20;
    const std::size_t ulen = 8 + payload.size();
    u[0] = static_cast<std::uint8_t>(sport >> 8);
    u[1] = static_cast<std::uint8_t>(sport);
    u[2] = static_cast<std::uint8_t>(dport >> 8);
    u[3] = static_cast<std::uint8_t>(dport);
    u[4] = static_cast<std::uint8_t>(ulen >> 8);
    u[5] = static_cast<std::uint8_t>(ulen);
    u[6] = u[7] = 0;
    std::copy(payload.begin(), payload.end(), u + 8);
    return f;
}

core::result<datagram> datagram_of(core::bytes_view f) {
    auto be16 = [&](std::size_t i) { return static_cast<std::uint16_t>((f[i] << 8) | f[i + 1]); };
    if (f.size() < 14 + 20 + 8) return core::error{"frame too short for Ethernet, IPv4 and UDP headers"};
    if (be16(12) != 0x0800) return core::error{"not an untagged IPv4 frame"};
    const std::uint8_t* ip = f.data() + 14;
    if ((ip[0] >> 4) != 4) return core::error{"IP version is not 4"};
    if ((ip[0] & 15) != 5) return core::error{"IPv4 header with options"};
    if (ip[9] != 17) return core::error{"not UDP"};
    const std::size_t total = be16(16);
    if (total != f.size() - 14) return core::error{"IPv4 total length disagrees with the frame"};
    if (ip[4] || ip[5]) return core::error{"IPv4 Identification is not 0"};
    if ((ip[6] & 0xE0) != 0x40 || (ip[6] & 0x1F) || ip[7]) return core::error{"IPv4 flags are not DF alone, or fragmented"};
    if (wire::internet_checksum(core::bytes_view(ip, 20)) != 0) return core::error{"bad IPv4 header checksum"};
    const std::size_t ulen = be16(14 + 20 + 4);
    if (ulen != total - 20) return core::error{"UDP length disagrees with the IP packet"};
    if (be16(14 + 20 + 6) != 0) return core::error{"UDP checksum is not 0 (the kernel computes its own)"};
    datagram d;
    std::copy(ip + 12, ip + 16, d.src.begin());
    std::copy(ip + 16, ip + 20, d.dst.begin());
    d.tos = ip[1];
    d.sport = be16(14 + 20);
    d.dport = be16(14 + 20 + 2);
    d.payload = f.subspan(14 + 20 + 8);
    return d;
}

core::status check_raw_frame(core::bytes_view frame, const wire::ipv4_addr& local, const wire::ipv4_addr& remote) {
    if (frame.size() < 14 + 20) return core::error{"frame too short to hold its IPv4 addresses"};
    if (frame[12] != 0x08 || frame[13] != 0x00) return core::error{"only untagged IPv4 frames are sent"};
    wire::ipv4_addr src{}, dst{};
    std::copy(frame.begin() + 26, frame.begin() + 30, src.begin());
    std::copy(frame.begin() + 30, frame.begin() + 34, dst.begin());
    if (src != local) return core::error{"frame source " + ipv4_text(src) + " is not this port's address"};
    if (dst != remote) return core::error{"frame destination " + ipv4_text(dst) + " is not the DUT's address"};
    return core::ok_status();
}

core::result<wire::ipv4_addr> parse_ipv4(const std::string& s) {
    wire::ipv4_addr a{};
    unsigned v[4];
    char tail;
    if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &v[0], &v[1], &v[2], &v[3], &tail) != 4)
        return core::error{"'" + s + "' is not an IPv4 address"};
    for (int i = 0; i < 4; ++i) {
        if (v[i] > 255) return core::error{"'" + s + "' is not an IPv4 address"};
        a[i] = static_cast<std::uint8_t>(v[i]);
    }
    return a;
}

std::string ipv4_text(const wire::ipv4_addr& a) {
    return std::to_string(a[0]) + "." + std::to_string(a[1]) + "." + std::to_string(a[2]) + "." + std::to_string(a[3]);
}

}  // namespace mrct::netio
