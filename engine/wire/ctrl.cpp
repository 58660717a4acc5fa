#include "wire/ctrl.h"

#include "wire/frame.h"

namespace mrct::wire {

bool is_known_tlv(std::uint8_t type) { return type >= 1 && type <= 9; }

bool tlv_length_ok(std::uint8_t type, std::size_t len) {
    switch (static_cast<tlv_type>(type)) {
    case tlv_type::version: return len == 2;
    case tlv_type::num_paths: return len == 2;
    case tlv_type::src_conn_id: return len == 4;
    case tlv_type::mtu: return len == 2;
    case tlv_type::initial_ppsn: return len > 0 && len % 4 == 0;
    case tlv_type::reject_reason: return len == 1;
    case tlv_type::rnr_count: return len == 2;
    case tlv_type::path_id: return len == 1;
    case tlv_type::nonce: return len == 4;
    }
    return true;
}

ctrl_fields read_ctrl_tlvs(core::bytes_view area) {
    ctrl_fields out;
    tlv_iterator it(area);
    while (auto t = it.next()) {
        if (!is_known_tlv(t->type)) {
            out.unknown_types.push_back(t->type);
            continue;
        }
        if (!tlv_length_ok(t->type, t->length)) {
            if (!out.bad_length_type) out.bad_length_type = t->type;
            continue;
        }
        core::byte_reader r(t->value);
        auto first = [](auto& slot, auto v) {
            if (!slot) slot = v;
        };
        switch (static_cast<tlv_type>(t->type)) {
        case tlv_type::version:
            if (!out.version_major) {
                out.version_major = *r.u8();
                out.version_minor = *r.u8();
            }
            break;
        case tlv_type::num_paths: first(out.num_paths, *r.u16()); break;
        case tlv_type::src_conn_id: first(out.src_conn_id, *r.u32() & 0xFFFFFF); break;
        case tlv_type::mtu: first(out.mtu, *r.u16()); break;
        case tlv_type::initial_ppsn:
            if (!out.initial_ppsn) {
                std::vector<std::uint32_t> v;
                while (auto p = r.u32()) v.push_back(*p & 0xFFFFFF);
                out.initial_ppsn = std::move(v);
            }
            break;
        case tlv_type::reject_reason: first(out.reject_reason, *r.u8()); break;
        case tlv_type::rnr_count: first(out.rnr_count, *r.u16()); break;
        case tlv_type::path_id: first(out.path_id, *r.u8()); break;
        case tlv_type::nonce: first(out.nonce, *r.u32()); break;
        }
    }
    return out;
}

namespace tlv {
namespace {
tlv_spec make(tlv_type t, std::initializer_list<std::uint64_t> values, unsigned width) {
    tlv_spec s{static_cast<std::uint8_t>(t), {}, {}};
    core::byte_writer w(s.value);
    for (auto v : values) {
        if (width == 1) w.u8(static_cast<std::uint8_t>(v));
        if (width == 2) w.u16(static_cast<std::uint16_t>(v));
        if (width == 4) w.u32(static_cast<std::uint32_t>(v));
    }
    return s;
}
}  // namespace
tlv_spec version(std::uint8_t major, std::uint8_t minor) { return make(tlv_type::version, {major, minor}, 1); }
tlv_spec num_paths(std::uint16_t n) { return make(tlv_type::num_paths, {n}, 2); }
tlv_spec src_conn_id(std::uint32_t id) { return make(tlv_type::src_conn_id, {id & 0xFFFFFF}, 4); }
tlv_spec mtu(std::uint16_t m) { return make(tlv_type::mtu, {m}, 2); }
tlv_spec initial_ppsn(const std::vector<std::uint32_t>& ppsns) {
    tlv_spec s{static_cast<std::uint8_t>(tlv_type::initial_ppsn), {}, {}};
    core::byte_writer w(s.value);
    for (auto p : ppsns) w.u32(p & 0xFFFFFF);
    return s;
}
tlv_spec reject_reason(std::uint8_t reason) { return make(tlv_type::reject_reason, {reason}, 1); }
tlv_spec rnr_count(std::uint16_t count) { return make(tlv_type::rnr_count, {count}, 2); }
tlv_spec path_id(std::uint8_t id) { return make(tlv_type::path_id, {id}, 1); }
tlv_spec nonce(std::uint32_t n) { return make(tlv_type::nonce, {n}, 4); }
}  // namespace tlv

}  // namespace mrct::wire
