// An interface's own drop counters: frames the kernel or the NIC dropped on
// the engine's side of the wire before any socket or capture could count
// them (a veth's backlog full: rx_dropped; a NIC's receive ring full:
// rx_missed_errors, rx_fifo_errors; a transmit queue that dropped:
// tx_dropped). A port's own counters (port_stats::lost_in) see only what
// reached it. Read through getifaddrs (the kernel's rtnl_link_stats for
// this network namespace, as `ip -s link` shows them), so a process started
// by `ip netns exec` or in a container reads its own interfaces (D144).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "netio/port.h"

namespace mrct::netio {

// One reading of an interface's counters. The kernel gives them as 32-bit
// values through this interface: a difference is taken modulo 2^32.
struct link_counters {
    std::uint32_t rx_dropped = 0, rx_missed = 0, rx_fifo = 0, rx_over = 0;
    std::uint32_t tx_dropped = 0, tx_fifo = 0;
};

// What the interfaces dropped between two readings (if_drops: port.h).
// Receive drops: rx_dropped + rx_missed_errors + rx_fifo_errors +
// rx_over_errors; transmit: tx_dropped + tx_fifo_errors. Each counter's
// difference modulo 2^32 (one wrap between readings).
if_drops drops_between(const link_counters& before, const link_counters& after);

// The names of the interfaces that carry `addrs` (an address on none of
// them: an error naming it).
core::result<std::vector<std::string>> interfaces_of(const std::vector<ip_address>& addrs);
// The counters of `iface` now; nullopt if it has none (gone, not found).
std::optional<link_counters> read_link_counters(const std::string& iface);

// The counters of a port's interfaces, from its start: drops() is what they
// dropped since. An interface that cannot be read counts nothing.
class if_drop_watch {
public:
    if_drop_watch() = default;
    explicit if_drop_watch(std::vector<std::string> ifaces);
    if_drops drops() const;
    const std::vector<std::string>& ifaces() const { return ifaces_; }

private:
    std::vector<std::string> ifaces_;
    std::vector<std::optional<link_counters>> base_;
};

}  // namespace mrct::netio
