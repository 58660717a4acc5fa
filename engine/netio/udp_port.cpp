#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netpacket/packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>

#include "netio/if_drops.h"
#include "netio/port.h"

namespace mrct::netio {

namespace {

namespace asio = boost::asio;
using udp = asio::ip::udp;

asio::ip::address addr(const ip_address& a) {
    if (a.version == 6) return asio::ip::address_v6(a.v6);
    return asio::ip::address_v4(a.v4);
}

class udp_port final : public port {
public:
    udp_port(asio::io_context& io, udp_options o) : io_(io), o_(o) {
        locals_.push_back(o_.local);
        locals_.insert(locals_.end(), o_.also_local.begin(), o_.also_local.end());
    }

    core::status open() {
        for (const auto& a : locals_)
            if (a.version != o_.local.version)
                return core::error{"UDP: " + ip_text(a) + " is not of " + ip_text(o_.local) + "'s IP version"};
        // One receive socket per local address: a frame's destination is the
        // address whose socket it came in on.
        for (const auto& a : locals_) {
            auto r = std::make_unique<rx_sock>(io_, a);
            if (auto st = open_rx(r->s, a); !st) return st;
            rx_.push_back(std::move(r));
        }
        if (!o_.packet_iface.empty())
            if (auto st = open_packet(); !st) return st;
        if (!o_.raw_iface.empty()) {
            auto mac = interface_mac(o_.raw_iface);
            if (!mac) return mac.err();
            raw_mac_ = *mac;
            auto t = make_tap_port(io_, tap_options{o_.raw_iface, 1, 1u << 20});  // sends only: never started
            if (!t) return core::error{"--raw-iface " + o_.raw_iface + ": " + t.err().message};
            raw_ = std::move(*t);
        }
        // The interfaces it receives and sends on, whose own drops the
        // sockets never see (D144); an address on no interface (a wildcard)
        // watches none.
        if (auto names = interfaces_of(locals_)) {
            for (const auto& n : {o_.packet_iface, o_.raw_iface})
                if (!n.empty() && std::find(names->begin(), names->end(), n) == names->end()) names->push_back(n);
            watch_ = if_drop_watch(std::move(*names));
        }
        return core::ok_status();
    }

    // A frame no socket can reproduce, verbatim on the raw interface: from
    // this interface's MAC; an IP frame from this port's address, to its
    // destination's neighbour (IPv4); any other frame (PAUSE) to the
    // destination it names.
    core::status send_raw(core::bytes_view frame) {
        if (frame.size() < 14) return core::error{"raw send: a frame shorter than its Ethernet header"};
        raw_out_.assign(frame.begin(), frame.end());
        if (auto a = frame_addresses(frame)) {
            if (!local_index(a->first)) return core::error{"frame source " + ip_text(a->first) + " is not this port's address"};
            if (a->second.version != 4) return core::error{"raw send over IPv6: no neighbour lookup (IPv4 only)"};
            // The neighbour table is read once per destination (macs_, shared
            // with the packet socket), not for every raw frame.
            auto it = macs_.find(a->second);
            if (it == macs_.end()) {
                auto n = neighbour_mac(a->second.v4);
                if (!n) return core::error{"raw send: no neighbour entry for " + ip_text(a->second)};
                it = macs_.emplace(a->second, *n).first;
            }
            std::memcpy(raw_out_.data(), it->second.data(), 6);
        }
        std::memcpy(raw_out_.data() + 6, raw_mac_.data(), 6);
        flush();  // what the sockets queued leaves first
        if (auto st = raw_->send(raw_out_); !st) return st;
        ++stats_.frames_out;
        return core::ok_status();
    }

    void start(rx cb) override {
        cb_ = std::move(cb);
        for (auto& r : rx_) arm(*r);
    }

    core::status send(core::bytes_view frame) override {
        auto d = datagram_of(frame);
        if (!d && raw_) return send_raw(frame);
        if (!d) return core::error{"a UDP socket cannot send this frame exactly (" + d.err().message + "); it needs raw_frames"};
        const auto from = local_index(d->src);
        if (!from) return core::error{"frame source " + ip_text(d->src) + " is not this port's address"};
        if (!o_.remote.unspecified() && d->dst != o_.remote)
            return core::error{"frame destination " + ip_text(d->dst) + " is not the DUT's address"};
        const wire::mac_addr* mac = pk_fd_ >= 0 ? packet_mac(d->dst) : nullptr;
        tx_sock* sock = nullptr;
        if (!mac) {
            auto s = tx_socket(*from, d->sport);
            if (!s) return s.err();
            sock = *s;
        }
        // Queued, and sent together when the io_context next runs a handler
        // (right after the event or frame handler that sent it): one
        // sendmmsg per socket and batch instead of a sendto per frame
        // (issue 24). A kernel error is reported by the next send().
        if (!deferred_error_.empty()) {
            std::string e = std::move(deferred_error_);
            deferred_error_.clear();
            return core::error{std::move(e)};
        }
        if (queued_ == k_max_batch) flush();
        auto& q = queue_[queued_++];
        q.sock = sock;
        q.tos = d->tos;
        if (mac) {  // the whole frame, verbatim, from this interface to the destination's MAC
            q.len = frame.size();
            if (q.buf.size() < q.len) q.buf.resize(std::max<std::size_t>(q.len, 4096 + 256));
            std::memcpy(q.buf.data(), frame.data(), q.len);
            std::memcpy(q.buf.data(), mac->data(), 6);
            std::memcpy(q.buf.data() + 6, pk_src_mac_.data(), 6);
            post_flush();
            return core::ok_status();
        }
        q.to = sockaddr_storage{};
        if (v6()) {
            auto* a = reinterpret_cast<sockaddr_in6*>(&q.to);
            a->sin6_family = AF_INET6;
            a->sin6_port = htons(d->dport);
            std::memcpy(&a->sin6_addr, d->dst.v6.data(), 16);
            q.to_len = sizeof(sockaddr_in6);
        } else {
            auto* a = reinterpret_cast<sockaddr_in*>(&q.to);
            a->sin_family = AF_INET;
            a->sin_port = htons(d->dport);
            std::memcpy(&a->sin_addr, d->dst.v4.data(), 4);
            q.to_len = sizeof(sockaddr_in);
        }
        q.len = d->payload.size();
        if (q.buf.size() < q.len) q.buf.resize(std::max<std::size_t>(q.len, 4096 + 128));
        std::memcpy(q.buf.data(), d->payload.data(), q.len);
        post_flush();
        return core::ok_status();
    }

    void flush_tx() override { flush(); }

    bool tx_turn() override {
        flush();
        for (auto& r : rx_) {
            int n = 0;
            if (::ioctl(r->s.native_handle(), FIONREAD, &n) != 0 || n > 0) return true;
        }
        return false;
    }

    void stop() override {
        flush();
        if (pk_fd_ >= 0) ::close(pk_fd_);
        pk_fd_ = -1;
        if (raw_) raw_->stop();
        boost::system::error_code ec;
        for (auto& r : rx_) r->s.close(ec);
        for (auto& [p, s] : tx_) s->s.close(ec);
    }
    ~udp_port() override {
        *alive_ = false;
        if (pk_fd_ >= 0) ::close(pk_fd_);
    }
    const port_stats& stats() const override { return stats_; }
    if_drops interface_drops() const override { return watch_.drops(); }

private:
    bool v6() const { return o_.local.version == 6; }
    void post_flush() {
        if (flush_posted_) return;
        flush_posted_ = true;
        asio::post(io_, [this, alive = alive_] {
            if (*alive) flush();
        });
    }

    // udp_options::packet_iface: the AF_PACKET socket, bound to the
    // interface with protocol 0 (it receives nothing), the qdisc bypassed
    // (frames go straight to the driver, as a NIC's queue takes them).
    core::status open_packet() {
        auto mac = interface_mac(o_.packet_iface);
        if (!mac) return mac.err();
        pk_src_mac_ = *mac;
        const unsigned idx = ::if_nametoindex(o_.packet_iface.c_str());
        if (!idx) return core::error{"packet socket: interface '" + o_.packet_iface + "': " + std::strerror(errno)};
        const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return core::error{"packet socket on " + o_.packet_iface + ": " + std::strerror(errno) + " (needs CAP_NET_RAW)"};
        sockaddr_ll ll{};
        ll.sll_family = AF_PACKET;
        ll.sll_ifindex = static_cast<int>(idx);
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&ll), sizeof ll) != 0) {
            const std::string e = std::strerror(errno);
            ::close(fd);
            return core::error{"packet socket on " + o_.packet_iface + ": bind: " + e};
        }
        const int one = 1, buf = 8 << 20;
        ::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
        if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) != 0)
            ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
        pk_fd_ = fd;
        pk_to_ = sockaddr_ll{};
        pk_to_.sll_family = AF_PACKET;
        pk_to_.sll_ifindex = static_cast<int>(idx);
        pk_to_.sll_protocol = htons(v6() ? ETH_P_IPV6 : ETH_P_IP);
        if (o_.packet_dst_mac && !o_.remote.unspecified()) macs_[o_.remote] = *o_.packet_dst_mac;
        return core::ok_status();
    }
    // The destination's MAC for the packet socket, or null: the frame then
    // leaves by its UDP socket. The neighbour table is read again for an
    // address at most every 100 ms (not per frame while it is missing).
    const wire::mac_addr* packet_mac(const ip_address& dst) {
        if (auto it = macs_.find(dst); it != macs_.end()) return &it->second;
        if (dst.version != 4) return nullptr;
        const auto now = std::chrono::steady_clock::now();
        auto& next = mac_retry_[dst];
        if (now < next) return nullptr;
        next = now + std::chrono::milliseconds(100);
        auto m = neighbour_mac(dst.v4);
        if (!m) return nullptr;
        return &(macs_[dst] = *m);
    }
    // The queued frames for the packet socket, in the order queued, in
    // sendmmsg calls; marks them sent.
    template <std::size_t N>  // N: k_max_batch, declared below
    void flush_packet(std::array<bool, N>& sent) {
        unsigned n = 0;
        for (std::size_t i = 0; i < queued_; ++i) {
            if (queue_[i].sock) continue;
            iov_tx_[n] = iovec{queue_[i].buf.data(), queue_[i].len};
            auto& m = mmsg_tx_[n].msg_hdr;
            m = msghdr{};
            m.msg_name = &pk_to_;
            m.msg_namelen = sizeof pk_to_;
            m.msg_iov = &iov_tx_[n];
            m.msg_iovlen = 1;
            sent[i] = true;
            ++n;
        }
        const auto before = stats_.frames_out;
        send_run(pk_fd_, n);
        stats_.packet_out += stats_.frames_out - before;
    }
    // sendmmsg of the first n of mmsg_tx_, counted; an error is reported
    // by the next send().
    void send_run(int fd, unsigned n) {
        unsigned off = 0;
        while (off < n) {
            const int rc = ::sendmmsg(fd, mmsg_tx_.data() + off, n - off, 0);
            if (rc < 0) {
                if (errno == EINTR) continue;
                stats_.send_errors += n - off;  // the rest of the run is lost
                if (deferred_error_.empty()) deferred_error_ = std::string("sendmmsg: ") + std::strerror(errno);
                break;
            }
            stats_.frames_out += static_cast<unsigned>(rc);
            off += static_cast<unsigned>(rc);
        }
    }
    std::optional<std::size_t> local_index(const ip_address& a) const {
        for (std::size_t i = 0; i < locals_.size(); ++i)
            if (locals_[i] == a) return i;
        return std::nullopt;
    }
    struct rx_sock {
        rx_sock(asio::io_context& io, ip_address a) : s(io), local(a) {}
        udp::socket s;
        ip_address local;         // the frames' destination
        std::uint64_t lost = 0;   // the socket's drops so far (SO_RXQ_OVFL)
    };
    core::status open_rx(udp::socket& s, const ip_address& local) {
        boost::system::error_code ec;
        s.open(v6() ? udp::v6() : udp::v4(), ec);
        const int one = 1;
        if (!ec && v6()) ::setsockopt(s.native_handle(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (!ec) s.bind(udp::endpoint(addr(local), o_.listen_port), ec);
        if (ec) return core::error{"UDP " + ip_text(local) + " port " + std::to_string(o_.listen_port) + ": " + ec.message()};
        if (v6()) {
            ::setsockopt(s.native_handle(), IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof one);
            ::setsockopt(s.native_handle(), IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof one);
        } else {
            ::setsockopt(s.native_handle(), IPPROTO_IP, IP_RECVTOS, &one, sizeof one);
            ::setsockopt(s.native_handle(), IPPROTO_IP, IP_RECVTTL, &one, sizeof one);
        }
        ::setsockopt(s.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);  // port::rx's wire_ns
        ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);     // port_stats::lost_in
        // 8 MiB: about a thousand 4 KiB frames (the kernel counts each
        // one's buffer, about twice its size) for a burst that arrives while
        // this process is held. SO_RCVBUF is capped at net.core.rmem_max
        // (4 MiB here, and the engine overflowed it beside a fast DUT);
        // SO_RCVBUFFORCE is not, with CAP_NET_ADMIN.
        const int buf = 8 << 20;
        if (::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0)
            ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
        s.non_blocking(true, ec);
        return core::ok_status();
    }
    struct tx_sock {
        explicit tx_sock(asio::io_context& io) : s(io) {}
        udp::socket s;
        int tos = -1;
        std::uint64_t used = 0;  // when last sent from (use_clock_)
    };

    // The send socket of a source port. At most max_tx_sockets stay open: a
    // long-lived port (mrct-refnic, connection after connection, each on new
    // random source ports) closes the one used least recently to open a new
    // one, after sending what is queued (queued frames point at their socket).
    core::result<tx_sock*> tx_socket(std::size_t from, std::uint16_t sport) {
        if (auto it = tx_.find({from, sport}); it != tx_.end()) {
            it->second->used = ++use_clock_;
            return it->second.get();
        }
        if (o_.max_tx_sockets == 0) return core::error{"no send sockets allowed (max_tx_sockets 0)"};
        if (tx_.size() >= o_.max_tx_sockets) {
            flush();
            auto oldest = tx_.begin();
            for (auto it = tx_.begin(); it != tx_.end(); ++it)
                if (it->second->used < oldest->second->used) oldest = it;
            boost::system::error_code ec;
            oldest->second->s.close(ec);
            tx_.erase(oldest);
            ++stats_.tx_sockets_closed;
        }
        auto t = std::make_unique<tx_sock>(io_);
        boost::system::error_code ec;
        t->s.open(v6() ? udp::v6() : udp::v4(), ec);
        if (!ec) {
            if (v6()) {  // no fragmentation by the sender
                const int one = 1, pmtu = IPV6_PMTUDISC_DO;
                ::setsockopt(t->s.native_handle(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
                ::setsockopt(t->s.native_handle(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
            } else {  // DF set, and (unconnected) Identification 0 (MR-HDR-6)
                const int pmtu = IP_PMTUDISC_DO;
                ::setsockopt(t->s.native_handle(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
            }
            t->s.bind(udp::endpoint(addr(locals_[from]), sport), ec);
        }
        if (ec) return core::error{"UDP source port " + std::to_string(sport) + (from ? " of " + ip_text(locals_[from]) : "") + ": " +
                                   ec.message()};
        auto* p = t.get();
        p->used = ++use_clock_;
        tx_.emplace(std::make_pair(from, sport), std::move(t));
        return p;
    }

    void arm(rx_sock& r) {
        r.s.async_wait(udp::socket::wait_read, [this, &r](const boost::system::error_code& ec) {
            if (ec) return;
            read_batch(r);
            arm(r);
        });
    }

    // One recvmmsg per wake: up to `batch` datagrams in one system call
    // (a call per datagram, and one more to find the socket drained, made
    // reads the engine's costliest syscalls on a busy wire; issue 24).
    void read_batch(rx_sock& r) {
        const std::size_t n = std::min<std::size_t>(o_.batch, k_max_batch);
        for (std::size_t i = 0; i < n; ++i) {
            auto& m = msgs_[i].msg_hdr;
            iov_[i] = iovec{bufs_.data() + i * k_buf, k_buf};
            m = msghdr{};
            m.msg_name = &from_[i];
            m.msg_namelen = sizeof from_[i];
            m.msg_iov = &iov_[i];
            m.msg_iovlen = 1;
            m.msg_control = control_[i].b;
            m.msg_controllen = sizeof control_[i].b;
        }
        const int got = ::recvmmsg(r.s.native_handle(), msgs_.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
        for (int i = 0; i < got; ++i) take(r, msgs_[static_cast<std::size_t>(i)].msg_hdr, msgs_[static_cast<std::size_t>(i)].msg_len,
                                           from_[static_cast<std::size_t>(i)]);
    }

    void take(rx_sock& r, msghdr& m, unsigned len, const sockaddr_storage& from) {
        std::uint8_t tos = 0, ttl = 64;
        std::int64_t wire_ns = 0;
        for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                timespec ts{};
                std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
                wire_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
            }
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
                std::uint32_t dropped = 0;  // the socket's drops so far
                std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
                if (dropped > r.lost) {
                    stats_.lost_in += dropped - r.lost;
                    r.lost = dropped;
                }
            }
            if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
                tos = *reinterpret_cast<const std::uint8_t*>(CMSG_DATA(c));
            if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
                ttl = static_cast<std::uint8_t>(*reinterpret_cast<const int*>(CMSG_DATA(c)));
            if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)
                tos = static_cast<std::uint8_t>(*reinterpret_cast<const int*>(CMSG_DATA(c)));
            if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)
                ttl = static_cast<std::uint8_t>(*reinterpret_cast<const int*>(CMSG_DATA(c)));
        }
        ip_address src;
        std::uint16_t sport;
        if (v6()) {
            const auto* a = reinterpret_cast<const sockaddr_in6*>(&from);
            src.version = 6;
            std::memcpy(src.v6.data(), &a->sin6_addr, 16);
            sport = ntohs(a->sin6_port);
        } else {
            const auto* a = reinterpret_cast<const sockaddr_in*>(&from);
            std::memcpy(src.v4.data(), &a->sin_addr, 4);
            sport = ntohs(a->sin_port);
        }
        if (!o_.remote.unspecified() && src != o_.remote) {
            ++stats_.foreign_in;
            return;
        }
        ++stats_.frames_in;
        auto f = frame_from_datagram(src, sport, r.local, o_.listen_port, tos, ttl,
                                     core::bytes_view(static_cast<const std::uint8_t*>(m.msg_iov->iov_base), len));
        if (cb_) cb_(f, wire_ns);
    }

    // Sends what send() queued: per socket, in the order queued, one
    // sendmmsg for each run of frames with the same TOS (set on the socket
    // before the run). Frames of different sockets (paths) may leave in
    // another order than queued within one batch: microseconds apart, as
    // on any multi-path wire.
    void flush() {
        flush_posted_ = false;
        if (!queued_) return;
        std::size_t done = 0;
        std::array<bool, k_max_batch> sent{};
        if (pk_fd_ >= 0) {  // the packet socket's frames first (all of them, but while a MAC was unknown)
            flush_packet(sent);
            for (bool b : sent) done += b;
        }
        while (done < queued_) {
            std::size_t first = 0;
            while (sent[first]) ++first;
            tx_sock* sock = queue_[first].sock;
            const std::uint8_t tos = queue_[first].tos;
            unsigned n = 0;
            for (std::size_t i = first; i < queued_; ++i) {
                if (sent[i] || queue_[i].sock != sock) continue;
                if (queue_[i].tos != tos) break;  // keeps the socket's order: the rest in a later run
                auto& q = queue_[i];
                iov_tx_[n] = iovec{q.buf.data(), q.len};
                auto& m = mmsg_tx_[n].msg_hdr;
                m = msghdr{};
                m.msg_name = &q.to;
                m.msg_namelen = q.to_len;
                m.msg_iov = &iov_tx_[n];
                m.msg_iovlen = 1;
                sent[i] = true;
                ++n;
            }
            done += n;
            if (sock->tos != tos) {
                const int t = tos;
                const int rc = v6() ? ::setsockopt(sock->s.native_handle(), IPPROTO_IPV6, IPV6_TCLASS, &t, sizeof t)
                                    : ::setsockopt(sock->s.native_handle(), IPPROTO_IP, IP_TOS, &t, sizeof t);
                if (rc != 0) {
                    stats_.send_errors += n;
                    if (deferred_error_.empty()) deferred_error_ = std::string("IP_TOS/IPV6_TCLASS: ") + std::strerror(errno);
                    continue;
                }
                sock->tos = tos;
            }
            send_run(sock->s.native_handle(), n);
        }
        queued_ = 0;
    }

    // A datagram's room: the largest frame either side hands over
    // (MRCT_DUT_MAX_FRAME); a longer one is cut here, and its decode says so.
    static constexpr std::size_t k_buf = 16384, k_max_batch = 64;
    std::vector<std::uint8_t> bufs_ = std::vector<std::uint8_t>(k_buf * k_max_batch);
    std::array<mmsghdr, k_max_batch> msgs_{};
    std::array<iovec, k_max_batch> iov_{};
    std::array<sockaddr_storage, k_max_batch> from_{};
    struct alignas(cmsghdr) control_buf {
        char b[256];
    };
    std::array<control_buf, k_max_batch> control_{};

    struct queued {
        tx_sock* sock = nullptr;  // null: a whole frame for the packet socket
        std::uint8_t tos = 0;
        sockaddr_storage to{};
        socklen_t to_len = 0;
        std::size_t len = 0;
        std::vector<std::uint8_t> buf;
    };
    std::array<queued, k_max_batch> queue_{};
    std::size_t queued_ = 0;
    std::uint64_t use_clock_ = 0;
    bool flush_posted_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // a posted flush outliving the port does nothing
    std::string deferred_error_;
    std::array<mmsghdr, k_max_batch> mmsg_tx_{};
    std::array<iovec, k_max_batch> iov_tx_{};
    int pk_fd_ = -1;  // udp_options::packet_iface
    sockaddr_ll pk_to_{};
    wire::mac_addr pk_src_mac_{};
    std::map<ip_address, wire::mac_addr> macs_;  // destinations' MACs for the packet socket and raw frames
    std::map<ip_address, std::chrono::steady_clock::time_point> mac_retry_;  // when a missing MAC is looked up again

    asio::io_context& io_;
    udp_options o_;
    std::unique_ptr<port> raw_;  // udp_options::raw_iface: frames no socket can reproduce
    wire::mac_addr raw_mac_{};
    core::byte_buffer raw_out_;
    std::vector<ip_address> locals_;  // udp_options::local, then also_local
    if_drop_watch watch_;
    std::vector<std::unique_ptr<rx_sock>> rx_;
    std::map<std::pair<std::size_t, std::uint16_t>, std::unique_ptr<tx_sock>> tx_;  // (local address, source port)
    rx cb_;
    port_stats stats_;
};

}  // namespace

core::status bind_sink(boost::asio::ip::udp::socket& s, const ip_address& local) {
    boost::system::error_code ec;
    s.open(local.version == 6 ? udp::v6() : udp::v4(), ec);
    const int one = 1, small = 4096;
    if (!ec && local.version == 6) ::setsockopt(s.native_handle(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (!ec) s.bind(udp::endpoint(addr(local), 4791), ec);
    if (ec) return core::error{"UDP " + ip_text(local) + " port 4791: " + ec.message()};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    return core::ok_status();
}

core::result<std::unique_ptr<port>> make_udp_port(boost::asio::io_context& io, const udp_options& o) {
    auto p = std::make_unique<udp_port>(io, o);
    if (auto st = p->open(); !st) return st.err();
    return std::unique_ptr<port>(std::move(p));
}

}  // namespace mrct::netio
