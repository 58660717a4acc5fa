// The agent protocol (spec model §6; docs/agent-protocol.md owns the schema):
// newline-delimited JSON over TCP, one request -> one response.
//
//   {"id": n, "op": "...", ...}  ->  {"id": n, "ok": true, ...}
//                                 |  {"id": n, "ok": false, "error": {"code": "...", "message": "..."}}
//
// This header holds what both ends share: the version, the error codes, the
// operation names, and base64 for byte fields.
//
// Binary attachments (1.1, capability "binary_data"): a line carrying
// "data_bytes": N is followed by exactly N raw bytes, which stand for the
// message's "data" field; JSON and base64 cost about 15 ms per MiB on the two
// ends, time in which neither side's wire is served.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bytes.h"
#include "core/result.h"

namespace mrct::agent {

using json = nlohmann::json;

// Protocol version: a major change breaks old peers; hello refuses a major mismatch.
inline constexpr int k_version_major = 1;
inline constexpr int k_version_minor = 1;
// The hello capability of an agent that takes and gives binary attachments.
inline constexpr const char* k_binary_data = "binary_data";
inline constexpr std::uint16_t k_default_port = 7700;
// Longest request or response line either side accepts (a 16 MiB region read back in base64 fits).
inline constexpr std::size_t k_max_line = 32u << 20;
// Largest binary attachment either side accepts.
inline constexpr std::size_t k_max_attachment = 256u << 20;

// Error codes (docs/agent-protocol.md "Errors").
namespace code {
inline constexpr const char* bad_request = "bad_request";      // not JSON, no id/op, a field missing or of the wrong type
inline constexpr const char* unknown_op = "unknown_op";
inline constexpr const char* unauthorized = "unauthorized";    // no hello yet, or a wrong token
inline constexpr const char* version = "version_mismatch";     // hello with another major version
inline constexpr const char* bad_state = "bad_state";          // e.g. configure after the endpoint started
inline constexpr const char* invalid_param = "invalid_param";  // configure: unknown name or bad value
inline constexpr const char* not_found = "not_found";          // unknown connection or R_Key
inline constexpr const char* out_of_range = "out_of_range";    // read_mem beyond the region
inline constexpr const char* failed = "failed";                // the DUT refused the operation
inline constexpr const char* internal = "internal";
}  // namespace code

const std::vector<std::string_view>& operations();

std::string base64_encode(core::bytes_view b);
core::result<core::byte_buffer> base64_decode(std::string_view s);

// Binary attachments (1.1), the steps both ends share. The length in a
// "data_bytes" value, or nothing when it is not an unsigned integer of at most
// k_max_attachment (the stream cannot be followed past such a line).
std::optional<std::size_t> attachment_length(const json& data_bytes);
// An attachment's first bytes may already be in the line buffer, read past the
// line: moves up to n of them to dst and returns how many. The rest is read
// from the socket straight into place.
std::size_t take_buffered(std::string& buffered, std::uint8_t* dst, std::size_t n);

// A completion condition for asio::async_read/async_write that asks each
// read or write for everything still to move. asio's default (transfer_all)
// asks for at most 64 KiB, one handler each: the engine, serving its wire
// between handlers, took 64 turns of about 0.35 ms for a 4 MiB attachment
// (strace: 64 sendto calls of 65536 bytes), and the call 35-45 ms in all,
// every moment of which the checks count as a possible hold of the DUT.
struct transfer_rest {
    std::size_t total;
    template <typename Error>
    std::size_t operator()(const Error& e, std::size_t done) const {
        return e || done >= total ? 0 : total - done;
    }
};

json ok_response(std::uint64_t id, json body = json::object());
json error_response(std::uint64_t id, std::string_view code, std::string_view message);

}  // namespace mrct::agent
