#include "netio/device_clock.h"

#include <algorithm>
#include <cmath>

namespace mrct::netio {

void device_clock::sample(std::uint64_t ticks, std::int64_t before_ns, std::int64_t after_ns) {
    if (after_ns < before_ns) std::swap(before_ns, after_ns);
    const std::int64_t at = before_ns + (after_ns - before_ns) / 2, half = (after_ns - before_ns + 1) / 2;
    if (!have_first_) {
        have_first_ = true;
        first_ticks_ = last_ticks_ = ticks;
        first_host_ = last_host_ = at;
        first_half_window_ = uncertainty_ = half;
        return;
    }
    if (ticks <= last_ticks_ || at <= last_host_) return;  // a clock reset or a read out of order: not used
    last_ticks_ = ticks;
    last_host_ = at;
    if (last_host_ - first_host_ >= k_min_span_ns) {
        rate_ = static_cast<double>(last_host_ - first_host_) / static_cast<double>(last_ticks_ - first_ticks_);
        uncertainty_ = std::max(first_half_window_, half);
    }
}

std::optional<std::int64_t> device_clock::to_host(std::uint64_t ticks) const {
    if (!rate_) return std::nullopt;
    // Signed: a frame stamped before the latest sample maps behind it.
    const double d = ticks >= last_ticks_ ? static_cast<double>(ticks - last_ticks_) : -static_cast<double>(last_ticks_ - ticks);
    return last_host_ + static_cast<std::int64_t>(std::llround(d * *rate_));
}

}  // namespace mrct::netio
