// Hex formatting and parsing for bytes (reports, JSON, tests).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/bytes.h"

namespace mrct::core {

std::string to_hex(bytes_view data);
// Accepts an even number of hex digits, optional "0x" prefix, ignores spaces and ':'.
std::optional<byte_buffer> from_hex(std::string_view text);

}  // namespace mrct::core
