#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <boost/asio/ip/udp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "netio/if_drops.h"
#include "netio/port.h"
#include "wire/frame.h"

namespace mrct::netio {

namespace {

namespace asio = boost::asio;

}  // namespace

core::result<wire::mac_addr> interface_mac(const std::string& iface) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return core::error{std::string("socket: ") + std::strerror(errno)};
    ifreq r{};
    std::strncpy(r.ifr_name, iface.c_str(), IFNAMSIZ - 1);
    const int rc = ::ioctl(fd, SIOCGIFHWADDR, &r);
    ::close(fd);
    if (rc != 0) return core::error{"interface '" + iface + "': " + std::strerror(errno)};
    wire::mac_addr m{};
    std::memcpy(m.data(), r.ifr_hwaddr.sa_data, 6);
    return m;
}

core::result<std::string> interface_of(const ip_address& a) {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return core::error{std::string("getifaddrs: ") + std::strerror(errno)};
    std::string found;
    for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        if (a.version == 4 && i->ifa_addr->sa_family == AF_INET) {
            const auto* s = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
            if (std::memcmp(&s->sin_addr, a.v4.data(), 4) == 0) found = i->ifa_name;
        } else if (a.version == 6 && i->ifa_addr->sa_family == AF_INET6) {
            const auto* s = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
            if (std::memcmp(&s->sin6_addr, a.v6.data(), 16) == 0) found = i->ifa_name;
        }
    }
    ::freeifaddrs(list);
    if (found.empty()) return core::error{"no interface of this host holds " + ip_text(a)};
    return found;
}

std::optional<wire::mac_addr> neighbour_mac(const wire::ipv4_addr& ip) {
    std::ifstream in("/proc/net/arp");
    std::string line;
    std::getline(in, line);  // header
    const auto want = ipv4_text(ip);
    while (std::getline(in, line)) {
        std::istringstream ss(line);
        std::string addr, hw, flags, mac;
        ss >> addr >> hw >> flags >> mac;
        if (addr != want || flags == "0x0") continue;
        wire::mac_addr m{};
        unsigned v[6];
        if (std::sscanf(mac.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) continue;
        for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(v[i]);
        if (m != wire::mac_addr{}) return m;
    }
    return std::nullopt;
}

std::optional<wire::mac_addr> resolve_neighbour(const wire::ipv4_addr& ip) {
    for (int i = 0; i < 20; ++i) {
        if (auto m = neighbour_mac(ip)) return m;
        boost::system::error_code ec;
        asio::io_context tmp;
        asio::ip::udp::socket s(tmp, asio::ip::udp::v4());
        s.send_to(asio::buffer("", 0), asio::ip::udp::endpoint(asio::ip::address_v4(ip), 9), 0, ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
}

namespace {

// Reads at most `batch` frames that are ready, each with its capture stamp.
void read_batch(pcap_t* p, std::size_t batch, bool nano, port_stats& stats, const port::rx& cb) {
    for (std::size_t n = 0; n < batch; ++n) {
        pcap_pkthdr* h = nullptr;
        const u_char* d = nullptr;
        if (pcap_next_ex(p, &h, &d) != 1) break;
        ++stats.frames_in;
        const std::int64_t wire_ns = static_cast<std::int64_t>(h->ts.tv_sec) * 1'000'000'000 +
                                     static_cast<std::int64_t>(h->ts.tv_usec) * (nano ? 1 : 1000);
        if (cb) cb(core::bytes_view(d, h->caplen), wire_ns);
    }
}

// The libpcap side both ports share: a handle on one interface, read in
// batches from the io_context whenever its descriptor is readable, and the
// capture buffer's drops as lost_in.
class capture {
public:
    explicit capture(asio::io_context& io) : fd_(io) {}
    ~capture() {
        close();
        if (p_) pcap_close(p_);
    }
    // Creates the handle; `configure` sets options before activation (snap
    // length, immediate mode, nanosecond stamps and non-blocking are set here),
    // `activated` filters and directions after it.
    core::status open(const std::string& iface, const std::function<void(pcap_t*)>& configure,
                      const std::function<core::status(pcap_t*)>& activated) {
        char err[PCAP_ERRBUF_SIZE] = {};
        p_ = pcap_create(iface.c_str(), err);
        if (!p_) return core::error{std::string("pcap: ") + err};
        pcap_set_snaplen(p_, 65535);
        pcap_set_immediate_mode(p_, 1);
        configure(p_);
        nano_ = pcap_set_tstamp_precision(p_, PCAP_TSTAMP_PRECISION_NANO) == 0;
        if (pcap_activate(p_) < 0) return core::error{"pcap on " + iface + ": " + pcap_geterr(p_)};
        if (auto st = activated(p_); !st) return st;
        if (pcap_setnonblock(p_, 1, err) != 0) return core::error{std::string("pcap: ") + err};
        const int fd = pcap_get_selectable_fd(p_);
        if (fd < 0) return core::error{"pcap: no selectable descriptor on " + iface};
        fd_.assign(::dup(fd));
        return core::ok_status();
    }
    void start(std::size_t batch, port::rx cb) {
        batch_ = batch;
        cb_ = std::move(cb);
        arm();
    }
    // pcap_inject, counted; the error is libpcap's.
    core::status inject(const std::uint8_t* d, std::size_t n) {
        if (pcap_inject(p_, d, n) < 0) {
            ++stats_.send_errors;
            return core::error{pcap_geterr(p_)};
        }
        ++stats_.frames_out;
        return core::ok_status();
    }
    void close() {
        boost::system::error_code ec;
        fd_.cancel(ec);
        fd_.close(ec);
    }
    const port_stats& stats() const {
        pcap_stat ps{};
        if (p_ && pcap_stats(p_, &ps) == 0) stats_.lost_in = ps.ps_drop;  // the capture buffer's drops
        return stats_;
    }

private:
    void arm() {
        fd_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
            if (ec) return;
            read_batch(p_, batch_, nano_, stats_, cb_);
            arm();
        });
    }

    pcap_t* p_ = nullptr;
    asio::posix::stream_descriptor fd_;
    std::size_t batch_ = 64;
    port::rx cb_;
    mutable port_stats stats_;  // lost_in read from libpcap when asked
    bool nano_ = false;  // pcap's timestamps are in nanoseconds (else microseconds)
};

class pcap_port final : public port {
public:
    pcap_port(asio::io_context& io, pcap_options o) : io_(io), o_(std::move(o)), cap_(io), sink_(io) {}
    ~pcap_port() override { stop(); }

    core::status open() {
        auto mac = interface_mac(o_.iface);
        if (!mac) return mac.err();
        local_mac_ = *mac;
        if (o_.remote_mac) {
            remote_mac_ = *o_.remote_mac;
        } else {
            // Ask the kernel to resolve the DUT's MAC: a datagram to the discard port, then the neighbour table.
            if (o_.remote.version == 6)
                return core::error{"agent+pcap over IPv6: pass dut_mac= (the neighbour table is read for IPv4 only)"};
            auto m = resolve_neighbour(o_.remote.v4);
            if (!m) return core::error{"no neighbour entry for " + ip_text(o_.remote) + " on " + o_.iface + "; pass dut_mac="};
            remote_mac_ = *m;
        }
        // The DUT's MetaRoCE frames, and any PAUSE/PFC frame it sends
        // (MR-CC-5: wire_format fails a DUT that sends one).
        std::string dst = "dst host " + ip_text(o_.local);
        for (const auto& a : o_.also_local) dst += " or dst host " + ip_text(a);
        const std::string filter = "(udp dst port 4791 and src host " + ip_text(o_.remote) + " and (" + dst +
                                   ")) or (ether proto 0x8808 and ether src " + wire::mac_text(remote_mac_) + ")";
        auto st = cap_.open(
            o_.iface, [](pcap_t* p) { pcap_set_buffer_size(p, 16 << 20); },
            [&](pcap_t* p) -> core::status {
                pcap_setdirection(p, PCAP_D_IN);
                bpf_program prog{};
                if (pcap_compile(p, &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0 || pcap_setfilter(p, &prog) != 0) {
                    const std::string e = pcap_geterr(p);
                    pcap_freecode(&prog);
                    return core::error{"pcap filter '" + filter + "': " + e};
                }
                pcap_freecode(&prog);
                return core::ok_status();
            });
        if (!st) return st;
        // A socket on UDP 4791 so that the kernel does not answer the DUT's
        // frames with ICMP port unreachable; what it receives is discarded.
        if (auto st = bind_sink(sink_, o_.local); !st) return st;
        for (const auto& a : o_.also_local) {  // the further peers' addresses: no ICMP there either
            more_sinks_.push_back(std::make_unique<asio::ip::udp::socket>(io_));
            if (auto st = bind_sink(*more_sinks_.back(), a); !st) return st;
        }
        watch_ = if_drop_watch({o_.iface});  // the interface's own drops, before the capture (D144)
        return core::ok_status();
    }

    void start(rx cb) override {
        cap_.start(o_.batch, std::move(cb));
        drain_sink();
    }

    core::status send(core::bytes_view frame) override {
        if (auto st = check_raw_frame(frame, o_.local, o_.remote, o_.also_local); !st) return st;
        out_.assign(frame.begin(), frame.end());
        std::memcpy(out_.data(), remote_mac_.data(), 6);
        std::memcpy(out_.data() + 6, local_mac_.data(), 6);
        if (auto st = cap_.inject(out_.data(), out_.size()); !st) return core::error{"pcap_inject: " + st.err().message};
        return core::ok_status();
    }

    void stop() override {
        cap_.close();
        boost::system::error_code ec;
        sink_.close(ec);
        for (auto& s : more_sinks_) s->close(ec);
    }
    const port_stats& stats() const override { return cap_.stats(); }
    if_drops interface_drops() const override { return watch_.drops(); }

private:
    void drain_sink() {
        sink_.async_wait(asio::ip::udp::socket::wait_read, [this](const boost::system::error_code& ec) {
            if (ec) return;
            std::uint8_t b[2048];
            boost::system::error_code e2;
            while (sink_.available(e2) > 0 && !e2) sink_.receive(asio::buffer(b), 0, e2);
            drain_sink();
        });
    }

    asio::io_context& io_;
    pcap_options o_;
    capture cap_;
    asio::ip::udp::socket sink_;
    std::vector<std::unique_ptr<asio::ip::udp::socket>> more_sinks_;  // bound, never read: a full one drops silently
    wire::mac_addr local_mac_{}, remote_mac_{};
    core::byte_buffer out_;
    if_drop_watch watch_;
};

// A bump in the wire's port: promiscuous, inbound frames only (libpcap
// would also hand back what this port injected), everything passed on as it
// came, nothing filtered or rewritten.
class tap_port final : public port {
public:
    tap_port(asio::io_context& io, tap_options o) : o_(std::move(o)), cap_(io) {}
    ~tap_port() override { stop(); }

    core::status open() {
        return cap_.open(
            o_.iface,
            [&](pcap_t* p) {
                pcap_set_promisc(p, 1);
                pcap_set_buffer_size(p, static_cast<int>(std::min<std::size_t>(o_.buffer_bytes, 1u << 30)));
            },
            [&](pcap_t* p) -> core::status {
                if (pcap_datalink(p) != DLT_EN10MB) return core::error{"interface '" + o_.iface + "' is not Ethernet"};
                if (pcap_setdirection(p, PCAP_D_IN) != 0)
                    return core::error{"pcap on " + o_.iface + ": cannot capture inbound frames only: " + pcap_geterr(p)};
                return core::ok_status();
            });
    }

    void start(rx cb) override { cap_.start(o_.batch, std::move(cb)); }

    core::status send(core::bytes_view frame) override {
        if (auto st = cap_.inject(frame.data(), frame.size()); !st)
            return core::error{"pcap_inject on " + o_.iface + ": " + st.err().message};
        return core::ok_status();
    }

    void stop() override { cap_.close(); }
    const port_stats& stats() const override { return cap_.stats(); }

private:
    tap_options o_;
    capture cap_;
};

}  // namespace

core::result<std::unique_ptr<port>> make_pcap_port(boost::asio::io_context& io, const pcap_options& o) {
    auto p = std::make_unique<pcap_port>(io, o);
    if (auto st = p->open(); !st) return st.err();
    return std::unique_ptr<port>(std::move(p));
}

}  // namespace mrct::netio

namespace mrct::netio {

core::result<std::unique_ptr<port>> make_tap_port(boost::asio::io_context& io, const tap_options& o) {
    auto p = std::make_unique<tap_port>(io, o);
    if (auto st = p->open(); !st) return st.err();
    return std::unique_ptr<port>(std::move(p));
}

}  // namespace mrct::netio
