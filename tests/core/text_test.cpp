#include <catch2/catch.hpp>

#include "core/text.h"

using mrct::core::split;
using v = std::vector<std::string>;

TEST_CASE("split: non-empty pieces between separators") {
    CHECK(split("bug=x,,mode=y", ",") == v{"bug=x", "mode=y"});
    CHECK(split("MR-RNR-2, MR-RNR-3", ", ") == v{"MR-RNR-2", "MR-RNR-3"});
    CHECK(split(",a,", ",") == v{"a"});
    CHECK(split("", ",").empty());
    CHECK(split(",,", ",").empty());
    CHECK(split("one", ",") == v{"one"});
}
