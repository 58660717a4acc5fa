// CRC-32 (IEEE 802.3 / zlib: reflected 0x04C11DB7, init and final XOR all ones)
// with zlib's chaining convention: crc32_update(crc32_update(0, a), b) is the CRC
// of a||b. The backend was chosen by measurement (docs/performance.md); the
// alternatives stay callable so the benchmark and tests can compare them.
#pragma once

#include <cstdint>

#include "core/bytes.h"

namespace mrct::wire {

std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data);

// Individual backends, for bench/ and the backend-agreement test.
std::uint32_t crc32_zlib(std::uint32_t crc, core::bytes_view data);
std::uint32_t crc32_isal(std::uint32_t crc, core::bytes_view data);
const char* crc32_backend_name();

}  // namespace mrct::wire
