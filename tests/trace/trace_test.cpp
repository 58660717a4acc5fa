// The trace (engine/trace/trace.h): frames kept in blocks stay where they
// were put, as a trace grows, is moved or copied; the hold figures indexed
// agree with a scan of every span.
#include <sys/mman.h>

#include <catch2/catch.hpp>

#include "core/rng.h"
#include "trace/trace.h"

using namespace mrct;
using core::nanos;

namespace {
core::byte_buffer frame(std::size_t n, std::uint8_t seed) {
    core::byte_buffer b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7);
    return b;
}
bool same(core::bytes_view a, const core::byte_buffer& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
}  // namespace

TEST_CASE("frame_store: kept frames are copies that never move", "[trace]") {
    trace::frame_store st;
    std::vector<core::byte_buffer> in;
    std::vector<core::bytes_view> out;
    // Enough 4186-byte frames to fill three blocks, and one larger than a block.
    const std::size_t n = 3 * trace::frame_store::k_block / 4186 + 5;
    for (std::size_t i = 0; i < n; ++i) {
        in.push_back(frame(4186, static_cast<std::uint8_t>(i)));
        out.push_back(st.keep(in.back()));
        CHECK(out.back().data() != in.back().data());
    }
    in.push_back(frame(trace::frame_store::k_block + 1, 3));
    out.push_back(st.keep(in.back()));
    in.push_back(frame(60, 9));  // after the big one
    out.push_back(st.keep(in.back()));
    for (std::size_t i = 0; i < in.size(); ++i) {
        INFO("frame " << i);
        CHECK(out[i].size() == in[i].size());
        CHECK(same(out[i], in[i]));
    }
    // No two frames overlap.
    auto sorted = out;
    std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return std::less<>()(a.data(), b.data()); });
    for (std::size_t i = 1; i < sorted.size(); ++i)
        CHECK(std::less_equal<>()(sorted[i - 1].data() + sorted[i - 1].size(), sorted[i].data()));
    CHECK(st.keep({}).empty());
}

TEST_CASE("frame_store: prepare opens a block the next frames go into, and only when room is short", "[trace]") {
    trace::frame_store st;
    st.prepare();
    CHECK(st.blocks() == 1);
    const auto a = frame(4186, 1), b = frame(60, 2);
    const auto ka = st.keep(a), kb = st.keep(b);
    CHECK(st.blocks() == 1);
    CHECK(kb.data() == ka.data() + ka.size());  // the prepared block, in order
    st.prepare();  // more than half the block is free: no new one
    CHECK(st.blocks() == 1);
    const auto big = frame(trace::frame_store::k_block / 2, 3);
    st.keep(big);
    st.prepare();  // less than half free now
    CHECK(st.blocks() == 2);
    const auto kc = st.keep(b);
    CHECK(same(kc, b));
    CHECK(same(ka, a));
    CHECK(same(kb, b));
}

TEST_CASE("frame_store: after prepare, a block is in memory when it opens, not page by page as frames come", "[trace]") {
    // Pages of the block a view starts, from the view's page to the block's
    // end, that are not in memory.
    auto missing = [](core::bytes_view at_block_start) {
        const std::uintptr_t page = 4096;
        const auto from = (reinterpret_cast<std::uintptr_t>(at_block_start.data()) + page - 1) & ~(page - 1);
        const auto to = (reinterpret_cast<std::uintptr_t>(at_block_start.data()) + trace::frame_store::k_block) & ~(page - 1);
        std::vector<unsigned char> v((to - from) / page);
        REQUIRE(::mincore(reinterpret_cast<void*>(from), to - from, v.data()) == 0);
        return std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) == 0; });
    };
    trace::frame_store st;
    CHECK_FALSE(st.resident());
    st.prepare();
    CHECK(st.resident());
    const auto f = frame(4186, 1);
    const auto first = st.keep(f);
    CHECK(missing(first) == 0);
    // Fill the block: the next frame opens a second one, made resident too.
    core::bytes_view second;
    for (std::size_t i = 0; st.blocks() == 1; ++i) second = st.keep(f);
    CHECK(st.blocks() == 2);
    CHECK(missing(second) == 0);
    CHECK(same(second, f));
    trace::frame_store copy(st);
    CHECK(copy.resident());
}

TEST_CASE("frame_store: prepare(expect) readies blocks for that many bytes, and the blocks opened next are those", "[trace]") {
    constexpr auto blk = trace::frame_store::k_block;
    trace::frame_store st;
    st.prepare(2 * blk + 1);  // three blocks: one open, two ready
    CHECK(st.blocks() == 1);
    CHECK(st.ready() == 2);
    const auto f = frame(4186, 7);
    std::vector<core::bytes_view> kept;
    while (st.blocks() < 3) kept.push_back(st.keep(f));
    CHECK(st.ready() == 0);
    while (st.blocks() < 4) kept.push_back(st.keep(f));  // beyond what was prepared: a new one
    CHECK(st.ready() == 0);
    for (const auto& k : kept) CHECK(same(k, f));
    // Enough room already: nothing more is readied.
    trace::frame_store small;
    small.prepare();
    CHECK(small.blocks() == 1);
    CHECK(small.ready() == 0);
}

TEST_CASE("trace: prepare(expect) reserves the records of that many bytes and brings their pages in; recording them never moves a record", "[trace]") {
    trace::trace tr;
    constexpr std::size_t expect = std::size_t{64} << 20;  // 64 MiB: a record per 2 KiB, 32 k + 1024
    tr.prepare(expect);
    const std::size_t n = expect / trace::trace::k_bytes_per_record + 1024;
    REQUIRE(tr.frames.capacity() >= n);
    CHECK(tr.store.resident());
    // The records' storage is in memory before any frame is recorded.
    const std::uintptr_t page = 4096;
    const auto lo = (reinterpret_cast<std::uintptr_t>(tr.frames.data()) + page - 1) & ~(page - 1);
    const auto hi = (reinterpret_cast<std::uintptr_t>(tr.frames.data() + n)) & ~(page - 1);
    std::vector<unsigned char> v((hi - lo) / page);
    REQUIRE(::mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()) == 0);
    CHECK(std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) == 0; }) == 0);
    const auto* before = tr.frames.data();
    const auto f = frame(4186, 3);
    for (std::size_t i = 0; i < n; ++i) tr.add(nanos{static_cast<std::int64_t>(i)}, trace::dir::from_dut, f);
    CHECK(tr.frames.data() == before);
    CHECK(same(tr.frames.front().bytes, f));
    CHECK(same(tr.frames.back().bytes, f));
    // A small case still gets the floor of records, and past it the vector grows as before.
    trace::trace small;
    small.prepare(4096);
    CHECK(small.frames.capacity() >= trace::trace::k_min_records);
    // Prepared again with records kept: room for that many more.
    const std::size_t kept = tr.frames.size();
    tr.prepare(expect);
    CHECK(tr.frames.capacity() >= kept + n);
    CHECK(same(tr.frames[kept - 1].bytes, f));
}

TEST_CASE("trace: records keep their bytes and decodes as frames grows, and in a copy or a move", "[trace]") {
    trace::trace tr;
    std::vector<core::byte_buffer> in;
    for (int i = 0; i < 5000; ++i) {  // the frames vector reallocates many times
        in.push_back(frame(100 + static_cast<std::size_t>(i % 300), static_cast<std::uint8_t>(i)));
        tr.add(core::nanos{i}, trace::dir::from_dut, in.back());
    }
    auto check = [&](const trace::trace& t, std::size_t count) {
        REQUIRE(t.frames.size() == count);
        for (std::size_t i = 0; i < in.size(); ++i) {
            INFO("frame " << i);
            CHECK(same(t.frames[i].bytes, in[i]));
            CHECK(t.frames[i].index == i);
        }
    };
    check(tr, in.size());
    trace::trace copy = tr;
    // The copy writes its own frames into new blocks: the original's are untouched.
    const auto extra = frame(4000, 42);
    copy.add(core::nanos{9999}, trace::dir::to_dut, extra);
    tr.add(core::nanos{9999}, trace::dir::to_dut, frame(4000, 43));
    check(tr, in.size() + 1);
    check(copy, in.size() + 1);
    CHECK(same(copy.frames.back().bytes, extra));
    CHECK(copy.frames.back().bytes.data() != tr.frames.back().bytes.data());
    trace::trace moved = std::move(tr);
    check(moved, in.size() + 1);
    {
        trace::trace gone = copy;  // a copy that dies leaves the blocks to the others
    }
    check(copy, in.size() + 1);
}

TEST_CASE("timing_figures: held_at and held_before indexed give what the scans of every span give", "[trace]") {
    using trace::timing_figures;
    core::rng r(11, "holds");
    for (int round = 0; round < 50; ++round) {
        timing_figures tm;
        nanos due{0};
        const auto n = r.between(0, 60);
        for (std::uint64_t i = 0; i < n; ++i) {  // late: sorted by due, overlapping, nested, touching
            due += nanos{static_cast<std::int64_t>(r.below(40))};
            tm.late.push_back({due, nanos{static_cast<std::int64_t>(r.between(1, 120))}});
        }
        for (std::uint64_t i = 0, m = r.below(30); i < m; ++i)  // dut_waits: in any order
            tm.dut_waits.push_back({nanos{static_cast<std::int64_t>(r.below(2000))}, nanos{static_cast<std::int64_t>(r.between(1, 90))}});
        if (round % 5 == 0) tm.assumed_hold = nanos{7};
        const timing_figures scan = tm;  // not indexed: every call scans
        tm.index_holds();
        for (std::int64_t t = -5; t < due.count() + 200; t += 1 + static_cast<std::int64_t>(r.below(3))) {
            INFO("round " << round << ", t " << t);
            REQUIRE(tm.held_at(nanos{t}) == scan.held_at(nanos{t}));
            REQUIRE(tm.held_before(nanos{t}) == scan.held_before(nanos{t}));
        }
        // A span added after the index: both scan again, and see it.
        tm.late.push_back({due + nanos{500}, nanos{50}});
        timing_figures again = tm;
        again.index_holds();
        for (const nanos t : {due + nanos{510}, due + nanos{549}, nanos{100}}) {
            CHECK(tm.held_at(t) == again.held_at(t));
            CHECK(tm.held_before(t) == again.held_before(t));
        }
        CHECK(tm.held_at(due + nanos{510}) >= nanos{40});  // the new span, 40 ns left of it
        CHECK(tm.held_before(due + nanos{510}) >= nanos{10});
    }
}
