#include "wire/icrc.h"

#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "wire/crc32.h"
#include "wire/protocol.h"

namespace mrct::wire {

namespace {
constexpr std::size_t k_max_masked = 8 + 60 + k_udp_len + k_bth_len;

// Copies the 0xFF prefix and IP/UDP/BTH headers into `buf` with the variant
// fields set to all ones; returns the number of bytes written.
std::size_t masked_headers(core::bytes_view src, unsigned ip_version, std::size_t ip_len,
                           std::array<std::uint8_t, k_max_masked>& buf) {
    std::memset(buf.data(), 0xFF, 8);
    const std::size_t hdr_len = ip_len + k_udp_len + k_bth_len;
    std::memcpy(buf.data() + 8, src.data(), hdr_len);
    std::uint8_t* ip = buf.data() + 8;
    if (ip_version == 4) {
        ip[1] = 0xFF;                 // TOS (DSCP+ECN)
        ip[8] = 0xFF;                 // TTL
        ip[10] = ip[11] = 0xFF;       // header checksum
    } else {
        ip[0] |= 0x0F;                // traffic class high nibble
        ip[1] = ip[2] = ip[3] = 0xFF; // traffic class low nibble + flow label
        ip[7] = 0xFF;                 // hop limit
    }
    std::uint8_t* udp = ip + ip_len;
    udp[6] = udp[7] = 0xFF;  // UDP checksum
    std::uint8_t* bth = udp + k_udp_len;
    bth[4] = 0xFF;  // FECN, BECN, Resv6
    return 8 + hdr_len;
}
#if defined(__SSE2__)
// Fast path. The masked header is built in 16-byte registers and stored with
// 16-byte stores at the offsets where the CRC routine loads it again: byte
// stores followed by wide loads stall store-to-load forwarding, which cost more
// than the CRC itself for small packets (docs/performance.md).
//
// The stream is 0xFF*8 followed by the packet from the IP header on; chunk j
// holds stream bytes [16j, 16j+16). The variant fields are ORed with ones.
struct mask_table {
    alignas(16) std::array<std::uint8_t, 96> m{};
    std::size_t chunks = 0;
};

constexpr mask_table make_masks(unsigned ip_version) {
    mask_table t;
    const std::size_t ip_len = ip_version == 4 ? 20 : 40;
    const std::size_t stream = 8 + ip_len + k_udp_len + k_bth_len;
    t.chunks = (stream + 15) / 16;
    for (std::size_t i = 0; i < 8; ++i) t.m[i] = 0xFF;
    auto set = [&](std::size_t ip_off, std::uint8_t v) { t.m[8 + ip_off] |= v; };
    if (ip_version == 4) {
        set(1, 0xFF);
        set(8, 0xFF);
        set(10, 0xFF);
        set(11, 0xFF);
    } else {
        set(0, 0x0F);
        set(1, 0xFF);
        set(2, 0xFF);
        set(3, 0xFF);
        set(7, 0xFF);
    }
    set(ip_len + 6, 0xFF);
    set(ip_len + 7, 0xFF);
    set(ip_len + k_udp_len + 4, 0xFF);
    return t;
}
constexpr mask_table k_masks_v4 = make_masks(4);
constexpr mask_table k_masks_v6 = make_masks(6);

// Returns the CRC over the first 16*chunks stream bytes, masked, or nullopt if
// the packet is too short for whole chunks (the caller then takes the byte path).
std::optional<std::uint32_t> masked_prefix_crc(core::bytes_view src, const mask_table& t, std::size_t& consumed) {
    const std::size_t bytes = t.chunks * 16 - 8;  // packet bytes covered by the chunks
    if (src.size() < bytes) return std::nullopt;
    alignas(16) std::uint8_t out[96];
    const auto* m = reinterpret_cast<const __m128i*>(t.m.data());
    const std::uint8_t* p = src.data();
    __m128i c0 = _mm_slli_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), 8);
    _mm_store_si128(reinterpret_cast<__m128i*>(out), _mm_or_si128(c0, _mm_load_si128(m)));
    for (std::size_t j = 1; j < t.chunks; ++j) {
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j - 8));
        _mm_store_si128(reinterpret_cast<__m128i*>(out + 16 * j), _mm_or_si128(c, _mm_load_si128(m + j)));
    }
    consumed = bytes;
    return crc32_update(0, core::bytes_view(out, t.chunks * 16));
}
#endif

}  // namespace

std::optional<std::uint32_t> icrc_compute(core::bytes_view ip_to_icrc, unsigned ip_version,
                                          std::size_t ip_header_len) {
    if (ip_version != 4 && ip_version != 6) return std::nullopt;
    if (ip_version == 4 && (ip_header_len < 20 || ip_header_len > 60)) return std::nullopt;
    if (ip_version == 6 && ip_header_len != 40) return std::nullopt;
    const std::size_t hdr_len = ip_header_len + k_udp_len + k_bth_len;
    if (ip_to_icrc.size() < hdr_len) return std::nullopt;
#if defined(__SSE2__)
    if (ip_header_len == 20 || ip_version == 6) {
        std::size_t used = 0;
        if (auto c = masked_prefix_crc(ip_to_icrc, ip_version == 4 ? k_masks_v4 : k_masks_v6, used))
            return crc32_update(*c, ip_to_icrc.subspan(used));
    }
#endif
    std::array<std::uint8_t, k_max_masked> buf;
    std::size_t n = masked_headers(ip_to_icrc, ip_version, ip_header_len, buf);
    std::uint32_t crc = crc32_update(0, core::bytes_view(buf.data(), n));
    return crc32_update(crc, ip_to_icrc.subspan(hdr_len));
}

std::optional<std::uint32_t> icrc_compute_udp(const udp_endpoints& ep, core::bytes_view payload) {
    if (payload.size() < k_bth_len) return std::nullopt;
    std::array<std::uint8_t, 40 + k_udp_len + k_bth_len> hdr{};
    const std::size_t udp_len = k_udp_len + payload.size() + k_icrc_len;
    std::size_t ip_len;
    if (ep.ip_version == 4) {
        ip_len = 20;
        const std::size_t total = ip_len + udp_len;
        hdr[0] = 0x45;
        hdr[2] = static_cast<std::uint8_t>(total >> 8);
        hdr[3] = static_cast<std::uint8_t>(total);
        hdr[6] = 0x40;  // DF, Identification 0 (bytes 4-5 stay zero)
        hdr[9] = k_ip_proto_udp;
        std::memcpy(&hdr[12], ep.src4.data(), 4);
        std::memcpy(&hdr[16], ep.dst4.data(), 4);
    } else if (ep.ip_version == 6) {
        ip_len = 40;
        hdr[0] = 0x60;
        hdr[4] = static_cast<std::uint8_t>(udp_len >> 8);
        hdr[5] = static_cast<std::uint8_t>(udp_len);
        hdr[6] = k_ip_proto_udp;
        std::memcpy(&hdr[8], ep.src6.data(), 16);
        std::memcpy(&hdr[24], ep.dst6.data(), 16);
    } else {
        return std::nullopt;
    }
    std::uint8_t* udp = &hdr[ip_len];
    udp[0] = static_cast<std::uint8_t>(ep.sport >> 8);
    udp[1] = static_cast<std::uint8_t>(ep.sport);
    udp[2] = static_cast<std::uint8_t>(ep.dport >> 8);
    udp[3] = static_cast<std::uint8_t>(ep.dport);
    udp[4] = static_cast<std::uint8_t>(udp_len >> 8);
    udp[5] = static_cast<std::uint8_t>(udp_len);
    std::memcpy(udp + k_udp_len, payload.data(), k_bth_len);
    std::array<std::uint8_t, k_max_masked> buf;
    std::size_t n = masked_headers(core::bytes_view(hdr.data(), ip_len + k_udp_len + k_bth_len), ep.ip_version,
                                   ip_len, buf);
    std::uint32_t crc = crc32_update(0, core::bytes_view(buf.data(), n));
    return crc32_update(crc, payload.subspan(k_bth_len));
}

}  // namespace mrct::wire
