#include <catch2/catch.hpp>

#include <algorithm>

#include "fabric/packet_pool.h"

using namespace mrct;
using namespace mrct::fabric;

namespace {

core::byte_buffer bytes(std::size_t n, std::uint8_t v) { return core::byte_buffer(n, v); }

bool same(core::bytes_view a, const core::byte_buffer& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

}  // namespace

TEST_CASE("packet_pool: a packet is exactly its bytes, whatever its buffer held before") {
    packet_pool p;
    const auto big = bytes(4000, 0xAA);
    const auto small = bytes(60, 0x11);
    handle a = p.alloc(big);
    CHECK(same(p.view(a), big));
    CHECK(p.meta(a).len == 4000);
    p.release(a);
    handle b = p.alloc(small);  // the same buffer comes back first (LIFO) and keeps its size
    CHECK(b == a);
    CHECK(same(p.view(b), small));
    CHECK(p.meta(b).len == 60);
    p.release(b);
    const auto big2 = bytes(4100, 0x5C);
    handle c = p.alloc(big2);
    CHECK(same(p.view(c), big2));
    CHECK(p.in_use() == 1);
    p.release(c);
    CHECK(p.in_use() == 0);
}

TEST_CASE("packet_pool: adopt swaps large frames in and copies small ones") {
    packet_pool p;
    core::byte_buffer frame = bytes(3000, 0x42);
    const std::uint8_t* mine = frame.data();
    handle h = p.adopt(frame);
    CHECK(p.view(h).data() == mine);  // no copy
    CHECK(p.meta(h).len == 3000);
    CHECK(frame.data() != mine);      // the sender got another buffer back
    p.release(h);

    core::byte_buffer ack = bytes(100, 0x07);
    const std::uint8_t* ack_bytes = ack.data();
    handle k = p.adopt(ack);
    CHECK(p.view(k).data() != ack_bytes);  // copied
    CHECK(same(p.view(k), bytes(100, 0x07)));
    CHECK(ack.data() == ack_bytes);  // the sender keeps its buffer
    p.release(k);

    // A buffer handed back by adopt holds leftovers of an earlier packet; the
    // next packet adopted from it is still exactly what the sender wrote.
    core::byte_buffer next = bytes(700, 0x33);
    handle m = p.adopt(next);
    CHECK(same(p.view(m), bytes(700, 0x33)));
    p.release(m);
}

TEST_CASE("packet_pool: a clone is an independent copy with the same metadata") {
    packet_pool p;
    handle a = p.alloc(bytes(500, 0x01));
    p.meta(a).path = 3;
    p.meta(a).id = 99;
    handle c = p.clone(a);
    CHECK(c != a);
    CHECK(p.meta(c).path == 3);
    CHECK(p.meta(c).id == 99);
    p.data(c)[0] = 0xFF;
    CHECK(p.view(a)[0] == 0x01);
    CHECK(p.view(c)[0] == 0xFF);
    p.release(a);
    p.release(c);
    CHECK(p.in_use() == 0);
}

TEST_CASE("packet_pool: grows past one block of handles") {
    packet_pool p;
    std::vector<handle> hs;
    for (int i = 0; i < 1000; ++i) hs.push_back(p.alloc(bytes(10, static_cast<std::uint8_t>(i))));
    for (int i = 0; i < 1000; ++i) REQUIRE(p.view(hs[i])[0] == static_cast<std::uint8_t>(i));
    CHECK(p.in_use() == 1000);
    for (handle h : hs) p.release(h);
    CHECK(p.in_use() == 0);
}
