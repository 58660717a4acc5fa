// The RNR NAK timer table (InfiniBand's, §4 RNRH), both ways.
#pragma once

#include <chrono>
#include <cstdint>

namespace mrct::wire {

inline constexpr unsigned k_rnr_timer_codes = 32;

// The pause a TimerCode (5 bits; higher bits ignored) stands for.
std::chrono::nanoseconds rnr_timer_duration(std::uint8_t code);
// The code of the shortest table entry at or above `wanted`; code 0 (655.36 ms,
// the longest) when nothing shorter covers it.
std::uint8_t rnr_timer_code_at_least(std::chrono::nanoseconds wanted);

}  // namespace mrct::wire
