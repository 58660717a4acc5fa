// The payload floor of the event-rate run: what carrying real bytes costs per
// data frame when nothing else is done (no headers, no scheduler, no
// endpoint), and so the highest event rate the run could reach if every other
// step were free.
//
//   build-rel/bench/payload_floor [--seconds S] [--senders N] [--events-per-frame E]
//
// Per data frame, as `mrct simulate` does it (docs/performance.md, "Event
// rate"): the sender copies the next 4 KiB of its message into a frame buffer
// and computes the CRC-32 over the frame (the ICRC, MR-WIRE); the receiver,
// `inflight` frames later (the frames sitting in the fabric's queues),
// computes the CRC again and copies the 4 KiB into that sender's region. The
// message bytes are one shared 256 KiB buffer and each sender has a 256 KiB
// region, as in simulate. Rows sweep the frames in flight: 64 (every buffer
// in L1/L2), 1024, and 8192 (the peak of the 64-sender incast, measured: the
// fabric's packet pool grows to 8192 buffers).
//
// A last row, "gather", is the least any design that carries real bytes can
// do: the sender computes the CRC over the message bytes in place (a NIC's
// DMA gather; no frame buffer is written), the receiver computes it again and
// copies the 4 KiB into the region. mrct builds a frame buffer instead (the
// first row); the gather row says what would be left if it did not.
//
// The events/s ceiling divides by the events per data frame of the incast:
// 361,600 events / 65,536 data frames = 5.52 at 64 senders x 16 messages.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/rng.h"
#include "wire/crc32.h"

using namespace mrct;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::size_t k_payload = 4096;
constexpr std::size_t k_headers = 90;                   // Ethernet .. extension headers of a WRITE
constexpr std::size_t k_frame = k_payload + k_headers;  // 4186: codec_bench's WRITE frame
constexpr std::size_t k_icrc = k_frame - 14 - 4;         // IP header .. payload (the 8 bytes of 0xFF left out)
constexpr std::size_t k_message = 256 * 1024;

double g_seconds = 1.0;
unsigned g_senders = 64;
double g_events_per_frame = 361600.0 / 65536.0;
std::uint64_t g_sink;

enum class work { all, copies, crcs, gather };

// ns per data frame with `inflight` frames between sender and receiver.
double run(std::size_t inflight, work w) {
    std::vector<std::uint8_t> message(k_message);
    core::rng r(3, "payload");
    for (auto& b : message) b = static_cast<std::uint8_t>(r.next());
    std::vector<std::vector<std::uint8_t>> bufs(inflight, std::vector<std::uint8_t>(k_frame, 0));
    std::vector<std::vector<std::uint8_t>> regions(g_senders, std::vector<std::uint8_t>(k_message, 0));
    const bool copy = w == work::all || w == work::copies, crc = w != work::copies;
    const bool gather = w == work::gather;
    // Frame k: sender k % senders, message offset (k / senders) * 4 KiB, buffer k % inflight.
    auto offset = [](std::size_t k) { return (k / g_senders * k_payload) % k_message; };
    auto send = [&](std::size_t k) {
        if (gather) {  // headers (not modelled) then the message bytes in place
            g_sink += wire::crc32_update(0, {message.data() + offset(k), k_payload});
            return;
        }
        std::uint8_t* b = bufs[k % inflight].data();
        if (copy) std::memcpy(b + k_headers - 4, message.data() + offset(k), k_payload);
        if (crc) g_sink += wire::crc32_update(0, {b + 14, k_icrc});
    };
    auto receive = [&](std::size_t k) {
        if (gather) {
            const std::uint8_t* src = message.data() + offset(k);
            g_sink += wire::crc32_update(0, {src, k_payload});
            std::memcpy(regions[k % g_senders].data() + offset(k), src, k_payload);
            return;
        }
        const std::uint8_t* b = bufs[k % inflight].data();
        if (crc) g_sink += wire::crc32_update(0, {b + 14, k_icrc});
        if (copy) std::memcpy(regions[k % g_senders].data() + offset(k), b + k_headers - 4, k_payload);
    };
    std::size_t k = 0;
    for (; k < inflight; ++k) send(k);  // fill the fabric
    const auto start = clock_type::now();
    auto now = start;
    std::size_t n = 0;
    do {
        for (int i = 0; i < 1024; ++i, ++k, ++n) {
            receive(k - inflight);  // the oldest frame leaves the fabric; its buffer is reused
            send(k);
        }
        now = clock_type::now();
    } while (now - start < std::chrono::duration<double>(g_seconds));
    return std::chrono::duration<double, std::nano>(now - start).count() / static_cast<double>(n);
}

bool arg(int argc, char** argv, int& i, const char* name) { return !std::strcmp(argv[i], name) && i + 1 < argc; }

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (arg(argc, argv, i, "--seconds")) g_seconds = std::atof(argv[++i]);
        else if (arg(argc, argv, i, "--senders")) g_senders = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (arg(argc, argv, i, "--events-per-frame")) g_events_per_frame = std::atof(argv[++i]);
        else {
            std::fprintf(stderr,
                         "usage: payload_floor [--seconds S] [--senders N] [--events-per-frame E]\n"
                         "The cost of a data frame's payload alone (copy in, CRC, CRC, copy out) and the\n"
                         "event rate it leaves room for; see the comment at the top of bench/payload_floor.cpp.\n");
            return 2;
        }
    }
    if (g_senders < 1 || g_seconds <= 0 || g_events_per_frame <= 0) {
        std::fprintf(stderr, "payload_floor: --senders, --seconds and --events-per-frame must be positive\n");
        return 2;
    }
    std::printf("payload floor: %u senders, 4 KiB payload per data frame, CRC backend %s, %.1f s per row\n",
                g_senders, wire::crc32_backend_name(), g_seconds);
    std::printf("events per data frame: %.2f (events/s ceiling = 1e9 / (ns per frame / that))\n\n", g_events_per_frame);
    std::printf("| frames in flight | work per data frame | ns per data frame | GB/s of payload | events/s ceiling |\n");
    std::printf("|---|---|---|---|---|\n");
    const struct {
        work w;
        const char* name;
    } rows[] = {{work::all, "copy in, CRC, CRC, copy out"}, {work::copies, "the two copies only"},
                {work::crcs, "the two CRCs only"},
                {work::gather, "gather: CRC, CRC, copy out (no frame buffer)"}};
    for (std::size_t inflight : {std::size_t{64}, std::size_t{1024}, std::size_t{8192}}) {
        for (const auto& row : rows) {
            const double ns = run(inflight, row.w);
            std::printf("| %zu | %s | %.0f | %.2f | %.2f M |\n", inflight, row.name, ns,
                        static_cast<double>(k_payload) / ns, 1e3 / (ns / g_events_per_frame));
        }
    }
    std::printf("(checksum %llu)\n", static_cast<unsigned long long>(g_sink));
    return 0;
}
