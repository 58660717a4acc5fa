#include "wire/rnr_timer.h"

#include <array>

namespace mrct::wire {

namespace {
// In units of 10 µs, index = TimerCode (spec model §4, IB RNR NAK timer field).
constexpr std::array<std::uint32_t, k_rnr_timer_codes> k_table_10us = {
    65536, 1,    2,    3,    4,    6,    8,    12,   16,   24,    32,    48,    64,    96,    128,   192,
    256,   384,  512,  768,  1024, 1536, 2048, 3072, 4096, 6144,  8192,  12288, 16384, 24576, 32768, 49152,
};
}  // namespace

std::chrono::nanoseconds rnr_timer_duration(std::uint8_t code) {
    return std::chrono::nanoseconds{std::int64_t{k_table_10us[code & 0x1F]} * 10'000};
}

std::uint8_t rnr_timer_code_at_least(std::chrono::nanoseconds wanted) {
    // Codes 1..31 are increasing; code 0 is the largest of all.
    for (unsigned c = 1; c < k_rnr_timer_codes; ++c) {
        if (rnr_timer_duration(static_cast<std::uint8_t>(c)) >= wanted) return static_cast<std::uint8_t>(c);
    }
    return 0;
}

}  // namespace mrct::wire
