#include <catch2/catch.hpp>

#include <deque>
#include <memory>

#include "core/ring.h"

using mrct::core::ring;

TEST_CASE("ring behaves as a FIFO deque through growth and wrap-around") {
    ring<int> r;
    std::deque<int> model;
    std::uint32_t x = 12345;
    for (int step = 0; step < 20000; ++step) {
        x = x * 1103515245 + 12345;
        if ((x >> 16) % 3 != 0 || model.empty()) {
            r.push_back(step);
            model.push_back(step);
        } else {
            REQUIRE(r.front() == model.front());
            r.pop_front();
            model.pop_front();
        }
        REQUIRE(r.size() == model.size());
        if (!model.empty()) {
            REQUIRE(r.back() == model.back());
            const std::size_t i = (x >> 8) % model.size();
            REQUIRE(r[i] == model[i]);
        }
    }
    std::size_t n = 0;
    for (int v : r) REQUIRE(v == model[n++]);
    CHECK(n == model.size());
    r.clear();
    CHECK(r.empty());
    CHECK(r.begin() == r.end());
}

TEST_CASE("ring releases what it held when an element leaves") {
    ring<std::shared_ptr<int>> r;
    auto p = std::make_shared<int>(7);
    r.push_back(p);
    CHECK(p.use_count() == 2);
    r.pop_front();
    CHECK(p.use_count() == 1);
}
