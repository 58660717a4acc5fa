#include <arpa/inet.h>

#include <cstdio>
#include <ctime>

#include "netio/port.h"
#include "wire/checksum.h"

namespace mrct::netio {

namespace {

void put16(std::uint8_t* p, std::size_t v) {
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}

// UDP checksum over IPv6 (RFC 8200 §8.1): pseudo-header + UDP header + payload.
std::uint16_t udp6_checksum(const wire::ipv6_addr& src, const wire::ipv6_addr& dst, core::bytes_view udp) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < 16; i += 2) {
        sum += static_cast<std::uint32_t>((src[i] << 8) | src[i + 1]);
        sum += static_cast<std::uint32_t>((dst[i] << 8) | dst[i + 1]);
    }
    sum += static_cast<std::uint32_t>(udp.size() >> 16) + static_cast<std::uint32_t>(udp.size() & 0xFFFF);
    sum += 17;
    const auto ck = wire::internet_checksum(udp, sum);
    return ck == 0 ? 0xFFFF : ck;
}

}  // namespace

core::byte_buffer frame_from_datagram(const ip_address& src, std::uint16_t sport, const ip_address& dst,
                                      std::uint16_t dport, std::uint8_t tos, std::uint8_t ttl, core::bytes_view payload) {
    const bool v6 = src.version == 6;
    const std::size_t ip_len = v6 ? 40 : 20, ulen = 8 + payload.size();
    core::byte_buffer f(14 + ip_len + ulen);
    std::uint8_t* p = f.data();
    // Ethernet: locally administered placeholder MACs (UDP sockets do not show them).
    const std::uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0xFE}, smac[6] = {0x02, 0, 0, 0, 0, 0xFF};
    std::copy(dmac, dmac + 6, p);
    std::copy(smac, smac + 6, p + 6);
    put16(p + 12, v6 ? 0x86DD : 0x0800);
    std::uint8_t* ip = p + 14;
    std::uint8_t* u = ip + ip_len;
    put16(u, sport);
    put16(u + 2, dport);
    put16(u + 4, ulen);
    u[6] = u[7] = 0;
    std::copy(payload.begin(), payload.end(), u + 8);
    if (v6) {
        ip[0] = static_cast<std::uint8_t>(0x60 | (tos >> 4));
        ip[1] = static_cast<std::uint8_t>((tos & 0x0F) << 4);  // flow label 0
        ip[2] = ip[3] = 0;
        put16(ip + 4, ulen);
        ip[6] = 17;
        ip[7] = ttl;
        std::copy(src.v6.begin(), src.v6.end(), ip + 8);
        std::copy(dst.v6.begin(), dst.v6.end(), ip + 24);
        put16(u + 6, udp6_checksum(src.v6, dst.v6, core::bytes_view(u, ulen)));
        return f;
    }
    ip[0] = 0x45;
    ip[1] = tos;
    put16(ip + 2, 20 + ulen);
    ip[4] = ip[5] = 0;  // Identification 0
    ip[6] = 0x40;       // DF
    ip[7] = 0;
    ip[8] = ttl;
    ip[9] = 17;
    ip[10] = ip[11] = 0;
    std::copy(src.v4.begin(), src.v4.end(), ip + 12);
    std::copy(dst.v4.begin(), dst.v4.end(), ip + 16);
    put16(ip + 10, wire::internet_checksum(core::bytes_view(ip, 20)));
    return f;
}

std::optional<std::pair<ip_address, ip_address>> frame_addresses(core::bytes_view f) {
    if (f.size() < 14) return std::nullopt;
    const unsigned type = static_cast<unsigned>((f[12] << 8) | f[13]);
    ip_address s, d;
    if (type == 0x0800 && f.size() >= 14 + 20) {
        std::copy(f.begin() + 26, f.begin() + 30, s.v4.begin());
        std::copy(f.begin() + 30, f.begin() + 34, d.v4.begin());
        return std::pair{s, d};
    }
    if (type == 0x86DD && f.size() >= 14 + 40) {
        s.version = d.version = 6;
        std::copy(f.begin() + 22, f.begin() + 38, s.v6.begin());
        std::copy(f.begin() + 38, f.begin() + 54, d.v6.begin());
        return std::pair{s, d};
    }
    return std::nullopt;
}

core::result<datagram> datagram_of(core::bytes_view f) {
    auto be16 = [&](std::size_t i) { return static_cast<std::size_t>((f[i] << 8) | f[i + 1]); };
    if (f.size() < 14 + 20 + 8) return core::error{"frame too short for Ethernet, IP and UDP headers"};
    const std::uint8_t* ip = f.data() + 14;
    datagram d;
    std::size_t ip_len;
    if (be16(12) == 0x86DD) {
        if (f.size() < 14 + 40 + 8) return core::error{"frame too short for Ethernet, IPv6 and UDP headers"};
        if ((ip[0] >> 4) != 6) return core::error{"IP version is not 6"};
        if (ip[6] != 17) return core::error{"IPv6 next header is not UDP (extension headers are not sent)"};
        if ((ip[1] & 0x0F) || ip[2] || ip[3]) return core::error{"IPv6 flow label is not 0"};
        if (be16(14 + 4) != f.size() - 14 - 40) return core::error{"IPv6 payload length disagrees with the frame"};
        ip_len = 40;
        d.src.version = d.dst.version = 6;
        std::copy(ip + 8, ip + 24, d.src.v6.begin());
        std::copy(ip + 24, ip + 40, d.dst.v6.begin());
        d.tos = static_cast<std::uint8_t>(((ip[0] & 0x0F) << 4) | (ip[1] >> 4));
        const std::size_t ulen = be16(14 + 40 + 4);
        if (ulen != f.size() - 14 - 40) return core::error{"UDP length disagrees with the IPv6 packet"};
        core::byte_buffer udp(f.begin() + 14 + 40, f.end());
        udp[6] = udp[7] = 0;
        if (udp6_checksum(d.src.v6, d.dst.v6, udp) != be16(14 + 40 + 6))
            return core::error{"bad UDP checksum (the kernel computes its own)"};
    } else if (be16(12) == 0x0800) {
        if ((ip[0] >> 4) != 4) return core::error{"IP version is not 4"};
        if ((ip[0] & 15) != 5) return core::error{"IPv4 header with options"};
        if (ip[9] != 17) return core::error{"not UDP"};
        const std::size_t total = be16(16);
        if (total != f.size() - 14) return core::error{"IPv4 total length disagrees with the frame"};
        if (ip[4] || ip[5]) return core::error{"IPv4 Identification is not 0"};
        if ((ip[6] & 0xE0) != 0x40 || (ip[6] & 0x1F) || ip[7]) return core::error{"IPv4 flags are not DF alone, or fragmented"};
        if (wire::internet_checksum(core::bytes_view(ip, 20)) != 0) return core::error{"bad IPv4 header checksum"};
        if (be16(14 + 20 + 4) != total - 20) return core::error{"UDP length disagrees with the IP packet"};
        if (be16(14 + 20 + 6) != 0) return core::error{"UDP checksum is not 0 (the kernel computes its own)"};
        ip_len = 20;
        std::copy(ip + 12, ip + 16, d.src.v4.begin());
        std::copy(ip + 16, ip + 20, d.dst.v4.begin());
        d.tos = ip[1];
    } else {
        return core::error{"not an untagged IPv4 or IPv6 frame"};
    }
    d.sport = static_cast<std::uint16_t>(be16(14 + ip_len));
    d.dport = static_cast<std::uint16_t>(be16(14 + ip_len + 2));
    d.payload = f.subspan(14 + ip_len + 8);
    return d;
}

core::status check_raw_frame(core::bytes_view frame, const ip_address& local, const ip_address& remote,
                             const std::vector<ip_address>& also_local) {
    auto a = frame_addresses(frame);
    if (!a) return core::error{"not an untagged IPv4 or IPv6 frame long enough to hold its addresses"};
    if (a->first != local && std::find(also_local.begin(), also_local.end(), a->first) == also_local.end())
        return core::error{"frame source " + ip_text(a->first) + " is not this port's address"};
    if (a->second != remote) return core::error{"frame destination " + ip_text(a->second) + " is not the DUT's address"};
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

core::nanos wire_age(std::int64_t wire_ns) {
    if (wire_ns <= 0) return core::nanos{0};
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    const std::int64_t age = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - wire_ns;
    return core::nanos{age > 0 ? age : 0};
}

core::result<ip_address> parse_ip(const std::string& s) {
    ip_address a;
    if (s.find(':') == std::string::npos) {
        auto v4 = parse_ipv4(s);
        if (!v4) return v4.err();
        a.v4 = *v4;
        return a;
    }
    a.version = 6;
    if (::inet_pton(AF_INET6, s.c_str(), a.v6.data()) != 1) return core::error{"'" + s + "' is not an IPv6 address"};
    return a;
}

std::string ip_text(const ip_address& a) {
    if (a.version == 4) return ipv4_text(a.v4);
    char buf[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, a.v6.data(), buf, sizeof buf);
    return buf;
}

}  // namespace mrct::netio
