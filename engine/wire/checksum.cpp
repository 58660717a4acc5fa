#include "wire/checksum.h"

namespace mrct::wire {

std::uint16_t internet_checksum(core::bytes_view data, std::uint32_t sum) {
    for (std::size_t i = 0; i + 1 < data.size(); i += 2) sum += (data[i] << 8) | data[i + 1];
    if (data.size() & 1) sum += data.back() << 8;
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

}  // namespace mrct::wire
