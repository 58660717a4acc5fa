#include "netio/if_drops.h"

#include <ifaddrs.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace mrct::netio {

if_drops drops_between(const link_counters& b, const link_counters& a) {
    auto d = [](std::uint32_t before, std::uint32_t after) { return std::uint64_t{static_cast<std::uint32_t>(after - before)}; };
    if_drops out;
    out.rx = d(b.rx_dropped, a.rx_dropped) + d(b.rx_missed, a.rx_missed) + d(b.rx_fifo, a.rx_fifo) + d(b.rx_over, a.rx_over);
    out.tx = d(b.tx_dropped, a.tx_dropped) + d(b.tx_fifo, a.tx_fifo);
    return out;
}

namespace {

struct ifaddrs_deleter {
    void operator()(ifaddrs* p) const { ::freeifaddrs(p); }
};
using ifaddrs_ptr = std::unique_ptr<ifaddrs, ifaddrs_deleter>;

ifaddrs_ptr list() {
    ifaddrs* p = nullptr;
    if (::getifaddrs(&p) != 0) return nullptr;
    return ifaddrs_ptr(p);
}

// `i` has the address `a` (exact), or a prefix holding it (`in_prefix`: a
// loopback address such as 127.0.0.2 is in lo's 127.0.0.0/8 and bound there).
bool carries(const ifaddrs& i, const ip_address& a, bool in_prefix) {
    if (!i.ifa_addr) return false;
    const std::uint8_t* have = nullptr;
    const std::uint8_t* mask = nullptr;
    std::size_t n = 0;
    if (a.version == 4 && i.ifa_addr->sa_family == AF_INET) {
        have = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(i.ifa_addr)->sin_addr);
        if (i.ifa_netmask) mask = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(i.ifa_netmask)->sin_addr);
        n = 4;
    } else if (a.version == 6 && i.ifa_addr->sa_family == AF_INET6) {
        have = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(i.ifa_addr)->sin6_addr);
        if (i.ifa_netmask) mask = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(i.ifa_netmask)->sin6_addr);
        n = 16;
    } else {
        return false;
    }
    const std::uint8_t* want = a.version == 4 ? a.v4.data() : a.v6.data();
    if (!in_prefix) return std::memcmp(have, want, n) == 0;
    if (!mask) return false;
    for (std::size_t k = 0; k < n; ++k)
        if ((have[k] & mask[k]) != (want[k] & mask[k])) return false;
    return true;
}

}  // namespace

core::result<std::vector<std::string>> interfaces_of(const std::vector<ip_address>& addrs) {
    auto all = list();
    if (!all) return core::error{std::string("getifaddrs: ") + std::strerror(errno)};
    std::vector<std::string> out;
    for (const auto& a : addrs) {
        std::string name;
        for (bool in_prefix : {false, true})
            for (const ifaddrs* i = all.get(); i && name.empty(); i = i->ifa_next)
                if (carries(*i, a, in_prefix)) name = i->ifa_name;
        if (name.empty()) return core::error{"no interface has the address " + ip_text(a)};
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
}

namespace {

// The counters of each of `ifaces`, from one getifaddrs (one netlink dump).
std::vector<std::optional<link_counters>> read_each(const std::vector<std::string>& ifaces) {
    std::vector<std::optional<link_counters>> out(ifaces.size());
    if (ifaces.empty()) return out;
    auto all = list();
    for (const ifaddrs* i = all.get(); i; i = i->ifa_next) {
        // The link's entry (AF_PACKET) carries its rtnl_link_stats.
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET || !i->ifa_data) continue;
        const auto at = std::find(ifaces.begin(), ifaces.end(), i->ifa_name);
        if (at == ifaces.end()) continue;
        const auto* s = static_cast<const rtnl_link_stats*>(i->ifa_data);
        out[static_cast<std::size_t>(at - ifaces.begin())] =
            link_counters{s->rx_dropped, s->rx_missed_errors, s->rx_fifo_errors, s->rx_over_errors, s->tx_dropped, s->tx_fifo_errors};
    }
    return out;
}

}  // namespace

std::optional<link_counters> read_link_counters(const std::string& iface) { return read_each({iface})[0]; }

if_drop_watch::if_drop_watch(std::vector<std::string> ifaces) : ifaces_(std::move(ifaces)), base_(read_each(ifaces_)) {}

if_drops if_drop_watch::drops() const {
    if_drops out;
    const auto now_each = read_each(ifaces_);
    for (std::size_t k = 0; k < ifaces_.size(); ++k) {
        out.ifaces += (out.ifaces.empty() ? "" : ", ") + ifaces_[k];
        const auto& now = now_each[k];
        if (!base_[k] || !now) continue;
        const auto d = drops_between(*base_[k], *now);
        out.rx += d.rx;
        out.tx += d.tx;
    }
    return out;
}

}  // namespace mrct::netio
