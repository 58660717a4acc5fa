// CRC-32 (IEEE 802.3 / zlib: reflected 0x04C11DB7, init and final XOR all ones)
// with zlib's chaining convention: crc32_update(crc32_update(0, a), b) is the CRC
// of a||b. The backend was chosen by measurement (docs/performance.md); the
// alternatives stay callable so the benchmark and tests can compare them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bytes.h"

namespace mrct::wire {

std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data);

// crc32_update(crc, n zero bytes), without reading any: the linear map of
// appending n zeros, as four byte tables for the first 16 lengths a thread
// meets, else zlib's crc32_combine_op (cached per length, per thread). What a
// symbolic payload (frame_spec::symbolic_payload) costs in place of the CRC
// over its bytes.
std::uint32_t crc32_zeros(std::uint32_t crc, std::size_t n);

// How the CRC of a stream changes when bit `bit` (0 = least significant) of
// the byte `distance` bytes from the stream's end (1 = the last byte) is
// flipped: CRC-32 is linear, so the CRC of the flipped stream is the old CRC
// XOR this, whatever the stream's other bytes. A flip in a payload that is
// described, not carried, is applied to the frame's ICRC this way.
std::uint32_t crc32_flip_delta(std::size_t distance, unsigned bit);

// Individual backends, for bench/ and the backend-agreement test.
std::uint32_t crc32_zlib(std::uint32_t crc, core::bytes_view data);
std::uint32_t crc32_isal(std::uint32_t crc, core::bytes_view data);
const char* crc32_backend_name();

}  // namespace mrct::wire
