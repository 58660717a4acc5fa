// agent+dpdk's wire: a DPDK ethdev port (a NIC, or for tests a vdev such as
// net_af_packet on a veth), polled from the real-time driver's io_context.
//
// The EAL can be initialised once per process, so the first port opened
// initialises it with the caller's EAL arguments and configures the port;
// later ports (one per test case) reuse it, after draining what is queued.
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <chrono>
#include <map>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "netio/device_clock.h"
#include "netio/port.h"
#include "wire/frame.h"

namespace mrct::netio {

namespace {

namespace asio = boost::asio;
constexpr std::uint16_t k_ring = 1024;
constexpr std::uint16_t k_burst = 32;

// A port's receive timestamps (RTE_ETH_RX_OFFLOAD_TIMESTAMP): where the
// PMD puts them in an mbuf, and its clock on the host's.
struct hw_stamps {
    int offset = -1;    // the timestamp's dynamic field
    std::uint64_t flag = 0;  // the ol_flags bit saying a frame has one
    device_clock clock;
};

// What the process's EAL was brought up with.
struct eal_state {
    bool up = false;
    std::string args, error;
    rte_mempool* pool = nullptr;           // one for every port of the process
    std::set<std::uint16_t> configured;   // ports set up (once per process)
    std::map<std::uint16_t, std::string> port_errors;
    std::map<std::uint16_t, hw_stamps> stamps;  // ports that stamp what they receive
};

std::int64_t realtime_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// One reading of the port's clock between two of the host's; false when the
// PMD cannot read it.
bool read_device_clock(std::uint16_t port, device_clock& c) {
    std::uint64_t ticks = 0;
    const std::int64_t before = realtime_ns();
    if (rte_eth_read_clock(port, &ticks) != 0) return false;
    c.sample(ticks, before, realtime_ns());
    return true;
}

eal_state& eal() {
    static eal_state s;
    return s;
}

std::vector<std::string> split_args(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string w;
    while (in >> w) out.push_back(w);
    return out;
}

core::status eal_init(const std::string& args) {
    auto& e = eal();
    if (e.up) {
        if (args != e.args) return core::error{"the DPDK EAL is already up with other arguments ('" + e.args + "')"};
        return core::ok_status();
    }
    if (!e.error.empty()) return core::error{e.error};
    std::vector<std::string> words = {"mrct"};
    for (auto& w : split_args(args)) words.push_back(w);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(words.size()), argv.data()) < 0) {
        e.error = std::string("DPDK EAL init failed (") + rte_strerror(rte_errno) + ") with: " + args;
        return core::error{e.error};
    }
    e.up = true;
    e.args = args;
    return core::ok_status();
}

core::result<std::uint16_t> find_port(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
        const auto id = static_cast<std::uint16_t>(name.empty() ? 0 : std::stoul(name));
        if (!rte_eth_dev_is_valid_port(id))
            return core::error{"no DPDK port " + std::to_string(id) + " (" + std::to_string(rte_eth_dev_count_avail()) +
                               " available)"};
        return id;
    }
    std::uint16_t id = 0;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) return core::error{"no DPDK port named '" + name + "'"};
    return id;
}

core::result<rte_mempool*> setup_port_once(std::uint16_t port);

// A port is set up once per process; a failure is remembered, not retried.
core::result<rte_mempool*> setup_port(std::uint16_t port) {
    auto& e = eal();
    if (e.configured.count(port)) return e.pool;
    if (auto it = e.port_errors.find(port); it != e.port_errors.end()) return core::error{it->second};
    auto r = setup_port_once(port);
    if (!r) e.port_errors[port] = r.err().message;
    return r;
}

core::result<rte_mempool*> setup_port_once(std::uint16_t port) {
    auto& e = eal();
    // One pool for the process's ports (an emulator's two share it): 8191
    // mbufs with 16 KiB data rooms, about 136 MB (the EAL's -m must hold it).
    if (!e.pool)
        e.pool = rte_pktmbuf_pool_create("mrct_pool", 8191, 256, 0, RTE_PKTMBUF_HEADROOM + 16384, static_cast<int>(rte_socket_id()));
    if (!e.pool) return core::error{std::string("DPDK mbuf pool: ") + rte_strerror(rte_errno)};
    auto* pool = e.pool;
    rte_eth_conf conf{};
    conf.rxmode.mtu = 9000;
    // Receive timestamps where the device offers them (NICs with a clock;
    // none of the vdevs here: net_af_packet, net_ring, net_memif, net_pcap).
    rte_eth_dev_info info{};
    if (rte_eth_dev_info_get(port, &info) == 0 && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    int rc = rte_eth_dev_configure(port, 1, 1, &conf);
    if (rc < 0) {
        conf.rxmode.mtu = 0;  // a device that cannot do jumbo frames: its default
        rc = rte_eth_dev_configure(port, 1, 1, &conf);
    }
    if (rc < 0) return core::error{"DPDK port " + std::to_string(port) + " configure: " + rte_strerror(-rc)};
    const int sock = rte_eth_dev_socket_id(port);
    if ((rc = rte_eth_rx_queue_setup(port, 0, k_ring, static_cast<unsigned>(sock < 0 ? 0 : sock), nullptr, pool)) < 0)
        return core::error{"DPDK rx queue: " + std::string(rte_strerror(-rc))};
    if ((rc = rte_eth_tx_queue_setup(port, 0, k_ring, static_cast<unsigned>(sock < 0 ? 0 : sock), nullptr)) < 0)
        return core::error{"DPDK tx queue: " + std::string(rte_strerror(-rc))};
    if ((rc = rte_eth_dev_start(port)) < 0) return core::error{"DPDK start: " + std::string(rte_strerror(-rc))};
    rte_eth_promiscuous_enable(port);
    e.configured.insert(port);
    // The stamps are used once the device's clock has been read twice, 6 ms
    // apart, for its rate; a PMD that stamps but cannot read its clock gives
    // stamps of no known time base: frames are stamped when read, as without.
    if (conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
        hw_stamps h;
        if (rte_mbuf_dyn_rx_timestamp_register(&h.offset, &h.flag) == 0 && read_device_clock(port, h.clock)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(6));
            if (read_device_clock(port, h.clock) && h.clock.ready()) e.stamps.emplace(port, std::move(h));
        }
    }
    return pool;
}

// One class for both uses of a DPDK port. As agent+dpdk's (and mrct-refnic's)
// wire it sends only from `local` (to `remote`, or to any peer it has heard
// from when `remote` is unspecified) with the MACs rewritten, and delivers
// only MetaRoCE to `local`. As a tap (`mrct emulate`) it passes every frame
// in and sends every frame verbatim.
class dpdk_port final : public port {
public:
    dpdk_port(asio::io_context& io, dpdk_options o, bool tap) : o_(std::move(o)), tap_(tap), io_(io), timer_(io), sink_(io) {}
    ~dpdk_port() override {
        stop();
        *alive_ = false;
    }

    core::status open() {
        if (auto st = eal_init(o_.eal_args); !st) return st;
        auto id = find_port(o_.port);
        if (!id) return id.err();
        id_ = *id;
        auto pool = setup_port(id_);
        if (!pool) return pool.err();
        pool_ = *pool;
        if (auto it = eal().stamps.find(id_); it != eal().stamps.end()) hw_ = &it->second;
        rte_ether_addr mac{};
        rte_eth_macaddr_get(id_, &mac);
        std::memcpy(local_mac_.data(), mac.addr_bytes, 6);
        if (!tap_ && !o_.remote_mac && !o_.remote.unspecified())
            return core::error{"agent+dpdk: dut_mac=MAC is required"};
        if (o_.remote_mac && !o_.remote.unspecified()) macs_[o_.remote] = *o_.remote_mac;
        // Drain what an earlier case left queued.
        rte_mbuf* b[k_burst];
        while (const auto n = rte_eth_rx_burst(id_, 0, b, k_burst))
            for (std::uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(b[i]);
        have_base_ = rte_eth_stats_get(id_, &base_) == 0;  // lost_in counts from here
        if (tap_) return core::ok_status();
        // As agent+pcap: keep the kernel from answering the DUT with ICMP when
        // the port shares a kernel interface (af_packet).
        if (auto st = bind_sink(sink_, o_.local); !st) return st;
        for (const auto& a : o_.also_local) {  // the further peers' addresses
            more_sinks_.push_back(std::make_unique<asio::ip::udp::socket>(io_));
            if (auto st = bind_sink(*more_sinks_.back(), a); !st) return st;
        }
        return core::ok_status();
    }

    void start(rx cb) override {
        cb_ = std::move(cb);
        schedule_poll(true);
    }

    // Copied into an mbuf and queued; the queue goes out in one
    // rte_eth_tx_burst when the io_context next runs a handler (right after
    // the event or frame handler that sent it), or when it holds a burst.
    core::status send(core::bytes_view frame) override {
        const wire::mac_addr* dmac = nullptr;
        if (!tap_) {
            if (o_.remote.unspecified()) {
                auto a = frame_addresses(frame);
                if (!a || !is_local(a->first)) return core::error{"frame source is not this port's address"};
                // The MAC the sender used, once heard from; before, the frame's
                // own (the address the engine gave over the agent).
                auto it = macs_.find(a->second);
                dmac = it == macs_.end() ? nullptr : &it->second;
            } else {
                if (auto st = check_raw_frame(frame, o_.local, o_.remote, o_.also_local); !st) return st;
                dmac = &macs_.at(o_.remote);
            }
        }
        if (frame.size() > 0xffff) return core::error{"DPDK: a frame of " + std::to_string(frame.size()) + " bytes"};
        rte_mbuf* m = rte_pktmbuf_alloc(pool_);
        if (!m) {
            ++stats_.send_errors;
            return core::error{"DPDK: no mbuf"};
        }
        auto* p = static_cast<std::uint8_t*>(static_cast<void*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size()))));
        if (!p) {
            rte_pktmbuf_free(m);
            ++stats_.send_errors;
            return core::error{"DPDK: frame of " + std::to_string(frame.size()) + " bytes does not fit an mbuf"};
        }
        std::memcpy(p, frame.data(), frame.size());
        if (!tap_) {
            if (dmac) std::memcpy(p, dmac->data(), 6);
            std::memcpy(p + 6, local_mac_.data(), 6);
        }
        if (!deferred_error_.empty()) {
            rte_pktmbuf_free(m);
            std::string e = std::move(deferred_error_);
            deferred_error_.clear();
            return core::error{std::move(e)};
        }
        tx_[tx_n_++] = m;
        if (tx_n_ == k_burst) flush();
        else if (!flush_posted_) {
            flush_posted_ = true;
            asio::post(io_, [this, alive = alive_] {
                if (*alive) flush();
            });
        }
        return core::ok_status();
    }

    void flush_tx() override {
        if (!stopped_) flush();
    }

    void stop() override {
        if (stopped_) return;
        flush();
        stopped_ = true;
        boost::system::error_code ec;
        timer_.cancel();
        sink_.close(ec);
        for (auto& s : more_sinks_) s->close(ec);
    }
    // Whether the device stamps frames (D121); else they carry their read time.
    bool rx_stamped() const override { return hw_ != nullptr; }
    // lost_in: frames the receive ring had no room (imissed) or no buffer
    // (rx_nombuf) for since open, and chained ones that could not be read:
    // frames the DUT sent that the trace or the capture lacks.
    const port_stats& stats() const override {
        stats_.lost_in = unreadable_;
        rte_eth_stats s{};
        if (have_base_ && rte_eth_stats_get(id_, &s) == 0)
            stats_.lost_in += (s.imissed - base_.imissed) + (s.rx_nombuf - base_.rx_nombuf);
        return stats_;
    }

private:
    // A full TX ring is retried a few times (the PMD frees descriptors as the
    // device sends); what still does not fit is dropped, counted, and reported
    // by the next send().
    void flush() {
        flush_posted_ = false;
        std::uint16_t done = 0;
        for (int tries = 0; done < tx_n_ && tries < 64; ++tries)
            done = static_cast<std::uint16_t>(done + rte_eth_tx_burst(id_, 0, tx_.data() + done, static_cast<std::uint16_t>(tx_n_ - done)));
        stats_.frames_out += done;
        if (done < tx_n_) {
            stats_.send_errors += tx_n_ - done;
            if (deferred_error_.empty())
                deferred_error_ = "DPDK: tx ring full (" + std::to_string(tx_n_ - done) + " frames dropped)";
            for (std::uint16_t i = done; i < tx_n_; ++i) rte_pktmbuf_free(tx_[i]);
        }
        tx_n_ = 0;
    }

    // Polled: a DPDK port has no descriptor to wait on. Busy (o_.busy_poll):
    // the poll is posted again at once, so the driver's thread spins on the
    // port between its events, the way a DPDK lcore does. Otherwise every
    // 10 us, or at once again while bursts come back full.
    void schedule_poll(bool now) {
        if (stopped_) return;
        if (o_.busy_poll || now) {
            asio::post(io_, [this, alive = alive_] {
                if (*alive) poll();
            });
            return;
        }
        timer_.expires_after(std::chrono::microseconds(10));
        timer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) poll();
        });
    }
    void poll() {
        if (stopped_) return;
        rte_mbuf* b[k_burst];
        std::uint16_t n = 0;
        std::size_t batches = 0;
        do {
            n = rte_eth_rx_burst(id_, 0, b, k_burst);
            if (!n) break;
            // The time this burst was read: frames a handler takes later keep
            // it (wire_age). A device that stamps frames gives each its own
            // arrival, on the host's clock (device_clock), never after the
            // read; its clock is read again every 100 ms.
            const std::int64_t now_ns = realtime_ns();
            if (hw_ && now_ns - hw_->clock.last_sample_ns() >= k_resample_ns) read_device_clock(id_, hw_->clock);
            for (std::uint16_t i = 0; i < n; ++i) {
                const std::int64_t at = arrival(b[i], now_ns);
                if (b[i]->nb_segs == 1) deliver(core::bytes_view(rte_pktmbuf_mtod(b[i], const std::uint8_t*), b[i]->data_len), at);
                else if (!linear(b[i], at)) ++unreadable_;
                rte_pktmbuf_free(b[i]);
            }
        } while (n == k_burst && ++batches < 2);
        schedule_poll(n == k_burst);
    }
    static constexpr std::int64_t k_resample_ns = 100'000'000;
    std::int64_t arrival(const rte_mbuf* m, std::int64_t read_ns) const {
        if (!hw_ || !(m->ol_flags & hw_->flag)) return read_ns;
        const auto ticks = *RTE_MBUF_DYNFIELD(m, hw_->offset, const rte_mbuf_timestamp_t*);
        const auto host = hw_->clock.to_host(ticks);
        return host ? std::min(*host, read_ns) : read_ns;
    }
    // A chained mbuf (a PMD with small buffers, memif's 2 KiB) copied out whole.
    bool linear(rte_mbuf* m, std::int64_t now_ns) {
        if (m->pkt_len > 65535) return false;
        rx_buf_.resize(m->pkt_len);
        const void* d = rte_pktmbuf_read(m, 0, m->pkt_len, rx_buf_.data());
        if (!d) return false;
        deliver(core::bytes_view(static_cast<const std::uint8_t*>(d), m->pkt_len), now_ns);
        return true;
    }
    // A tap takes everything. A wire port only MetaRoCE to us, from the DUT
    // (or from anyone when `remote` is unspecified: the sender's MAC is then
    // learned for the replies), and the PAUSE/PFC frames a DUT sends, known
    // by its MAC (MR-CC-5: wire_format fails a DUT that sends one; agent+pcap
    // passes on the same).
    void deliver(core::bytes_view f, std::int64_t now_ns) {
        if (tap_) {
            ++stats_.frames_in;
            if (cb_) cb_(f, now_ns);
            return;
        }
        if (wire::is_mac_control(f)) {
            const auto src = wire::ethernet_source(f);
            for (const auto& [ip, mac] : macs_)
                if (mac == src) {
                    ++stats_.frames_in;
                    if (cb_) cb_(f, now_ns);
                    return;
                }
            ++stats_.foreign_in;
            return;
        }
        auto a = frame_addresses(f);
        if (!a) return;
        if (!is_local(a->second) || (!o_.remote.unspecified() && a->first != o_.remote)) {
            ++stats_.foreign_in;
            return;
        }
        // UDP to 4791 (IPv4 with its IHL, IPv6 without extension headers).
        const bool v6 = a->first.version == 6;
        const std::size_t ihl = v6 ? 40 : (f[14] & 15u) * 4u;
        if ((v6 ? f[14 + 6] : f[14 + 9]) != 17) return;
        if (f.size() < 14 + ihl + 8 || ((f[14 + ihl + 2] << 8) | f[14 + ihl + 3]) != 4791) return;
        if (o_.remote.unspecified()) {
            auto& mac = macs_[a->first];
            std::memcpy(mac.data(), f.data() + 6, 6);
        }
        ++stats_.frames_in;
        if (cb_) cb_(f, now_ns);
    }

    struct ip_less {
        bool operator()(const ip_address& x, const ip_address& y) const {
            if (x.version != y.version) return x.version < y.version;
            return x.version == 4 ? x.v4 < y.v4 : x.v6 < y.v6;
        }
    };

    dpdk_options o_;
    bool tap_;
    asio::io_context& io_;
    std::uint16_t id_ = 0;
    rte_mempool* pool_ = nullptr;
    asio::steady_timer timer_;
    asio::ip::udp::socket sink_;
    std::vector<std::unique_ptr<asio::ip::udp::socket>> more_sinks_;  // bound, never read: a full one drops silently
    bool is_local(const ip_address& a) const {
        return a == o_.local || std::find(o_.also_local.begin(), o_.also_local.end(), a) != o_.also_local.end();
    }
    wire::mac_addr local_mac_{};
    std::map<ip_address, wire::mac_addr, ip_less> macs_;
    std::array<rte_mbuf*, k_burst> tx_{};
    std::uint16_t tx_n_ = 0;
    bool flush_posted_ = false;
    std::string deferred_error_;
    std::vector<std::uint8_t> rx_buf_;
    hw_stamps* hw_ = nullptr;  // the device stamps what it receives (eal_state::stamps)
    rx cb_;
    mutable port_stats stats_;  // lost_in brought up to date by stats()
    std::uint64_t unreadable_ = 0;
    rte_eth_stats base_{};
    bool have_base_ = false;
    bool stopped_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // a posted handler outliving the port does nothing
};

}  // namespace

core::result<std::unique_ptr<port>> make_dpdk_port(boost::asio::io_context& io, const dpdk_options& o) {
    auto p = std::make_unique<dpdk_port>(io, o, false);
    if (auto st = p->open(); !st) return st.err();
    return std::unique_ptr<port>(std::move(p));
}

core::result<std::unique_ptr<port>> make_dpdk_tap_port(boost::asio::io_context& io, const dpdk_options& o) {
    auto p = std::make_unique<dpdk_port>(io, o, true);
    if (auto st = p->open(); !st) return st.err();
    return std::unique_ptr<port>(std::move(p));
}

}  // namespace mrct::netio
