// What the hold figures cost the checks on a long real-time case:
// trace::timing_figures::held_at and held_before, asked once per RTT sample
// and per resend, over as many spans as a 64 MiB case on a busy wire records
// (the host probe's holds and the engine's late moments: up to 2^18 `late`
// spans), scanned (before index_holds) and indexed.
//
//   build/bench/hold_index [--spans N] [--calls N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/rng.h"
#include "trace/trace.h"

using namespace mrct;
using core::nanos;

int main(int argc, char** argv) {
    std::size_t spans = 1 << 18, calls = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--spans")) spans = std::strtoull(argv[i + 1], nullptr, 10);
        if (!std::strcmp(argv[i], "--calls")) calls = std::strtoull(argv[i + 1], nullptr, 10);
    }
    core::rng r(1, "hold_index");
    trace::timing_figures tm;
    tm.realtime = true;
    nanos due{0};
    for (std::size_t i = 0; i < spans; ++i) {  // a span every ~50 us, 20-200 us long: ~13 s of case
        due += nanos{static_cast<std::int64_t>(r.between(1'000, 100'000))};
        tm.late.push_back({due, nanos{static_cast<std::int64_t>(r.between(20'000, 200'000))}});
        if (i % 4 == 0) tm.dut_waits.push_back({due + nanos{5'000}, nanos{static_cast<std::int64_t>(r.between(20'000, 90'000))}});
    }
    auto time = [&](const trace::timing_figures& f, const char* what) {
        core::rng q(2, "times");
        std::int64_t sum = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < calls; ++i) {
            const nanos t{static_cast<std::int64_t>(q.below(static_cast<std::uint64_t>(due.count())))};
            sum += f.held_at(t).count() + f.held_before(t).count();
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%-8s %zu late + %zu dut_waits spans: %9.1f ns per held_at + held_before pair (checksum %lld)\n", what,
                    f.late.size(), f.dut_waits.size(), s * 1e9 / static_cast<double>(calls), static_cast<long long>(sum));
    };
    time(tm, "scanned");
    const auto t0 = std::chrono::steady_clock::now();
    tm.index_holds();
    std::printf("index_holds: %.1f ms\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
    time(tm, "indexed");
}
