#include <catch2/catch.hpp>

#include <set>

#include "fabric/params.h"
#include "fabric/stage.h"

using namespace mrct::fabric;

TEST_CASE("duration and rate text forms") {
    CHECK(*parse_duration_ns("150ns") == 150);
    CHECK(*parse_duration_ns("10us") == 10000);
    CHECK(*parse_duration_ns("1.5ms") == 1500000);
    CHECK(*parse_duration_ns("2s") == 2000000000);
    CHECK(*parse_duration_ns("42") == 42);
    CHECK(*parse_duration_ns("never") == INT64_MAX);
    CHECK_FALSE(parse_duration_ns("10 parsecs").has_value());
    CHECK_FALSE(parse_duration_ns("-1us").has_value());
    CHECK_FALSE(parse_duration_ns("").has_value());
    CHECK(*parse_rate_bps("100Gbps") == 100e9);
    CHECK(*parse_rate_bps("400G") == 400e9);
    CHECK(*parse_rate_bps("25Mbps") == 25e6);
    CHECK(*parse_rate_bps("1e9") == 1e9);
    CHECK_FALSE(parse_rate_bps("fast").has_value());
}

TEST_CASE("declared parameters validate values and fill defaults") {
    const auto* k = find_stage_kind("loss");
    REQUIRE(k);
    auto ok = params::parse("loss", k->decls, {{"p", "0.25"}});
    REQUIRE(ok.ok());
    CHECK(ok->real("p") == 0.25);
    CHECK(ok->choice("model") == "bernoulli");
    CHECK(ok->integer("nth") == 1000000);
    CHECK(ok->boolean("once"));

    auto unknown = params::parse("loss", k->decls, {{"prob", "0.1"}});
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.err().message.find("unknown parameter 'prob'") != std::string::npos);
    CHECK(unknown.err().message.find("p, p_gb") != std::string::npos);

    auto range = params::parse("loss", k->decls, {{"p", "1.5"}});
    REQUIRE_FALSE(range.ok());
    CHECK(range.err().message.find("out of range [0, 1]") != std::string::npos);

    auto type = params::parse("loss", k->decls, {{"nth", "ten"}});
    REQUIRE_FALSE(type.ok());
    CHECK(type.err().message.find("expected an integer") != std::string::npos);

    auto choice = params::parse("loss", k->decls, {{"model", "random"}});
    REQUIRE_FALSE(choice.ok());
    CHECK(choice.err().message.find("bernoulli, gilbert_elliott") != std::string::npos);
}

TEST_CASE("the stage registry: unique names, defaults valid, documented") {
    std::set<std::string> names;
    for (const auto& k : builtin_stages()) {
        INFO(k.kind);
        CHECK(names.insert(k.kind).second);
        CHECK(params::parse(k.kind, k.decls, {}).ok());
        std::set<std::string> pnames;
        for (const auto& p : k.decls) CHECK(pnames.insert(p.name).second);
    }
    auto md = stages_markdown();
    for (const auto& k : builtin_stages()) CHECK(md.find("### `" + k.kind + "`") != std::string::npos);
    packet_pool pool;
    auto bad = make_stage("wormhole", {}, pool, mrct::core::rng(1));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.err().message.find("unknown stage 'wormhole'") != std::string::npos);
}
