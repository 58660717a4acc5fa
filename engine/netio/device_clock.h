// A NIC's receive timestamps on the host's clock (agent+dpdk, issue 24).
//
// A port that offers RTE_ETH_RX_OFFLOAD_TIMESTAMP stamps each frame with its
// own clock, in device ticks of a rate and origin DPDK does not give. The
// port reads that clock (rte_eth_read_clock) between two readings of the
// host's CLOCK_REALTIME now and then; this class turns those samples into a
// line from ticks to host nanoseconds. The rate is measured over the span
// from the first sample to the latest (the longer, the finer), the origin
// is the latest sample (so drift since the last sample is all that is
// lost). Pure arithmetic: tested without a NIC (tests/netio).
#pragma once

#include <cstdint>
#include <optional>

namespace mrct::netio {

class device_clock {
public:
    // Samples closer than this to the first give no rate yet: a read window
    // of a few microseconds is then below 0.1 % of the span.
    static constexpr std::int64_t k_min_span_ns = 5'000'000;

    // The device clock read `ticks`, between host times `before_ns` and
    // `after_ns` (CLOCK_REALTIME): taken to be at their middle, within half
    // their distance. A sample whose ticks do not move forward is ignored.
    void sample(std::uint64_t ticks, std::int64_t before_ns, std::int64_t after_ns);
    // A rate is known (two samples at least k_min_span_ns apart).
    bool ready() const { return rate_.has_value(); }
    // The host time of a device timestamp; nullopt before ready().
    std::optional<std::int64_t> to_host(std::uint64_t ticks) const;
    // Nanoseconds per tick (0 before ready()).
    double ns_per_tick() const { return rate_.value_or(0.0); }
    // How far to_host can be off for a frame stamped near the latest sample:
    // half the widest read window of the samples in use.
    std::int64_t uncertainty_ns() const { return uncertainty_; }
    std::int64_t last_sample_ns() const { return last_host_; }

private:
    bool have_first_ = false;
    std::uint64_t first_ticks_ = 0, last_ticks_ = 0;
    std::int64_t first_host_ = 0, last_host_ = 0, first_half_window_ = 0, uncertainty_ = 0;
    std::optional<double> rate_;
};

}  // namespace mrct::netio
