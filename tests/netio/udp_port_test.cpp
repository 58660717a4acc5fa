// The UDP port over loopback sockets, and receive timestamps.
#include <catch2/catch.hpp>

#include <chrono>

#include "netio/port.h"
#include "frames.h"

using namespace mrct;

TEST_CASE("wire_age: how long ago a kernel timestamp was; 0 when there is none") {
    CHECK(netio::wire_age(0) == core::nanos{0});
    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(netio::wire_age(now_ns + 1'000'000'000) == core::nanos{0});  // a stamp in the future
    const auto a = netio::wire_age(now_ns - 5'000'000);
    CHECK(a >= core::nanos{5'000'000});
    CHECK(a < core::nanos{5'000'000'000});
}

TEST_CASE("udp port on loopback: a frame crosses with its kernel receive timestamp") {
    // Two ports on 127.0.0.1 and 127.0.0.2 (both loopback on Linux), UDP 4791.
    boost::asio::io_context io;
    netio::udp_options oa, ob;
    oa.local = *netio::parse_ip("127.0.0.1");
    oa.remote = ob.local = *netio::parse_ip("127.0.0.2");
    ob.remote = oa.local;
    auto a = netio::make_udp_port(io, oa);
    auto b = netio::make_udp_port(io, ob);
    if (!a || !b) {
        WARN("UDP 4791 on loopback unavailable here: " << (!a ? a.err().message : b.err().message));
        return;
    }
    core::byte_buffer got;
    std::int64_t stamp = 0;
    (*b)->start([&](core::bytes_view f, std::int64_t wire_ns) {
        got.assign(f.begin(), f.end());
        stamp = wire_ns;
    });
    (*a)->start([](core::bytes_view, std::int64_t) {});
    const auto sent = wire::build(test::write_spec({127, 0, 0, 1}, {127, 0, 0, 2}));
    const auto before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    REQUIRE((*a)->send(sent).ok());
    for (int i = 0; i < 200 && got.empty(); ++i) io.run_for(std::chrono::milliseconds(5));
    REQUIRE_FALSE(got.empty());
    CHECK(std::equal(got.begin() + 12, got.end(), sent.begin() + 12));
    CHECK(stamp >= before);
    CHECK(netio::wire_age(stamp) < core::nanos{std::chrono::seconds(5)});
    (*a)->stop();
    (*b)->stop();
}
