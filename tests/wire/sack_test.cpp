#include <catch2/catch.hpp>

#include <vector>

#include "wire/sack.h"

using mrct::wire::sack256;

TEST_CASE("SACK wire layout: big-endian 64-bit words, bit 0 = LSB of word 0") {
    sack256 s;
    s.set(0);
    s.set(63);
    s.set(64);
    s.set(255);
    std::array<std::uint8_t, 32> w{};
    s.to_wire(w);
    CHECK(w[7] == 0x01);   // bit 0: last byte of word 0, lowest bit
    CHECK(w[0] == 0x80);   // bit 63: first byte of word 0, highest bit
    CHECK(w[15] == 0x01);  // bit 64: last byte of word 1
    CHECK(w[24] == 0x80);  // bit 255: first byte of word 3
    int nonzero = 0;
    for (auto b : w) nonzero += b != 0;
    CHECK(nonzero == 4);
    CHECK(sack256::from_wire(w) == s);
}

TEST_CASE("SACK queries: count, highest, next_set, next_clear") {
    sack256 s;
    CHECK(s.none());
    CHECK(s.highest() == -1);
    CHECK(s.next_set(0) == 256);
    for (unsigned i : {3u, 5u, 64u, 200u, 255u}) s.set(i);
    CHECK(s.count() == 5);
    CHECK(s.highest() == 255);
    CHECK(s.next_set(0) == 3);
    CHECK(s.next_set(6) == 64);
    CHECK(s.next_set(65) == 200);
    CHECK(s.next_clear(3) == 4);
    s.clear(255);
    CHECK(s.highest() == 200);
    sack256 full;
    for (unsigned i = 0; i < 256; ++i) full.set(i);
    CHECK(full.next_clear(0) == 256);
    CHECK(full.count() == 256);
}

TEST_CASE("SACK gaps are the clear bits below the highest set bit") {
    sack256 s;
    s.set(2);
    s.set(3);
    s.set(6);
    std::vector<unsigned> gaps;
    s.for_each_gap([&](unsigned i) { gaps.push_back(i); });
    CHECK(gaps == std::vector<unsigned>{0, 1, 4, 5});
    sack256 empty;
    gaps.clear();
    empty.for_each_gap([&](unsigned i) { gaps.push_back(i); });
    CHECK(gaps.empty());
}

TEST_CASE("shift_down moves every bit down by n, across words") {
    sack256 s;
    for (unsigned i : {0u, 1u, 63u, 64u, 100u, 200u, 255u}) s.set(i);
    auto t = s;
    t.shift_down(1);
    for (unsigned i : {0u, 62u, 63u, 99u, 199u, 254u}) CHECK(t.test(i));
    CHECK(t.count() == 6);
    t = s;
    t.shift_down(64);
    CHECK(t.test(0));
    CHECK(t.test(36));
    CHECK(t.test(136));
    CHECK(t.test(191));
    CHECK(t.count() == 4);
    t = s;
    t.shift_down(130);
    CHECK(t.test(70));
    CHECK(t.test(125));
    CHECK(t.count() == 2);
    t.shift_down(256);
    CHECK(t.none());
}
