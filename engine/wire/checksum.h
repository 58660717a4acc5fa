// Internet checksum (RFC 1071): IPv4 header checksum, UDP checksum.
#pragma once

#include <cstdint>

#include "core/bytes.h"

namespace mrct::wire {

// One's-complement sum of 16-bit big-endian words (odd tail padded with zero),
// folded and inverted; `initial` carries a pseudo-header sum.
std::uint16_t internet_checksum(core::bytes_view data, std::uint32_t initial = 0);

}  // namespace mrct::wire
