#include <catch2/catch.hpp>

#include "wire/build.h"
#include "wire/ctrl.h"

using namespace mrct;
using namespace mrct::wire;

namespace {
core::byte_buffer area(const std::vector<tlv_spec>& tlvs) {
    core::byte_buffer b;
    core::byte_writer w(b);
    for (const auto& t : tlvs) {
        w.u8(t.type);
        w.u16(t.length.value_or(static_cast<std::uint16_t>(t.value.size())));
        w.bytes(t.value);
    }
    return b;
}
}  // namespace

TEST_CASE("CTRL TLVs read back by type") {
    auto a = area({tlv::version(1, 2), tlv::num_paths(8), tlv::src_conn_id(0xAB123456), tlv::mtu(4096),
                   tlv::initial_ppsn({1, 2, 0xFFFFFF}), tlv::reject_reason(3), tlv::rnr_count(9), tlv::path_id(7),
                   tlv::nonce(0xCAFEBABE)});
    auto f = read_ctrl_tlvs(a);
    CHECK(f.valid());
    CHECK(*f.version_major == 1);
    CHECK(*f.version_minor == 2);
    CHECK(*f.num_paths == 8);
    CHECK(*f.src_conn_id == 0x123456);  // 24-bit ID, upper byte reserved
    CHECK(*f.mtu == 4096);
    CHECK(*f.initial_ppsn == std::vector<std::uint32_t>{1, 2, 0xFFFFFF});
    CHECK(*f.reject_reason == 3);
    CHECK(*f.rnr_count == 9);
    CHECK(*f.path_id == 7);
    CHECK(*f.nonce == 0xCAFEBABE);
    CHECK(f.unknown_types.empty());
}

TEST_CASE("CTRL TLV rules: unknown skipped, first wins, wrong length invalidates") {
    auto f = read_ctrl_tlvs(area({tlv_spec{200, {1, 2, 3}, {}}, tlv::num_paths(4), tlv::num_paths(2)}));
    CHECK(f.valid());
    CHECK(f.unknown_types == std::vector<std::uint8_t>{200});
    CHECK(*f.num_paths == 4);

    auto bad = read_ctrl_tlvs(area({tlv::num_paths(4), tlv_spec{4, {0x10}, {}}}));  // MTU with 1 byte
    CHECK_FALSE(bad.valid());
    CHECK(*bad.bad_length_type == 4);

    CHECK_FALSE(read_ctrl_tlvs(area({tlv_spec{5, {0, 0, 1}, {}}})).valid());  // INITIAL_PPSN not a multiple of 4
    CHECK_FALSE(read_ctrl_tlvs(area({tlv_spec{5, {}, {}}})).valid());         // empty INITIAL_PPSN
    CHECK_FALSE(read_ctrl_tlvs(area({tlv_spec{9, {1, 2, 3, 4, 5}, {}}})).valid());
}

TEST_CASE("tlv_length_ok table") {
    CHECK(tlv_length_ok(1, 2));
    CHECK_FALSE(tlv_length_ok(1, 3));
    CHECK(tlv_length_ok(3, 4));
    CHECK(tlv_length_ok(5, 32));
    CHECK(tlv_length_ok(6, 1));
    CHECK(tlv_length_ok(8, 1));
    CHECK_FALSE(tlv_length_ok(8, 2));
    CHECK(tlv_length_ok(99, 1234));  // unknown: any length
}
