#include "endpoint/zero_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <iterator>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "core/pages.h"

namespace mrct::endpoint {

namespace {

constexpr std::size_t k_page = 4096;

// Zeroed mappings of released regions, for the whole process: a plan's
// cases run on worker threads that live for one suite each.
struct pool {
    std::mutex m;
    struct kept {
        std::uint8_t* p;
        std::size_t n;
    };
    std::vector<kept> free;
    std::size_t bytes = 0;
    // The most recently kept mapping of n bytes: its pages are the likeliest
    // to be in memory still.
    std::uint8_t* take(std::size_t n) {
        for (auto it = free.rbegin(); it != free.rend(); ++it) {
            if (it->n != n) continue;
            auto* p = it->p;
            bytes -= n;
            free.erase(std::next(it).base());
            return p;
        }
        return nullptr;
    }
    bool has_room(std::size_t n) const { return n <= zero_pages::k_pool_bytes - bytes; }
    void reserve(std::size_t n) { bytes += n; }  // room held while the pages are zeroed
    void keep(std::uint8_t* p, std::size_t n) { free.push_back({p, n}); }  // after reserve(n)
};

// Never destroyed: a worker may release a region while the process exits,
// and the kernel takes the mappings back then anyway.
pool& the_pool() {
    static pool* p = new pool;
    return *p;
}

}  // namespace

zero_pages::zero_pages(std::size_t n, bool resident) : n_(n) {
    if (n == 0) return;
    {
        auto& pl = the_pool();
        std::lock_guard<std::mutex> g(pl.m);
        p_ = pl.take(n);
    }
    if (!p_) {
        // Private anonymous pages read as zero and cost nothing until touched.
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc{};
        p_ = static_cast<std::uint8_t*>(p);
    }
    // The mapping is whole pages: its last one, partly beyond n, too.
    const std::size_t whole = (n_ + k_page - 1) / k_page * k_page;
    // Not advised for 2 MiB pages (MADV_HUGEPAGE), though an 8 MiB region
    // was then resident in 0.5 ms against 7.5-15 ms of 4 KiB faults on this
    // project's VM: the advice puts the process in khugepaged's scans, and
    // khugepaged, at nice 19, held mrct-refnic's memory map for 2.5 s beside
    // stress-ng (a register_mr unanswered, the case an error; D128).
    if (resident && !core::make_resident(p_, whole)) {  // no memory for it: refused, as an allocation is
        ::munmap(p_, n_);
        throw std::bad_alloc{};
    }
    // Touched too, at registration rather than under the first frames placed
    // (a VM's hypervisor maps a page at the guest's first touch: core/pages.h).
    if (resident) core::touch_pages(p_, whole);
}

zero_pages::~zero_pages() { release(); }

zero_pages::zero_pages(zero_pages&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)),
      n_(std::exchange(o.n_, 0)),
      dirty_(std::move(o.dirty_)) {}

zero_pages& zero_pages::operator=(zero_pages&& o) noexcept {
    if (this != &o) {
        release();
        p_ = std::exchange(o.p_, nullptr);
        n_ = std::exchange(o.n_, 0);
        dirty_ = std::move(o.dirty_);
    }
    return *this;
}

std::uint8_t* zero_pages::writable(std::size_t at, std::size_t len) {
    assert(at <= n_ && len <= n_ - at);
    if (len > 0) {
        if (dirty_.empty()) dirty_.assign((n_ / k_page + 64) / 64, 0);
        for (std::size_t pg = at / k_page; pg <= (at + len - 1) / k_page; ++pg) dirty_[pg / 64] |= std::uint64_t{1} << (pg % 64);
    }
    return p_ + at;
}

void zero_pages::release() {
    if (!p_) return;
    auto& pl = the_pool();
    std::unique_lock<std::mutex> g(pl.m);
    if (pl.has_room(n_)) {
        pl.reserve(n_);
        g.unlock();
        for (std::size_t w = 0; w < dirty_.size(); ++w)
            for (std::uint64_t bits = dirty_[w]; bits != 0; bits &= bits - 1) {
                const std::size_t at = (w * 64 + static_cast<std::size_t>(std::countr_zero(bits))) * k_page;
                std::memset(p_ + at, 0, std::min(k_page, n_ - at));
            }
        g.lock();
        pl.keep(p_, n_);
    } else {
        g.unlock();
        ::munmap(p_, n_);
    }
    p_ = nullptr;
    n_ = 0;
    dirty_.clear();
}

}  // namespace mrct::endpoint
