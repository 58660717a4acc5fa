#include "agent/protocol.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace mrct::agent {

const std::vector<std::string_view>& operations() {
    static const std::vector<std::string_view> k = {"hello",     "reset",     "configure", "listen",    "connect",
                                                    "status",    "accepted",  "register_mr", "post_recv", "post_write",
                                                    "post_send", "poll",      "read_mem",  "counters",  "close"};
    return k;
}

namespace {
constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(core::bytes_view b) {
    std::string out;
    out.reserve((b.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= b.size(); i += 3) {
        const std::uint32_t v = (std::uint32_t{b[i]} << 16) | (std::uint32_t{b[i + 1]} << 8) | b[i + 2];
        for (int k = 3; k >= 0; --k) out.push_back(k_alphabet[(v >> (6 * k)) & 63]);
    }
    if (const auto rest = b.size() - i) {
        std::uint32_t v = std::uint32_t{b[i]} << 16;
        if (rest == 2) v |= std::uint32_t{b[i + 1]} << 8;
        out.push_back(k_alphabet[(v >> 18) & 63]);
        out.push_back(k_alphabet[(v >> 12) & 63]);
        out.push_back(rest == 2 ? k_alphabet[(v >> 6) & 63] : '=');
        out.push_back('=');
    }
    return out;
}

core::result<core::byte_buffer> base64_decode(std::string_view s) {
    static const auto table = [] {
        std::array<int, 256> t{};
        t.fill(-1);
        for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(k_alphabet[i])] = i;
        return t;
    }();
    if (s.size() % 4) return core::error{"base64: length is not a multiple of 4"};
    core::byte_buffer out;
    out.reserve(s.size() / 4 * 3);
    for (std::size_t i = 0; i < s.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = s[i + k];
            if (c == '=' && i + 4 == s.size() && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad) return core::error{"base64: data after padding"};
            v[k] = table[static_cast<unsigned char>(c)];
            if (v[k] < 0) return core::error{"base64: invalid character"};
        }
        const std::uint32_t w = (std::uint32_t(v[0]) << 18) | (std::uint32_t(v[1]) << 12) | (std::uint32_t(v[2]) << 6) | v[3];
        out.push_back(static_cast<std::uint8_t>(w >> 16));
        if (pad < 2) out.push_back(static_cast<std::uint8_t>(w >> 8));
        if (pad < 1) out.push_back(static_cast<std::uint8_t>(w));
    }
    return out;
}

json ok_response(std::uint64_t id, json body) {
    if (!body.is_object()) body = json::object();
    body["id"] = id;
    body["ok"] = true;
    return body;
}

std::optional<std::size_t> attachment_length(const json& v) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > k_max_attachment) return std::nullopt;
    return static_cast<std::size_t>(v.get<std::uint64_t>());
}

std::size_t take_buffered(std::string& buffered, std::uint8_t* dst, std::size_t n) {
    const std::size_t have = std::min(n, buffered.size());
    if (have) std::memcpy(dst, buffered.data(), have);
    buffered.erase(0, have);
    return have;
}

json error_response(std::uint64_t id, std::string_view c, std::string_view message) {
    return {{"id", id}, {"ok", false}, {"error", {{"code", c}, {"message", message}}}};
}

}  // namespace mrct::agent
