#include "wire/checksum.h"

#include <bit>
#include <cstring>

namespace mrct::wire {

namespace {
std::uint16_t fold_invert(std::uint64_t sum) {
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}
}  // namespace

std::uint16_t internet_checksum(core::bytes_view data, std::uint32_t initial) {
    if constexpr (std::endian::native == std::endian::little) {
        // RFC 1071 §2(B): the one's-complement sum does not depend on byte
        // order, so the words are summed as the machine loads them, 32 bits
        // at a time into a 64-bit accumulator, and the folded sum is swapped
        // back once. (Word by word this was 100 instructions per IPv4 header,
        // twice per simulated frame.)
        const std::uint8_t* p = data.data();
        std::size_t n = data.size();
        std::uint64_t acc = 0;
        for (; n >= 8; p += 8, n -= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            acc += (w & 0xFFFFFFFFu) + (w >> 32);
        }
        if (n >= 4) {
            std::uint32_t w;
            std::memcpy(&w, p, 4);
            acc += w;
            p += 4;
            n -= 4;
        }
        if (n >= 2) {
            std::uint16_t w;
            std::memcpy(&w, p, 2);
            acc += w;
            p += 2;
            n -= 2;
        }
        if (n) acc += *p;  // the odd tail byte, zero-padded: the low byte once swapped
        while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
        return fold_invert(std::uint64_t{__builtin_bswap16(static_cast<std::uint16_t>(acc))} + initial);
    } else {
        std::uint64_t sum = initial;
        for (std::size_t i = 0; i + 1 < data.size(); i += 2) sum += (data[i] << 8) | data[i + 1];
        if (data.size() & 1) sum += data.back() << 8;
        return fold_invert(sum);
    }
}

}  // namespace mrct::wire
