// Splitting the short lists of options and names that specs and tables use;
// making text from anywhere (plans, agents) safe to write as UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mrct::core {

// The non-empty pieces of `s` between the characters in `seps`:
// split("bug=x,,mode=y", ",") -> {"bug=x", "mode=y"};
// split("MR-RNR-2, MR-RNR-3", ", ") -> {"MR-RNR-2", "MR-RNR-3"}.
inline std::vector<std::string> split(std::string_view s, std::string_view seps) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < s.size()) {
        auto end = s.find_first_of(seps, pos);
        if (end == std::string_view::npos) end = s.size();
        if (end > pos) out.emplace_back(s.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// The pieces with `sep` between them: join({"a", "b"}) -> "a, b".
inline std::string join(const std::vector<std::string>& pieces, std::string_view sep = ", ") {
    std::string out;
    for (const auto& p : pieces) {
        if (!out.empty()) out += sep;
        out += p;
    }
    return out;
}

// `s` as valid UTF-8 (RFC 3629: no overlong forms, surrogates or code points
// beyond U+10FFFF): every byte that does not belong to a well-formed sequence
// becomes the four characters \xHH; valid text, backslashes included, is
// unchanged. Reports and JSON go through it, so bytes from a plan or an
// agent's reply can never make them unwritable.
inline std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;  // continuation bytes
        unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the first continuation byte
        if (b < 0x80) n = 0;
        else if (b >= 0xC2 && b <= 0xDF) n = 1;
        else if (b == 0xE0) n = 2, lo = 0xA0;
        else if (b == 0xED) n = 2, hi = 0x9F;
        else if (b >= 0xE1 && b <= 0xEF) n = 2;
        else if (b == 0xF0) n = 3, lo = 0x90;
        else if (b >= 0xF1 && b <= 0xF3) n = 3;
        else if (b == 0xF4) n = 3, hi = 0x8F;
        else n = 4;  // 0x80..0xC1, 0xF5..0xFF: never a first byte
        bool ok = n < 4 && i + n < s.size();  // the whole sequence is there
        if (ok) {
            for (std::size_t k = 1; ok && k <= n; ++k) {
                const auto c = static_cast<unsigned char>(s[i + k]);
                ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
            }
        }
        if (ok) {
            out.append(s.substr(i, n + 1));
            i += n + 1;
        } else {
            out += "\\x";
            out += k_hex[b >> 4];
            out += k_hex[b & 15];
            ++i;
        }
    }
    return out;
}

}  // namespace mrct::core
