// The fabric's design promise (docs/architecture.md, packet_pool.h): once its
// buffers are warm, forwarding allocates nothing per packet, so the same
// stages can run on DPDK bursts at line rate. This binary counts every
// operator new of the process (its own executable, so no other test shares
// the replacement) and sends 100,000 packets through every stage kind after
// a warm-up of 20,000. The only allocations allowed are those the scheduler's
// queue and the packet pool count themselves, each at a new high-water mark:
// a radix heap's buckets follow the clock's bits, so a bucket now and then
// holds more keys than it ever did, and the pool adds a block of buffers when
// more packets are in flight than ever before. A few per 100,000 packets,
// none of them per packet.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "fabric/fabric.h"
#include "sim/drivers.h"
#include "wire/build.h"
#include "wire/samples.h"

namespace {
std::atomic<std::uint64_t> g_news{0};

void* counted(std::size_t n, std::size_t align) {
    ++g_news;
    void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                                : std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
}  // namespace

// Every form, so that no allocation bypasses the count and no pointer is
// freed by another allocator's delete (AddressSanitizer checks the pairs).
void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n, 0);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace mrct;
using namespace mrct::fabric;
using namespace std::chrono_literals;

TEST_CASE("warm forwarding allocates nothing per packet, through every stage kind") {
    sim::scheduler s;
    sim::virtual_driver d{s};
    fabric_config c;
    c.paths = 4;
    c.seed = 7;
    c.default_stages = {
        {"loss", {{"p", "0.01"}}},
        {"match_drop", {{"opcode", "WRITE"}, {"ppsn", "5"}, {"count", "0"}}},
        {"duplicate", {{"p", "0.02"}}},
        {"corrupt", {{"p", "0.01"}}},
        {"ecn_mark", {{"p", "0.05"}}},
        {"reorder", {{"p", "0.05"}, {"extra", "3us"}}},
        {"queue", {{"rate", "100Gbps"}, {"buffer", "65536"}, {"ecn", "true"}, {"kmin", "8192"}, {"kmax", "32768"}}},
        {"delay", {{"delay", "2us"}, {"jitter", "uniform"}, {"jitter_param", "1us"}, {"keep_order", "false"}}},
        {"blackhole", {}},
    };
    packet_pool pool;
    auto made = fabric::fabric::create(s, c, &pool);
    REQUIRE(made.ok());
    auto& f = **made;
    std::uint64_t delivered = 0;
    f.set_receiver(direction::a_to_b, [&delivered](core::bytes_view, const packet_meta&) { ++delivered; });

    // 4 KiB WRITEs (buffers swapped into the pool) and ACKs (copied into it),
    // on 16 source ports hashed over the 4 paths; built before anything is counted.
    std::vector<core::byte_buffer> frames;
    for (std::uint32_t i = 0; i < 64; ++i) {
        auto spec = i % 4 == 3 ? wire::ack_spec(wire::ackh{}, i) : wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(4096, 0xAB));
        spec.bth.psn = i;
        spec.udp.sport = static_cast<std::uint16_t>(0xC000 + i % 16);
        frames.push_back(wire::build(spec));
    }
    // A source sending n frames 40 ns apart, each send scheduling the next:
    // faster than the 4 paths' 400 Gb/s, so queues fill and drop.
    struct source {
        sim::scheduler& s;
        fabric::fabric& f;
        const std::vector<core::byte_buffer>& frames;
        int left = 0;
        std::size_t next = 0;
        void tick() {
            f.send(direction::a_to_b, frames[next++ % frames.size()]);
            if (--left > 0) s.at(s.now() + 40ns, [this] { tick(); });
        }
    } src{s, f, frames};
    auto burst = [&](int n) {
        src.left = n;
        s.at(s.now(), [&src] { src.tick(); });
        d.run();
    };
    auto totals = [&f] {
        stage_counters t;
        for (unsigned p = 0; p < f.size(); ++p)
            for (const auto& st : f.at(direction::a_to_b, p).stages()) t += st->counters();
        return t;
    };

    const auto before_warm = g_news.load();
    burst(20000);
    const auto warm_news = g_news.load() - before_warm;
    const auto warm = totals();
    const auto delivered_warm = delivered;

    const auto before = g_news.load();
    const auto queue_before = s.queue_growths();
    const auto pool_before = pool.allocations();
    burst(100000);
    const auto news = g_news.load() - before;
    const auto queue_news = s.queue_growths() - queue_before;
    const auto pool_news = pool.allocations() - pool_before;
    const auto hot = totals();

    CHECK(warm_news > 0);  // the counter sees the pool and queues growing
    CHECK(news == queue_news + pool_news);  // stages, paths and delay lines: nothing
    CHECK(queue_news <= 100);               // under 1 per 1000 packets
    CHECK(pool_news <= 10);
    // Every stage acted in the counted run: drops, duplicates, corruption, marks, delays.
    CHECK(delivered - delivered_warm > 10000);
    CHECK(hot.dropped > warm.dropped);
    CHECK(hot.duplicated > warm.duplicated);
    CHECK(hot.corrupted > warm.corrupted);
    CHECK(hot.marked > warm.marked);
    CHECK(hot.delayed > warm.delayed);
}
