// The trace's frame store (engine/trace/trace.h): frames kept in blocks stay
// where they were put, as a trace grows, is moved or copied.
#include <catch2/catch.hpp>

#include "trace/trace.h"

using namespace mrct;

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
