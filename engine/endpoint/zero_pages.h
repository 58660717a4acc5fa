// A memory region's bytes: zeros that cost a page only when a page is first
// touched, and pages kept for the next region of the same size.
//
// A case registers two 8 MiB regions (run/program.h) and writes a few pages
// of each. Zero-filling them up front was half of a plan run's page faults,
// and faulting fresh pages in for every case most of the rest (a fault costs
// microseconds on a VM; docs/performance.md). So a region is an anonymous
// mapping (zero until touched), writes go through writable(), which marks
// the pages they touch, and a released region's mapping, those pages zeroed
// again, waits in a pool for the next region of its size. (A mapping has no
// sanitizer redzones: writable()'s assertion is what bounds the writes.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mrct::endpoint {

class zero_pages {
public:
    // Released mappings the process keeps for reuse, in all: two cases'
    // regions of 32 MiB. Beyond it a released region is unmapped.
    static constexpr std::size_t k_pool_bytes = std::size_t{128} << 20;

    zero_pages() = default;
    // n zero bytes; throws std::bad_alloc when the address space is short.
    // `resident`: every page is in memory, and touched once, when this
    // returns (config::resident_regions), not faulted in when the first
    // frames are placed (core/pages.h).
    explicit zero_pages(std::size_t n, bool resident = false);
    ~zero_pages();
    zero_pages(zero_pages&& o) noexcept;
    zero_pages& operator=(zero_pages&& o) noexcept;
    zero_pages(const zero_pages&) = delete;
    zero_pages& operator=(const zero_pages&) = delete;

    std::size_t size() const { return n_; }
    std::span<const std::uint8_t> bytes() const { return {p_, n_}; }
    // The only way to write: the pages of [at, at + len) (within size()) are
    // zeroed again before the mapping is reused.
    std::uint8_t* writable(std::size_t at, std::size_t len);

private:
    void release();
    std::uint8_t* p_ = nullptr;
    std::size_t n_ = 0;
    std::vector<std::uint64_t> dirty_;  // a bit per page written since mapped or reused
};

}  // namespace mrct::endpoint
