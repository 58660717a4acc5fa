// The DPDK port over net_ring0, a DPDK ring PMD whose transmit ring is its own
// receive ring: what the port sends comes back to it. Runs the EAL without
// hugepages, PCI or shared config (needs root, as CI is).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "capture/pcap_file.h"

#include "frames.h"
#include "netio/dpdk_test_eal.h"
#include "netio/port.h"

using namespace mrct;

namespace {

// Puts a frame on the port's transmit ring behind the mrct port's back: on
// net_ring it is received as if it came from the wire.
void inject(std::uint16_t port, const core::byte_buffer& f) {
    static rte_mempool* pool = rte_pktmbuf_pool_create("test_pool", 63, 0, 0, RTE_PKTMBUF_HEADROOM + 8192,
                                                       static_cast<int>(rte_socket_id()));
    REQUIRE(pool);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    REQUIRE(m);
    auto* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size()));
    REQUIRE(p);
    std::memcpy(p, f.data(), f.size());
    REQUIRE(rte_eth_tx_burst(port, 0, &m, 1) == 1);
}

// A wire port's options: us at 127.0.0.`us`, the DUT at 127.0.0.`dut` (loopback
// addresses the other tests do not bind), the DUT's MAC ending in `dut`.
netio::dpdk_options wire_options(std::uint8_t us, std::uint8_t dut, std::string port = "") {
    netio::dpdk_options o;
    o.eal_args = test::k_dpdk_test_eal;
    o.port = std::move(port);
    o.local = *netio::parse_ip("127.0.0." + std::to_string(us));
    o.remote = *netio::parse_ip("127.0.0." + std::to_string(dut));
    o.remote_mac = wire::mac_addr{0x02, 0, 0, 0, 0, dut};
    return o;
}

}  // namespace

TEST_CASE("dpdk port on net_ring0: sends, and passes on only the DUT's MetaRoCE frames to us") {
    boost::asio::io_context io;
    const auto o = wire_options(3, 4);
    auto p = netio::make_dpdk_port(io, o);
    INFO((p.ok() ? std::string() : p.err().message));
    REQUIRE(p.ok());
    std::vector<core::byte_buffer> got;
    std::vector<std::int64_t> stamps;
    (*p)->start([&](core::bytes_view f, std::int64_t wire_ns) {
        got.emplace_back(f.begin(), f.end());
        stamps.push_back(wire_ns);
    });
    auto settle = [&] { io.run_for(std::chrono::milliseconds(20)); };

    // Our own frame loops back: not from the DUT, dropped and counted.
    const auto ours = wire::build(test::write_spec({127, 0, 0, 3}, {127, 0, 0, 4}));
    REQUIRE((*p)->send(ours).ok());
    settle();
    CHECK(got.empty());
    CHECK((*p)->stats().frames_out == 1);
    CHECK((*p)->stats().foreign_in == 1);

    // The port only sends from local to the DUT.
    CHECK_FALSE((*p)->send(wire::build(test::write_spec({127, 0, 0, 9}, {127, 0, 0, 4}))).ok());

    // A frame of the DUT to us arrives, byte for byte, stamped with the time
    // its burst was read: net_ring offers no receive timestamps, so the port
    // says its stamps are not arrival times.
    CHECK_FALSE((*p)->rx_stamped());
    const auto theirs = wire::build(test::write_spec({127, 0, 0, 4}, {127, 0, 0, 3}));
    inject(0, theirs);
    settle();
    REQUIRE(got.size() == 1);
    CHECK(got[0] == theirs);
    CHECK(stamps[0] > 0);
    CHECK(netio::wire_age(stamps[0]) < std::chrono::seconds(1));
    CHECK((*p)->stats().frames_in == 1);

    // The DUT's UDP to another port is not MetaRoCE: ignored.
    auto spec = test::write_spec({127, 0, 0, 4}, {127, 0, 0, 3});
    spec.udp.dport = 53;
    inject(0, wire::build(spec));
    settle();
    CHECK(got.size() == 1);

    // A PAUSE frame from the DUT's MAC is passed on (MR-CC-5: wire_format
    // judges it); one from another MAC is foreign.
    core::byte_buffer pause;
    wire::pause_frame_into(*o.remote_mac, 0xFFFF, pause);
    inject(0, pause);
    core::byte_buffer switch_pause;
    wire::pause_frame_into({0x02, 0, 0, 0, 0, 0x99}, 0xFFFF, switch_pause);
    inject(0, switch_pause);
    settle();
    REQUIRE(got.size() == 2);
    CHECK(got[1] == pause);
    CHECK((*p)->stats().frames_in == 2);
    CHECK((*p)->stats().foreign_in == 2);

    // Out of buffers (ENOMEM): every mbuf of the process's pool taken, a send
    // fails, says why and is counted (the engine makes it the case's error,
    // "wire: DPDK: no mbuf"); nothing is sent. With the buffers back, it sends.
    rte_mempool* pool = rte_mempool_lookup("mrct_pool");
    REQUIRE(pool);
    std::vector<rte_mbuf*> taken;
    while (rte_mbuf* m = rte_pktmbuf_alloc(pool)) taken.push_back(m);
    CHECK(taken.size() >= 8000);  // the pool's 8191, less any the rings hold
    const auto out = (*p)->stats().frames_out;
    const auto errors = (*p)->stats().send_errors;
    const auto st = (*p)->send(ours);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("no mbuf"));
    CHECK((*p)->stats().send_errors == errors + 1);
    for (auto* m : taken) rte_pktmbuf_free(m);
    REQUIRE((*p)->send(ours).ok());
    settle();
    CHECK((*p)->stats().frames_out == out + 1);
    (*p)->stop();

    // A second port on the same process must use the EAL's arguments.
    auto other = o;
    other.eal_args = "--no-huge";
    auto q = netio::make_dpdk_port(io, other);
    REQUIRE_FALSE(q.ok());
    CHECK_THAT(q.err().message, Catch::Contains("already up with other arguments"));
}

// Frames the port could not take in count as lost_in from the port's open:
// here net_pcap reading a file (created at run time, rte_vdev_init), which
// counts a frame it read with no mbuf to put it in as rx_nombuf, with every
// mbuf of the process's pool taken. The frame the open's drain lost is before
// the baseline; each later one is lost_in; with the buffers back, the rest
// arrive: frames_in + lost_in == every frame after the drain's.
TEST_CASE("dpdk port: frames the device had no buffer for are lost_in, counted from the open") {
    boost::asio::io_context io;
    {  // the EAL up (through a port of its own arguments' vdev), as the process's other ports find it
        auto r = netio::make_dpdk_port(io, wire_options(3, 4));
        INFO((r.ok() ? std::string() : r.err().message));
        REQUIRE(r.ok());
        (*r)->stop();
    }
    constexpr int k_frames = 40;
    const std::string file = "/tmp/mrct-dpdk-nombuf-" + std::to_string(::getpid()) + ".pcap";
    {
        auto w = capture::pcap_writer::create(file);
        REQUIRE(w.ok());
        for (int i = 0; i < k_frames; ++i) {
            auto spec = test::write_spec({127, 0, 0, 6}, {127, 0, 0, 5});
            spec.bth.psn = static_cast<std::uint32_t>(i);
            (*w)->write(i * 1000, wire::build(spec));
        }
        REQUIRE((*w)->close().ok());
    }
    rte_mempool* pool = rte_mempool_lookup("mrct_pool");
    REQUIRE(pool);
    std::vector<rte_mbuf*> taken;
    while (rte_mbuf* m = rte_pktmbuf_alloc(pool)) taken.push_back(m);
    REQUIRE(rte_vdev_init("net_pcap_nombuf", ("rx_pcap=" + file).c_str()) == 0);

    auto p = netio::make_dpdk_port(io, wire_options(5, 6, "net_pcap_nombuf"));
    INFO((p.ok() ? std::string() : p.err().message));
    REQUIRE(p.ok());
    CHECK((*p)->stats().lost_in == 0);  // the drain's loss is before the baseline
    int got = 0;
    (*p)->start([&](core::bytes_view, std::int64_t) { ++got; });
    for (int i = 0; i < 2000 && (*p)->stats().lost_in < 10; ++i)  // a bound, not a timing
        io.run_for(std::chrono::microseconds(50));
    const auto lost = (*p)->stats().lost_in;
    CHECK(lost >= 10);
    CHECK(got == 0);
    for (auto* m : taken) rte_pktmbuf_free(m);
    for (int i = 0; i < 2000 && static_cast<std::uint64_t>(got) + (*p)->stats().lost_in < k_frames - 1; ++i)
        io.run_for(std::chrono::microseconds(50));
    CHECK((*p)->stats().lost_in == lost);
    CHECK((*p)->stats().frames_in == static_cast<std::uint64_t>(got));
    CHECK(static_cast<std::uint64_t>(got) + lost == k_frames - 1);
    (*p)->stop();
    // The device stopped (net_pcap closes its file; LeakSanitizer counts it
    // otherwise), not released: its port ID is not handed to a later device
    // the process's set-up record would take for configured.
    std::uint16_t id = 0;
    REQUIRE(rte_eth_dev_get_port_by_name("net_pcap_nombuf", &id) == 0);
    CHECK(rte_eth_dev_stop(id) == 0);
    ::unlink(file.c_str());
}
