// Codec benchmark: decode + ICRC verify on one core, and the CRC-32 backends.
//
//   build/bench/codec_bench [--seconds S]
//
// Prints Mpps and ns/packet for 4 KiB-payload WRITEs and minimum-size ACKs
// (with and without ICRC verification), and GB/s for each CRC-32 backend
// (zlib, isa-l, DPDK rte_net_crc) on 4 KiB and 64 B buffers. Figures go to
// docs/performance.md with the date and this command.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "wire/build.h"
#include "wire/crc32.h"
#include "wire/samples.h"

#ifdef MRCT_HAVE_DPDK
#include <rte_net_crc.h>
extern "C" {  // rte_vect.h has no C linkage guards of its own
#include <rte_vect.h>
}
#endif

using namespace mrct;
using clock_type = std::chrono::steady_clock;

namespace {

double g_seconds = 1.0;
std::uint64_t g_sink;  // results feed it so the work is not optimised away

// Runs body(i) in batches until g_seconds have passed; returns ns per call.
double measure(const std::function<void(std::size_t)>& body) {
    std::size_t n = 0;
    const auto start = clock_type::now();
    auto now = start;
    do {
        for (int k = 0; k < 4096; ++k) body(n++);
        now = clock_type::now();
    } while (now - start < std::chrono::duration<double>(g_seconds));
    return std::chrono::duration<double, std::nano>(now - start).count() / static_cast<double>(n);
}

std::vector<core::byte_buffer> frames(wire::opcode op, std::size_t payload, std::size_t count) {
    core::rng r(1, "bench");
    std::vector<core::byte_buffer> out;
    for (std::size_t i = 0; i < count; ++i) {
        auto s = wire::random_spec(r, op, 4);
        s.eth.has_vlan = false;
        if (wire::is_data_opcode(static_cast<std::uint8_t>(op))) {
            s.payload.resize(payload);
            for (auto& b : s.payload) b = static_cast<std::uint8_t>(r.next());
        }
        out.push_back(wire::build(s));
    }
    return out;
}

void decode_row(const char* name, const std::vector<core::byte_buffer>& fs, bool verify) {
    std::size_t bytes_per = fs[0].size();
    double ns = measure([&](std::size_t i) {
        auto d = wire::decode_ethernet(fs[i % fs.size()], {.verify_icrc = verify});
        if (!d.ok()) std::abort();
        g_sink += d.f.bth.psn;
    });
    // ICRC coverage: IP header through the byte before the ICRC, plus 8 bytes of 0xFF.
    double icrc_bytes = static_cast<double>(bytes_per - 14 - 4 + 8);
    std::printf("%-34s %8.2f Mpps %8.1f ns/pkt", name, 1e3 / ns, ns);
    if (verify) std::printf("  (ICRC over %zu B: %.2f GB/s incl. decode)", static_cast<std::size_t>(icrc_bytes), icrc_bytes / ns);
    std::printf("\n");
}

void crc_row(const char* name, std::size_t len, const std::function<std::uint32_t(const std::uint8_t*, std::size_t)>& f) {
    std::vector<std::uint8_t> buf(len * 64);
    core::rng r(2);
    for (auto& b : buf) b = static_cast<std::uint8_t>(r.next());
    double ns = measure([&](std::size_t i) { g_sink += f(buf.data() + (i % 64) * len, len); });
    std::printf("  %-22s %6zu B  %8.2f GB/s  %8.1f ns\n", name, len, static_cast<double>(len) / ns, ns);
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) g_seconds = std::atof(argv[++i]);
    }
    std::printf("mrct codec benchmark (one core, %.1f s per row, CRC backend in use: %s)\n\n", g_seconds,
                wire::crc32_backend_name());
    auto writes = frames(wire::opcode::write, 4096, 64);
    auto acks = frames(wire::opcode::ack, 0, 1024);
    std::printf("frame sizes: WRITE %zu B, ACK %zu B\n", writes[0].size(), acks[0].size());
    decode_row("WRITE 4 KiB: decode + ICRC", writes, true);
    decode_row("WRITE 4 KiB: header decode only", writes, false);
    decode_row("ACK: decode + ICRC", acks, true);
    decode_row("ACK: header decode only", acks, false);

    std::printf("\nCRC-32 backends (same function: reflected 0x04C11DB7, zlib conventions)\n");
    for (std::size_t len : {std::size_t{4096}, std::size_t{64}}) {
        crc_row("zlib crc32", len, [](const std::uint8_t* p, std::size_t n) { return wire::crc32_zlib(0, {p, n}); });
        crc_row("isa-l crc32_gzip_refl", len, [](const std::uint8_t* p, std::size_t n) { return wire::crc32_isal(0, {p, n}); });
#ifdef MRCT_HAVE_DPDK
        // Without EAL the SIMD width is unset and rte_net_crc falls back to its
        // scalar table; allow 512-bit vectors so its PCLMULQDQ kernels compete.
        rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
        rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
        crc_row("dpdk rte_net_crc", len, [](const std::uint8_t* p, std::size_t n) {
            return rte_net_crc_calc(p, static_cast<std::uint32_t>(n), RTE_NET_CRC32_ETH);
        });
#endif
    }
#ifdef MRCT_HAVE_DPDK
    const std::uint8_t check[] = "123456789";
    std::printf("  rte_net_crc check value: 0x%08x (zlib: 0x%08x)\n", rte_net_crc_calc(check, 9, RTE_NET_CRC32_ETH),
                wire::crc32_zlib(0, {check, 9}));
#endif
    std::printf("(checksum %llu)\n", static_cast<unsigned long long>(g_sink));
    return 0;
}
