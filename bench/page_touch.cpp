// What bringing fresh pages into memory costs on this host, per 4 MiB
// (the trace's frame block, engine/trace/trace.h): touched one page at a
// time (a fault each), made resident in one call (core::make_resident), and
// touched after that (core::touch_pages); then a write over the whole block,
// which on a VM whose hypervisor maps guest pages at first touch is where
// the rest of the cost shows. Median of N fresh mappings each.
//
//   build/bench/page_touch [--rounds N]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/pages.h"

using namespace mrct;

namespace {

constexpr std::size_t k_block = std::size_t{4} << 20, k_page = 4096;
using clk = std::chrono::steady_clock;

double us_since(clk::time_point t0) { return std::chrono::duration<double, std::micro>(clk::now() - t0).count(); }

struct row {
    std::vector<double> prepare, write;
};

void run(const char* name, int rounds, void (*prepare)(std::uint8_t*)) {
    row r;
    for (int i = 0; i < rounds; ++i) {
        void* m = ::mmap(nullptr, k_block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            std::perror("mmap");
            std::exit(1);
        }
        ::madvise(m, k_block, MADV_NOHUGEPAGE);
        auto* p = static_cast<std::uint8_t*>(m);
        auto t0 = clk::now();
        prepare(p);
        r.prepare.push_back(us_since(t0));
        t0 = clk::now();
        std::memset(p, 0x5A, k_block);  // what the frames' copies then do
        r.write.push_back(us_since(t0));
        ::munmap(m, k_block);
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double a = median(r.prepare), b = median(r.write);
    std::printf("%-34s prepare %8.0f us, then writing the block %8.0f us, in all %8.0f us (%.2f us a page)\n", name, a, b,
                a + b, (a + b) / (k_block / k_page));
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 20;
    for (int i = 1; i + 1 < argc; i += 2)
        if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    std::printf("fresh 4 MiB mappings (small pages), median of %d each\n", rounds);
    run("nothing (faults under the writes)", rounds, [](std::uint8_t*) {});
    run("make_resident", rounds, [](std::uint8_t* p) { core::make_resident(p, k_block); });
    run("make_resident + touch_pages", rounds, [](std::uint8_t* p) {
        core::make_resident(p, k_block);
        core::touch_pages(p, k_block);
    });
    run("touch_pages alone", rounds, [](std::uint8_t* p) { core::touch_pages(p, k_block); });
    return 0;
}
