// core::make_resident (engine/core/pages.h): the whole pages of a range are
// in memory when it returns, and the bytes are those that were there.
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/pages.h"
#include "vm_flags.h"

using namespace mrct;

namespace {
constexpr std::size_t k_page = 4096;
// Pages of [p, p + n) in memory now (mincore); p page-aligned.
std::size_t resident_pages(void* p, std::size_t n) {
    std::vector<unsigned char> v((n + k_page - 1) / k_page);
    REQUIRE(::mincore(p, n, v.data()) == 0);
    std::size_t k = 0;
    for (auto c : v) k += c & 1;
    return k;
}
struct mapping {
    std::size_t n;
    std::uint8_t* p;
    explicit mapping(std::size_t bytes)
        : n(bytes),
          p(static_cast<std::uint8_t*>(::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {
        REQUIRE(p != MAP_FAILED);
        ::madvise(p, n, MADV_NOHUGEPAGE);  // a touch faults in one page, not 2 MiB
    }
    ~mapping() { ::munmap(p, n); }
};
}  // namespace

TEST_CASE("make_resident: every page of a fresh mapping is in memory, and reads zero", "[core][pages]") {
    REQUIRE(::sysconf(_SC_PAGESIZE) == static_cast<long>(k_page));
    mapping m(64 * k_page);
    REQUIRE(resident_pages(m.p, m.n) == 0);  // untouched anonymous pages
    REQUIRE(core::make_resident(m.p, m.n));
    CHECK(resident_pages(m.p, m.n) == 64);
    for (std::size_t i = 0; i < m.n; i += 997) CHECK(m.p[i] == 0);
}

TEST_CASE("make_resident: only the whole pages inside the range; the bytes stay", "[core][pages]") {
    mapping m(8 * k_page);
    // Pages 0 and 7 are written first, so they hold bytes to keep; the
    // range starts inside page 1 and ends inside page 6.
    m.p[10] = 0x5A;
    m.p[7 * k_page + 3] = 0xA5;
    REQUIRE(resident_pages(m.p, m.n) == 2);
    REQUIRE(core::make_resident(m.p + k_page + 1, 6 * k_page - 2));  // [page 1 + 1, page 7 - 1)
    std::vector<unsigned char> v(8);
    REQUIRE(::mincore(m.p, m.n, v.data()) == 0);
    // Pages 2 to 5 lie wholly inside; 1 and 6 only partly, so they wait.
    CHECK(std::vector<int>{v[0] & 1, v[1] & 1, v[2] & 1, v[3] & 1, v[4] & 1, v[5] & 1, v[6] & 1, v[7] & 1} ==
          std::vector<int>{1, 0, 1, 1, 1, 1, 0, 1});
    CHECK(m.p[10] == 0x5A);
    CHECK(m.p[7 * k_page + 3] == 0xA5);
    // Bytes already written inside the range are kept too.
    m.p[3 * k_page + 100] = 0x11;
    REQUIRE(core::make_resident(m.p, m.n));
    CHECK(resident_pages(m.p, m.n) == 8);
    CHECK(m.p[3 * k_page + 100] == 0x11);
    CHECK(m.p[10] == 0x5A);
}

TEST_CASE("make_resident: a range with no whole page is nothing to do", "[core][pages]") {
    mapping m(2 * k_page);
    CHECK(core::make_resident(m.p, 0));
    CHECK(core::make_resident(m.p + 1, k_page));  // inside pages 0 and 1, wholly in neither
    CHECK(resident_pages(m.p, m.n) == 0);
}

TEST_CASE("touch_pages: each whole page written once, its bytes kept", "[core][pages]") {
    mapping m(6 * k_page);
    m.p[2 * k_page + 5] = 0x77;
    core::touch_pages(m.p + 1, 5 * k_page);  // pages 1 to 4 lie wholly inside
    std::vector<unsigned char> v(6);
    REQUIRE(::mincore(m.p, m.n, v.data()) == 0);
    CHECK(std::vector<int>{v[0] & 1, v[1] & 1, v[2] & 1, v[3] & 1, v[4] & 1, v[5] & 1} == std::vector<int>{0, 1, 1, 1, 1, 0});
    CHECK(m.p[2 * k_page + 5] == 0x77);
    CHECK(m.p[3 * k_page] == 0);
}

// The advice is on the mapping (/proc/self/smaps: "hg" among its VmFlags),
// where the kernel has transparent huge pages at all.
TEST_CASE("prefer_huge_pages: the mapping is advised for 2 MiB pages; a range with no whole page is not", "[core][pages]") {
    if (::access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) return;  // no THP: refused, said by the result
    mapping m(std::size_t{4} << 20);  // advised MADV_NOHUGEPAGE: the call must undo it
    auto* p = m.p;
    std::uint8_t small[64];
    CHECK_FALSE(core::prefer_huge_pages(small, sizeof small));
    REQUIRE(core::prefer_huge_pages(p, m.n));
    CHECK_THAT(test::vm_flags_of(p), Catch::Contains(" hg"));
    // The bytes are untouched by the advice: still zero.
    CHECK(p[0] == 0);
    CHECK(p[m.n - 1] == 0);
}

// D128: a real-time process leaves transparent huge pages, khugepaged's
// scans with them (where THP is "always", all of its memory would be theirs).
TEST_CASE("no_transparent_huge_pages: the process is out of THP until it asks back", "[core][pages]") {
    const int was = ::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
    REQUIRE(was >= 0);
    REQUIRE(core::no_transparent_huge_pages());
    CHECK(::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1);
    ::prctl(PR_SET_THP_DISABLE, was, 0, 0, 0);  // as it was, for the tests after this one
}
