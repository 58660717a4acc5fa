// Human and machine descriptions of decoded frames: the one-line summary of
// `mrct decode` and the JSON object of `mrct decode --json`. Field names are the
// spec model's, snake_case; docs/decode-json.md lists them all.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "wire/frame.h"

namespace mrct::inspect {

struct frame_meta {
    std::uint64_t number = 0;  // 1-based, as tshark
    std::int64_t ts_ns = 0;    // capture timestamp
    std::size_t caplen = 0;
    std::size_t wirelen = 0;
};

// One line, tshark-summary-like: number, relative time, addresses, opcode and
// the fields that matter for that opcode; or the drop reason.
std::string summary_line(const frame_meta& meta, std::int64_t first_ts_ns, const wire::decode_result& d);

struct json_options {
    bool include_payload = false;  // payload bytes as hex
};
nlohmann::ordered_json to_json(const frame_meta& meta, const wire::decode_result& d, const json_options& opt = {});

std::string ipv4_string(const wire::ipv4_addr& a);
std::string ipv6_string(const wire::ipv6_addr& a);

}  // namespace mrct::inspect
