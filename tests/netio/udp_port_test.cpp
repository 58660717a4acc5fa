// The UDP port over loopback sockets, and receive timestamps.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>

#include "netio/port.h"
#include "frames.h"

using namespace mrct;

namespace {

// Two UDP ports talking to each other on loopback addresses; {nullptr, nullptr}
// (and a warning) where UDP 4791 cannot be bound.
std::pair<std::unique_ptr<netio::port>, std::unique_ptr<netio::port>> loopback_pair(boost::asio::io_context& io,
                                                                                  const char* ip_a, const char* ip_b,
                                                                                  std::size_t max_tx_sockets = 512,
                                                                                  std::size_t batch_b = 64) {
    netio::udp_options oa, ob;
    oa.local = *netio::parse_ip(ip_a);
    oa.remote = ob.local = *netio::parse_ip(ip_b);
    ob.remote = oa.local;
    oa.max_tx_sockets = max_tx_sockets;
    ob.batch = batch_b;
    auto a = netio::make_udp_port(io, oa);
    auto b = netio::make_udp_port(io, ob);
    if (!a || !b) {
        WARN("UDP 4791 on loopback unavailable here: " << (!a ? a.err().message : b.err().message));
        return {};
    }
    return {std::move(*a), std::move(*b)};
}

}  // namespace

TEST_CASE("wire_age: how long ago a kernel timestamp was; 0 when there is none") {
    CHECK(netio::wire_age(0) == core::nanos{0});
    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(netio::wire_age(now_ns + 1'000'000'000) == core::nanos{0});  // a stamp in the future
    const auto a = netio::wire_age(now_ns - 5'000'000);
    CHECK(a >= core::nanos{5'000'000});
    CHECK(a < core::nanos{5'000'000'000});
}

TEST_CASE("udp port on loopback: a frame crosses with its kernel receive timestamp") {
    // Two ports on 127.0.0.1 and 127.0.0.2 (both loopback on Linux), UDP 4791.
    boost::asio::io_context io;
    auto [a, b] = loopback_pair(io, "127.0.0.1", "127.0.0.2");
    if (!a || !b) return;
    core::byte_buffer got;
    std::int64_t stamp = 0;
    b->start([&](core::bytes_view f, std::int64_t wire_ns) {
        got.assign(f.begin(), f.end());
        stamp = wire_ns;
    });
    a->start([](core::bytes_view, std::int64_t) {});
    const auto sent = wire::build(test::write_spec({127, 0, 0, 1}, {127, 0, 0, 2}));
    const auto before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    REQUIRE(a->send(sent).ok());
    for (int i = 0; i < 200 && got.empty(); ++i) io.run_for(std::chrono::milliseconds(5));
    REQUIRE_FALSE(got.empty());
    CHECK(std::equal(got.begin() + 12, got.end(), sent.begin() + 12));
    CHECK(stamp >= before);
    CHECK(netio::wire_age(stamp) < core::nanos{std::chrono::seconds(5)});
    // Its interface's own drops are watched (D144): lo, 127.0.0.2 in its prefix.
    CHECK(b->interface_drops().ifaces == "lo");
    a->stop();
    b->stop();
}

TEST_CASE("udp port: a sender's turn sends what the port holds and says whether frames wait to be read (D116)") {
    boost::asio::io_context io;
    auto [a, b] = loopback_pair(io, "127.0.0.1", "127.0.0.2");
    if (!a || !b) return;
    int got = 0;
    b->start([&](core::bytes_view, std::int64_t) { ++got; });
    a->start([](core::bytes_view, std::int64_t) {});
    CHECK_FALSE(b->tx_turn());  // nothing sent to b yet
    // a holds the frame until its flush handler runs; its turn sends it now,
    // without the io_context running, and b's socket then has it waiting.
    REQUIRE(a->send(wire::build(test::write_spec({127, 0, 0, 1}, {127, 0, 0, 2}))).ok());
    CHECK(a->stats().frames_out == 0);
    CHECK_FALSE(a->tx_turn());  // nothing waits for a
    CHECK(a->stats().frames_out == 1);
    CHECK(b->tx_turn());
    for (int i = 0; i < 200 && !got; ++i) io.run_for(std::chrono::milliseconds(5));
    CHECK(got == 1);
    CHECK_FALSE(b->tx_turn());  // read: nothing waits any more
    a->stop();
    b->stop();
}

TEST_CASE("udp port: more frames waiting than one read's batch are all taken in, with nothing more arriving") {
    // b reads 4 datagrams a wake; 10 wait in its socket before it starts.
    // Asio's reactor watches sockets edge-triggered (EPOLLET), and the port
    // re-arms a wait after each batch: the 6 left behind are read only
    // because arming a wait modifies the epoll entry (EPOLL_CTL_MOD), which
    // reports a socket still readable at once. A port that armed its wait
    // any other way would leave them unread until an 11th frame arrived: a
    // DUT waiting for ACKs of frames it never read (suspected, and ruled out,
    // for the reference's loaded silences; docs/testplan.md).
    boost::asio::io_context io;
    auto [a, b] = loopback_pair(io, "127.0.0.1", "127.0.0.2", 512, 4);
    if (!a || !b) return;
    a->start([](core::bytes_view, std::int64_t) {});
    for (int i = 0; i < 10; ++i) REQUIRE(a->send(wire::build(test::write_spec({127, 0, 0, 1}, {127, 0, 0, 2}))).ok());
    CHECK_FALSE(a->tx_turn());  // all 10 sent now
    REQUIRE(b->tx_turn());      // and waiting in b's socket
    int got = 0;
    b->start([&](core::bytes_view, std::int64_t) { ++got; });
    for (int i = 0; i < 40 && got < 10; ++i) io.run_for(std::chrono::milliseconds(5));
    CHECK(got == 10);
    CHECK_FALSE(b->tx_turn());
    a->stop();
    b->stop();
}

TEST_CASE("udp port: send sockets stay within max_tx_sockets, the least recently used closed (a long-lived DUT)") {
    boost::asio::io_context io;
    auto [a, b] = loopback_pair(io, "127.0.0.3", "127.0.0.4", 2);
    if (!a || !b) return;
    std::vector<std::uint16_t> sports;
    b->start([&](core::bytes_view f, std::int64_t) { sports.push_back(static_cast<std::uint16_t>((f[34] << 8) | f[35])); });
    a->start([](core::bytes_view, std::int64_t) {});
    // Ports 50001, 50002, 50001 again (now the most recent), then 50003:
    // 50002 is the one closed; 50001 sends again from its open socket.
    for (std::uint16_t sp : {50001, 50002, 50001, 50003, 50001, 50002}) {
        auto spec = test::write_spec({127, 0, 0, 3}, {127, 0, 0, 4});
        spec.udp.sport = sp;
        REQUIRE(a->send(wire::build(spec)).ok());
        io.poll();  // the posted flush
    }
    for (int i = 0; i < 200 && sports.size() < 6; ++i) io.run_for(std::chrono::milliseconds(5));
    CHECK(sports == std::vector<std::uint16_t>{50001, 50002, 50001, 50003, 50001, 50002});
    CHECK(a->stats().frames_out == 6);
    CHECK(a->stats().tx_sockets_closed == 2);  // 50002 for 50003, then 50003 for 50002 again
    a->stop();
    b->stop();
}

TEST_CASE("udp port: a frame no socket can send is refused, or leaves raw on --raw-iface's interface (which must exist)") {
    boost::asio::io_context io;
    auto [a, b] = loopback_pair(io, "127.0.0.1", "127.0.0.2");
    if (!a || !b) return;
    auto spec = test::write_spec({127, 0, 0, 1}, {127, 0, 0, 2});
    spec.ipv4.df = false;  // what the bug profile df-clear sends
    spec.ipv4.identification = 7;
    const auto st = a->send(wire::build(spec));
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("needs raw_frames"));
    a->stop();
    b->stop();
    netio::udp_options o;
    o.local = *netio::parse_ip("127.0.0.3");
    o.raw_iface = "no-such-iface0";
    auto p = netio::make_udp_port(io, o);
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.err().message, Catch::Contains("no-such-iface0"));
}

TEST_CASE("udp port with more local addresses: each peer's frames leave from its own address, the DUT's answers come back to it") {
    // The engine on 127.0.0.5 and 127.0.0.6 (a case with two peers), the
    // DUT on 127.0.0.7 answering each frame to where it came from.
    boost::asio::io_context io;
    netio::udp_options oe, od;
    oe.local = *netio::parse_ip("127.0.0.5");
    oe.also_local = {*netio::parse_ip("127.0.0.6")};
    oe.remote = od.local = *netio::parse_ip("127.0.0.7");
    auto e = netio::make_udp_port(io, oe);
    auto d = netio::make_udp_port(io, od);
    if (!e || !d) {
        WARN("UDP 4791 on loopback unavailable here: " << (!e ? e.err().message : d.err().message));
        return;
    }
    auto& eng = **e;
    auto& dut = **d;
    std::vector<std::pair<std::array<std::uint8_t, 4>, std::uint16_t>> at_dut;  // (source address, source port)
    std::vector<std::array<std::uint8_t, 4>> back;                               // destination of each answer
    dut.start([&](core::bytes_view f, std::int64_t) {
        const auto h = wire::decode_ethernet(f);
        REQUIRE(h.ok());
        at_dut.push_back({h.f.ipv4.src, h.f.udp.sport});
        auto answer = test::write_spec({127, 0, 0, 7}, h.f.ipv4.src);
        REQUIRE(dut.send(wire::build(answer)).ok());
    });
    eng.start([&](core::bytes_view f, std::int64_t) { back.push_back(wire::decode_ethernet(f).f.ipv4.dst); });
    for (std::array<std::uint8_t, 4> from : {std::array<std::uint8_t, 4>{127, 0, 0, 5}, {127, 0, 0, 6}}) {
        auto spec = test::write_spec(from, {127, 0, 0, 7});
        spec.udp.sport = 50100;  // the same source port on both addresses: two sockets
        REQUIRE(eng.send(wire::build(spec)).ok());
    }
    for (int i = 0; i < 200 && back.size() < 2; ++i) io.run_for(std::chrono::milliseconds(5));
    REQUIRE(at_dut.size() == 2);
    CHECK(at_dut[0] == std::make_pair(std::array<std::uint8_t, 4>{127, 0, 0, 5}, std::uint16_t{50100}));
    CHECK(at_dut[1] == std::make_pair(std::array<std::uint8_t, 4>{127, 0, 0, 6}, std::uint16_t{50100}));
    REQUIRE(back.size() == 2);
    std::sort(back.begin(), back.end());
    CHECK(back == std::vector<std::array<std::uint8_t, 4>>{{127, 0, 0, 5}, {127, 0, 0, 6}});
    // A source that is none of the port's addresses is refused.
    CHECK_FALSE(eng.send(wire::build(test::write_spec({127, 0, 0, 8}, {127, 0, 0, 7}))).ok());
    eng.stop();
    dut.stop();
}

namespace {

// This thread in a network namespace of its own while it lives, loopback up
// and taking 127/8 frames that come in without a route attached (a packet
// socket's: route_localnet), then back in the one it came from. ok() is
// false where that is not allowed (not root).
class own_netns {
public:
    own_netns() {
        back_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (back_ < 0 || ::unshare(CLONE_NEWNET) != 0) return;
        moved_ = true;
        const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ifreq r{};
        std::strncpy(r.ifr_name, "lo", IFNAMSIZ - 1);
        const bool up = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &r) == 0 && (r.ifr_flags |= IFF_UP, ::ioctl(fd, SIOCSIFFLAGS, &r) == 0);
        if (fd >= 0) ::close(fd);
        std::ofstream("/proc/sys/net/ipv4/conf/lo/route_localnet") << "1\n";
        std::ifstream in("/proc/sys/net/ipv4/conf/lo/route_localnet");
        int v = 0;
        in >> v;
        ok_ = up && v == 1;
    }
    ~own_netns() {
        if (moved_) ::setns(back_, CLONE_NEWNET);
        if (back_ >= 0) ::close(back_);
    }
    bool ok() const { return ok_; }

private:
    int back_ = -1;
    bool moved_ = false, ok_ = false;
};

}  // namespace

TEST_CASE("udp port with packet_iface: frames leave verbatim by an AF_PACKET socket, or by their UDP socket while the MAC is unknown") {
    // The engine's port on 127.0.0.9 sends through a packet socket on lo
    // (whose MAC, and every neighbour's, is all zeros) to a DUT port on
    // 127.0.0.10, in a network namespace of the test's own. A packet socket
    // sends the frame as built: its TTL of 17 arrives; a UDP socket would
    // have written the kernel's 64.
    own_netns ns;
    if (!ns.ok()) {
        WARN("no network namespace of its own here (root needed): packet_iface not tested");
        return;
    }
    boost::asio::io_context io;
    netio::udp_options oe, od;
    oe.local = *netio::parse_ip("127.0.0.9");
    oe.remote = od.local = *netio::parse_ip("127.0.0.10");
    od.remote = oe.local;
    oe.packet_iface = "lo";
    auto d = netio::make_udp_port(io, od);
    if (!d) {
        WARN("UDP 4791 on loopback unavailable here: " << d.err().message);
        return;
    }
    auto send_one = [&](std::optional<wire::mac_addr> mac) -> std::optional<std::uint8_t> {
        auto o = oe;
        o.packet_dst_mac = mac;
        auto e = netio::make_udp_port(io, o);
        if (!e) {
            WARN("no packet socket here (CAP_NET_RAW?): " << e.err().message);
            return std::nullopt;
        }
        std::optional<std::uint8_t> ttl;
        (*d)->start([&](core::bytes_view f, std::int64_t) { ttl = wire::decode_ethernet(f).f.ipv4.ttl; });
        (*e)->start([](core::bytes_view, std::int64_t) {});
        auto spec = test::write_spec({127, 0, 0, 9}, {127, 0, 0, 10});
        spec.ipv4.ttl = 17;
        REQUIRE((*e)->send(wire::build(spec)).ok());
        for (int i = 0; i < 200 && !ttl; ++i) io.run_for(std::chrono::milliseconds(5));
        CHECK((*e)->stats().frames_out == 1);
        CHECK((*e)->stats().packet_out == (mac ? 1u : 0u));
        (*e)->stop();
        return ttl;
    };
    const auto packet = send_one(wire::mac_addr{});
    REQUIRE(packet);
    CHECK(*packet == 17);
    // No MAC given, and 127.0.0.10 is in no neighbour table: its UDP socket.
    const auto socket = send_one(std::nullopt);
    REQUIRE(socket);
    CHECK(*socket == 64);
    (*d)->stop();
    // An interface that does not exist is named.
    auto o = oe;
    o.packet_iface = "no-such-iface0";
    auto p = netio::make_udp_port(io, o);
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.err().message, Catch::Contains("no-such-iface0"));
}
