#include <catch2/catch.hpp>

#include "assertions/expr.h"

using namespace mrct::assertions;

namespace {
std::optional<double> names(std::string_view n, std::string_view a) {
    if (n == "rto_min") return 100e3;
    if (n == "rnr_time") return 1.28e6;
    if (n == "rtt" && a == "p0") return 10e3;
    return std::nullopt;
}
double ev(std::string_view s) {
    auto v = eval_expr(s, names);
    REQUIRE(v.ok());
    return *v;
}
}  // namespace

TEST_CASE("duration expressions in protocol terms") {
    CHECK(ev("20us") == 20e3);
    CHECK(ev("1.5ms") == 1.5e6);
    CHECK(ev("rnr_time + 10%") == Approx(1.408e6));
    CHECK(ev("rnr_time + 10% + 50us") == Approx(1.458e6));
    CHECK(ev("rto_min + 4 * rtt(p0)") == 140e3);
    CHECK(ev("rto_min + 4 * rtt(p0) + 20%") == Approx(168e3));
    CHECK(ev("(rto_min + 20us) * 2") == 240e3);
    CHECK(ev("rto_min / 2") == 50e3);
    CHECK(ev("3 * rtt(p0) - 10%") == Approx(27e3));
}

TEST_CASE("expression errors say where and what") {
    auto e = [](std::string_view s) {
        auto v = eval_expr(s, names);
        REQUIRE_FALSE(v.ok());
        return v.err().message;
    };
    CHECK_THAT(e("rto_mn + 1us"), Catch::Contains("unknown term 'rto_mn'"));
    CHECK_THAT(e("rtt(p9)"), Catch::Contains("unknown term 'rtt(p9)'"));
    CHECK_THAT(e("1us +"), Catch::Contains("expression ends early"));
    CHECK_THAT(e("(1us"), Catch::Contains("expected ')'"));
    CHECK_THAT(e("1us 2us"), Catch::Contains("column 5"));
    CHECK_THAT(e("1us / 0"), Catch::Contains("division by zero"));
}

TEST_CASE("a name without a value in this run is reported, not read as zero") {
    auto v = eval_expr("rtt(p1)", [](std::string_view, std::string_view) -> std::optional<double> { return std::nan(""); });
    REQUIRE_FALSE(v.ok());
    CHECK_THAT(v.err().message, Catch::Contains("has no value in this run"));
}
