// Time in mrct: nanoseconds since the start of a run, as std::chrono durations.
// Only engine/sim reads a real clock; everything else asks the clock it was given.
#pragma once

#include <chrono>
#include <cstdint>

namespace mrct::core {

using nanos = std::chrono::nanoseconds;
using namespace std::chrono_literals;

inline constexpr nanos k_never = nanos::max();

class clock_source {
public:
    virtual ~clock_source() = default;
    virtual nanos now() const = 0;
};

inline double to_seconds(nanos d) { return std::chrono::duration<double>(d).count(); }
inline double to_micros(nanos d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace mrct::core
