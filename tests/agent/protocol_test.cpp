#include <catch2/catch.hpp>

#include "agent/protocol.h"
#include "core/rng.h"

using namespace mrct;

TEST_CASE("base64: RFC 4648 test vectors") {
    const std::pair<std::string, std::string> v[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                     {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                     {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, enc] : v) {
        core::byte_buffer b(plain.begin(), plain.end());
        CHECK(agent::base64_encode(b) == enc);
        auto d = agent::base64_decode(enc);
        REQUIRE(d.ok());
        CHECK(*d == b);
    }
}

TEST_CASE("base64: random round trips") {
    core::rng r(7);
    for (int n = 0; n < 300; ++n) {
        core::byte_buffer b(r.below(200));
        for (auto& x : b) x = static_cast<std::uint8_t>(r.below(256));
        auto d = agent::base64_decode(agent::base64_encode(b));
        REQUIRE(d.ok());
        CHECK(*d == b);
    }
}

TEST_CASE("base64: malformed input is an error, not a guess") {
    CHECK_FALSE(agent::base64_decode("Zm9").ok());      // length
    CHECK_FALSE(agent::base64_decode("Zm9v!A==").ok()); // character
    CHECK_FALSE(agent::base64_decode("Zg==Zg==").ok()); // padding in the middle
    CHECK_FALSE(agent::base64_decode("Z===").ok());     // three pads
}

TEST_CASE("responses carry the id and the ok flag") {
    auto ok = agent::ok_response(7, {{"conn", 3}});
    CHECK(ok["id"] == 7);
    CHECK(ok["ok"] == true);
    CHECK(ok["conn"] == 3);
    auto err = agent::error_response(8, agent::code::not_found, "no such R_Key");
    CHECK(err["ok"] == false);
    CHECK(err["error"]["code"] == "not_found");
    CHECK(err["error"]["message"] == "no such R_Key");
}
