// `mrct emulate` with DPDK ports (emulate::run, dpdk:PORT): two pairs of ring
// ports whose rings cross, so that what the test sends on its end of a pair
// is what the emulator receives on its end, and the other way round.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "emulate/emulate.h"
#include "netio/dpdk_test_eal.h"
#include "netio/port.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;

namespace {

core::byte_buffer write_frame(std::uint16_t sport, std::uint8_t src, std::uint8_t dst, std::uint32_t psn) {
    auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(4096, 0x5A));
    spec.udp.sport = sport;
    spec.ipv4.src = {10, 0, 0, src};
    spec.ipv4.dst = {10, 0, 0, dst};
    spec.bth.psn = psn;
    return wire::build(spec);
}

rte_mempool* pool() {
    static rte_mempool* p = rte_pktmbuf_pool_create("emu_test_pool", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 8192,
                                                    static_cast<int>(rte_socket_id()));
    return p;
}

// A pair of ports over two rings: `emu` (the emulator's) receives what
// `peer` (the test's) sends, and the other way round. Returns the emulator's
// port and the test's.
std::pair<std::uint16_t, std::uint16_t> ring_pair(const std::string& emu, const std::string& peer) {
    rte_ring* to_emu = rte_ring_create((emu + "_in").c_str(), 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    rte_ring* from_emu = rte_ring_create((emu + "_out").c_str(), 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    REQUIRE(to_emu);
    REQUIRE(from_emu);
    const int e = rte_eth_from_rings(emu.c_str(), &to_emu, 1, &from_emu, 1, SOCKET_ID_ANY);
    REQUIRE(e >= 0);
    const int p = rte_eth_from_rings(peer.c_str(), &from_emu, 1, &to_emu, 1, SOCKET_ID_ANY);
    REQUIRE(p >= 0);
    const auto id = static_cast<std::uint16_t>(p);
    rte_eth_conf conf{};
    REQUIRE(rte_eth_dev_configure(id, 1, 1, &conf) == 0);
    REQUIRE(rte_eth_rx_queue_setup(id, 0, 1024, SOCKET_ID_ANY, nullptr, pool()) == 0);
    REQUIRE(rte_eth_tx_queue_setup(id, 0, 1024, SOCKET_ID_ANY, nullptr) == 0);
    REQUIRE(rte_eth_dev_start(id) == 0);
    return {static_cast<std::uint16_t>(e), id};
}

// From the test's sender thread: no Catch macros there.
bool send(std::uint16_t port, const core::byte_buffer& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool());
    if (!m) return false;
    auto* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size()));
    if (!p) return false;
    std::memcpy(p, f.data(), f.size());
    return rte_eth_tx_burst(port, 0, &m, 1) == 1;
}

std::vector<core::byte_buffer> drain(std::uint16_t port) {
    std::vector<core::byte_buffer> out;
    rte_mbuf* b[32];
    while (const auto n = rte_eth_rx_burst(port, 0, b, 32))
        for (std::uint16_t i = 0; i < n; ++i) {
            const auto* d = rte_pktmbuf_mtod(b[i], const std::uint8_t*);
            out.emplace_back(d, d + b[i]->data_len);
            rte_pktmbuf_free(b[i]);
        }
    return out;
}

}  // namespace

TEST_CASE("emulate over DPDK ports: frames pass both ways byte for byte, counted per path, stages applied") {
    // The EAL up (as every test of this binary has it) before the rings
    // exist; the rings once per process (GENERATE runs this case twice).
    static const auto peers = [] {
        boost::asio::io_context io;
        netio::dpdk_options up;
        up.eal_args = test::k_dpdk_test_eal;
        up.port = "net_ring0";
        REQUIRE(netio::make_dpdk_tap_port(io, up).ok());
        REQUIRE(pool());
        return std::pair{ring_pair("emu_a", "peer_a"), ring_pair("emu_b", "peer_b")};
    }();
    const auto [emu_a, peer_a] = peers.first;
    const auto [emu_b, peer_b] = peers.second;

    // Sent 50 ms into the run (the emulator drains its ports when it opens them).
    std::vector<core::byte_buffer> a_to_b, b_to_a;
    for (std::uint32_t i = 0; i < 20; ++i) a_to_b.push_back(write_frame(static_cast<std::uint16_t>(49152 + i % 4), 1, 2, i));
    for (std::uint32_t i = 0; i < 5; ++i) b_to_a.push_back(write_frame(50000, 2, 1, i));
    std::atomic<unsigned> sent{0};
    std::thread sender([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (auto& f : a_to_b) sent += send(peer_a, f);
        for (auto& f : b_to_a) sent += send(peer_b, f);
    });

    const auto out = std::filesystem::temp_directory_path() / ("mrct-emulate-dpdk-" + std::to_string(::getpid()));
    emulate::options o;
    o.port_a = "dpdk:" + std::to_string(emu_a);  // by index (a name works as well)
    o.port_b = "dpdk:" + std::to_string(emu_b);
    o.eal = test::k_dpdk_test_eal;
    // Path 0 of B->A drops everything; A->B's paths are plain wires, 50 us of delay.
    auto cfg = emulate::parse_config("paths: 2\ndelay: 50us\nimpair:\n  - loss: {dir: b_to_a, p: 1.0}\n", "cfg.yaml");
    INFO((cfg.ok() ? std::string() : cfg.err().message));
    REQUIRE(cfg.ok());
    o.cfg = *cfg;
    o.out = out.string();
    o.progress_ns = 0;
    o.duration_ns = 200'000'000;
    o.busy_poll = GENERATE(false, true);
    auto r = emulate::run(o);
    sender.join();
    CHECK(sent == 25);
    INFO((r.ok() ? std::string() : r.err().message));
    REQUIRE(r.ok());

    // Every frame arrives unchanged; across paths the order may differ, within
    // a source port (one path) it holds.
    const auto got_b = drain(peer_b);
    REQUIRE(got_b.size() == a_to_b.size());
    // As strings: sorting the byte vectors themselves trips GCC 12's
    // -Wstringop-overread (a false positive in its inlined memcmp bound).
    auto sorted = [](const std::vector<core::byte_buffer>& v) {
        std::vector<std::string> s;
        for (const auto& f : v) s.emplace_back(f.begin(), f.end());
        std::sort(s.begin(), s.end());
        return s;
    };
    CHECK(sorted(got_b) == sorted(a_to_b));
    auto of_port = [](const std::vector<core::byte_buffer>& v, std::uint16_t sport) {
        std::vector<core::byte_buffer> out;
        for (const auto& f : v)
            if (((f[34] << 8) | f[35]) == sport) out.push_back(f);
        return out;
    };
    for (std::uint16_t sp = 49152; sp < 49156; ++sp) CHECK(of_port(got_b, sp) == of_port(a_to_b, sp));
    CHECK(drain(peer_a).empty());
    const auto& j = *r;
    CHECK(j["directions"]["a_to_b"]["frames_in"] == 20);
    CHECK(j["directions"]["a_to_b"]["frames_out"] == 20);
    CHECK(j["directions"]["b_to_a"]["frames_in"] == 5);
    CHECK(j["directions"]["b_to_a"]["dropped"] == 5);
    CHECK(j["ports"]["a"]["frames_in"] == 20);
    CHECK(j["ports"]["b"]["frames_out"] == 20);
    CHECK(j["busy_poll"] == o.busy_poll);
    // The injected delay was held: no frame left before its 50 us.
    CHECK(j["hold"]["frames"] == 20);
    CHECK(j["hold"]["median_ns"].get<std::int64_t>() >= 50'000);
    CHECK(std::filesystem::file_size(out / "port-a.pcap") > 20 * 4096);
    std::filesystem::remove_all(out);

    // A DPDK port without EAL arguments, and the same port twice: refused.
    auto bad = o;
    bad.eal.clear();
    auto e1 = emulate::run(bad);
    REQUIRE_FALSE(e1.ok());
    CHECK_THAT(e1.err().message, Catch::Contains("needs --eal"));
    bad = o;
    bad.port_b = o.port_a;
    auto e2 = emulate::run(bad);
    REQUIRE_FALSE(e2.ok());
    CHECK_THAT(e2.err().message, Catch::Contains("port b is port a"));
    std::filesystem::remove_all(out);
}
