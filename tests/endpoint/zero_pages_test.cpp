#include "endpoint/zero_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "../core/vm_flags.h"

using mrct::endpoint::zero_pages;

namespace {
bool all_zero(const zero_pages& z) {
    const auto b = z.bytes();
    return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}
// Pages of z in memory now (mincore).
std::size_t resident_pages(const zero_pages& z) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((z.size() + page - 1) / page);
    auto* p = const_cast<std::uint8_t*>(z.bytes().data());
    REQUIRE(::mincore(p, z.size(), v.data()) == 0);
    return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](unsigned char c) { return c & 1; }));
}
}  // namespace

TEST_CASE("zero_pages: a new region reads as zeros of its size", "[endpoint][zero_pages]") {
    zero_pages z(3 * 4096 + 100);
    CHECK(z.size() == 3 * 4096 + 100);
    CHECK(all_zero(z));
    zero_pages none(0);
    CHECK(none.size() == 0);
    CHECK(none.bytes().empty());
}

TEST_CASE("zero_pages: a reused mapping reads as zeros again", "[endpoint][zero_pages]") {
    // An odd size, so that no other test's region of it waits in the pool.
    constexpr std::size_t n = 5 * 4096 + 123;
    const std::uint8_t* first = nullptr;
    {
        zero_pages z(n);
        first = z.bytes().data();
        // Across a page boundary, in the last partial page, and one byte.
        std::memset(z.writable(4096 - 10, 20), 0xAB, 20);
        std::memset(z.writable(n - 50, 50), 0xCD, 50);
        std::memset(z.writable(2 * 4096 + 7, 1), 0xEF, 1);
        CHECK(z.bytes()[4096 - 10] == 0xAB);
        CHECK(z.bytes()[4096 + 9] == 0xAB);
        CHECK(z.bytes()[n - 1] == 0xCD);
        CHECK(z.bytes()[2 * 4096 + 7] == 0xEF);
        CHECK(!all_zero(z));
    }
    zero_pages again(n);
    REQUIRE(again.bytes().data() == first);  // the pool gave the same pages back
    CHECK(all_zero(again));
}

TEST_CASE("zero_pages: a move carries the pages and what was written", "[endpoint][zero_pages]") {
    constexpr std::size_t n = 2 * 4096 + 77;
    zero_pages a(n);
    std::memset(a.writable(4096, 4096), 0x11, 4096);
    zero_pages b(std::move(a));
    CHECK(a.size() == 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(b.bytes()[4096] == 0x11);
    zero_pages c;
    c = std::move(b);
    const auto* p = c.bytes().data();
    CHECK(c.bytes()[8191] == 0x11);
    c = zero_pages(n);  // the old pages go back to the pool, zeroed
    // The pool hands back the mapping released last.
    const auto* q = c.bytes().data();
    zero_pages d(n);
    CHECK(d.bytes().data() == p);
    CHECK(all_zero(d));
    CHECK(q != p);
}

TEST_CASE("zero_pages: resident pages are in memory from the start, others when touched", "[endpoint][zero_pages]") {
    // Odd sizes: fresh mappings, not one a test before released.
    constexpr std::size_t n = 64 * 4096 + 11;
    zero_pages lazy(n);
    CHECK(resident_pages(lazy) == 0);
    std::memset(lazy.writable(3 * 4096, 2 * 4096), 1, 2 * 4096);
    CHECK(resident_pages(lazy) == 2);
    zero_pages pinned(n + 4096, true);
    CHECK(resident_pages(pinned) == 66);
    CHECK(all_zero(pinned));
}

// D128: resident or not, a region is never advised MADV_HUGEPAGE. The
// advice puts the process in khugepaged's scans, and khugepaged (nice 19)
// held mrct-refnic's memory map 2.5 s beside stress-ng.
TEST_CASE("zero_pages: a region is not advised for huge pages, resident or not", "[endpoint][zero_pages]") {
    constexpr std::size_t n = std::size_t{8} << 20;
    zero_pages pinned(n, true);
    zero_pages lazy(n);
    for (const zero_pages* z : {&pinned, &lazy}) {
        const auto flags = mrct::test::vm_flags_of(z->bytes().data());
        REQUIRE_FALSE(flags.empty());
        CHECK_THAT(flags, !Catch::Contains(" hg"));
    }
}
