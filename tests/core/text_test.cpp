#include <catch2/catch.hpp>

#include "core/text.h"

using mrct::core::split;
using v = std::vector<std::string>;

TEST_CASE("split: non-empty pieces between separators") {
    CHECK(split("bug=x,,mode=y", ",") == v{"bug=x", "mode=y"});
    CHECK(split("MR-RNR-2, MR-RNR-3", ", ") == v{"MR-RNR-2", "MR-RNR-3"});
    CHECK(split(",a,", ",") == v{"a"});
    CHECK(split("", ",").empty());
    CHECK(split(",,", ",").empty());
    CHECK(split("one", ",") == v{"one"});
}

TEST_CASE("valid_utf8: valid text unchanged, every stray byte escaped as \\xHH") {
    using mrct::core::valid_utf8;
    CHECK(valid_utf8("plain, with a \\ backslash") == "plain, with a \\ backslash");
    CHECK(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));  // NUL is text; JSON escapes it
    CHECK(valid_utf8("\xFF\xFE") == "\\xFF\\xFE");
    CHECK(valid_utf8("t \xC3\x28 x") == "t \\xC3( x");          // a lead byte without its continuation
    CHECK(valid_utf8("\xC0\xAF") == "\\xC0\\xAF");              // overlong '/'
    CHECK(valid_utf8("\xE0\x80\xAF") == "\\xE0\\x80\\xAF");     // overlong, three bytes
    CHECK(valid_utf8("\xED\xA0\x80") == "\\xED\\xA0\\x80");     // a UTF-16 surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");  // beyond U+10FFFF
    CHECK(valid_utf8("end \xE2\x82") == "end \\xE2\\x82");      // cut short at the end
    CHECK(valid_utf8("\x80") == "\\x80");                       // a lone continuation byte
    // The result is always valid: escaping it again changes nothing.
    for (int b = 0; b < 256; ++b) {
        const std::string s = "x" + std::string(1, static_cast<char>(b)) + "\x80y";
        CHECK(valid_utf8(valid_utf8(s)) == valid_utf8(s));
    }
}

TEST_CASE("join: pieces with a separator between them") {
    CHECK(mrct::core::join({}) == "");
    CHECK(mrct::core::join({"a"}) == "a");
    CHECK(mrct::core::join({"a", "b", "c"}) == "a, b, c");
    CHECK(mrct::core::join({"x", "y"}, "`, `") == "x`, `y");
}
