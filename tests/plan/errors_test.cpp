// A plan's error list (engine/plan/errors.h): each error once, in order, at
// most k_max, then the count of the rest.
#include <catch2/catch.hpp>

#include <algorithm>

#include "plan/errors.h"

using mrct::plan::error_list;

TEST_CASE("error_list: each error once, in the order found, at most k_max of them") {
    error_list e;
    CHECK(e.empty());
    e.add("p.yaml:3:1: b");
    e.add("p.yaml:1:1: a");
    e.add("p.yaml:3:1: b");  // a sweep instance repeating it
    CHECK(e.text() == "p.yaml:3:1: b\np.yaml:1:1: a");
    for (int i = 0; i < 250; ++i) e.add("p.yaml:" + std::to_string(10 + i) + ":1: unknown key");
    for (int i = 0; i < 250; ++i) e.add("p.yaml:" + std::to_string(10 + i) + ":1: unknown key");  // again: not counted twice
    const auto t = e.text();
    CHECK(std::count(t.begin(), t.end(), '\n') == static_cast<long>(error_list::k_max));
    CHECK_THAT(t, Catch::EndsWith("\n(152 more errors not shown: fix these first)"));
}
