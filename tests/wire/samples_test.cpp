#include <catch2/catch.hpp>

#include <set>

#include "wire/samples.h"

using namespace mrct;
using namespace mrct::wire;

TEST_CASE("the sample catalog covers every opcode, CTRL type, IPv6 and 802.1Q") {
    std::set<std::uint8_t> ops, ctrl_types;
    bool v6 = false, vlan = false;
    for (const auto& [name, s] : sample_catalog()) {
        ops.insert(s.bth.opcode);
        if (s.ctrlh) ctrl_types.insert(s.ctrlh->type);
        v6 |= s.ip_version == 6;
        vlan |= s.eth.has_vlan;
    }
    for (auto op : k_all_opcodes) CHECK(ops.count(static_cast<std::uint8_t>(op)));
    for (std::uint8_t t = 1; t <= 11; ++t) CHECK(ctrl_types.count(t));
    CHECK(v6);
    CHECK(vlan);
}

TEST_CASE("random frames are reproducible from the seed") {
    core::rng a(77, "x"), b(77, "x");
    for (int i = 0; i < 50; ++i) {
        for (auto op : k_all_opcodes) CHECK(build(random_spec(a, op, 4)) == build(random_spec(b, op, 4)));
    }
}
