#include <catch2/catch.hpp>

#include "capture/pcap_file.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;

TEST_CASE("pcap write then read keeps bytes and nanosecond timestamps") {
    // stdio's buffer, and the large one a whole case's capture is written through.
    const std::size_t buffer = GENERATE(std::size_t{0}, capture::pcap_writer::k_bulk_buffer);
    const std::string path = std::string(MRCT_TEST_TMP) + "/pcap_file_test.pcap";
    auto catalog = wire::sample_catalog();
    {
        auto w = capture::pcap_writer::create(path, buffer);
        REQUIRE(w.ok());
        std::int64_t ts = 1'700'000'000'123'456'789;
        for (const auto& s : catalog) (*w)->write(ts++, wire::build(s.spec));
        REQUIRE((*w)->close().ok());
    }
    auto r = capture::pcap_reader::open(path);
    REQUIRE(r.ok());
    CHECK((*r)->link() == capture::link_kind::ethernet);
    std::int64_t ts = 1'700'000'000'123'456'789;
    std::size_t n = 0;
    for (;;) {
        auto rec = (*r)->next();
        REQUIRE(rec.ok());
        if (!rec->has_value()) break;
        const auto& p = **rec;
        CHECK(p.ts_ns == ts++);
        auto want = wire::build(catalog[n].spec);
        CHECK(core::byte_buffer(p.data.begin(), p.data.end()) == want);
        CHECK((*r)->decode(p.data).ok());
        ++n;
    }
    CHECK(n == catalog.size());
}

TEST_CASE("pcap errors are reported, not thrown") {
    auto r = capture::pcap_reader::open("/nonexistent/file.pcap");
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().message.find("/nonexistent/file.pcap") != std::string::npos);
    auto w = capture::pcap_writer::create("/nonexistent/dir/out.pcap");
    CHECK_FALSE(w.ok());
}

TEST_CASE("pcap: a write the disk refused fails the close, whatever the buffer") {
    const std::size_t buffer = GENERATE(std::size_t{0}, capture::pcap_writer::k_bulk_buffer);
    auto w = capture::pcap_writer::create("/dev/full", buffer);  // every write: ENOSPC
    REQUIRE(w.ok());
    const auto frame = wire::build(wire::sample_catalog().front().spec);
    for (int i = 0; i < 2000; ++i) (*w)->write(i, frame);  // more than either buffer holds
    CHECK_FALSE((*w)->close().ok());
    auto small = capture::pcap_writer::create("/dev/full", buffer);
    REQUIRE(small.ok());
    (*small)->write(0, frame);  // within the buffer: refused at the close's flush
    CHECK_FALSE((*small)->close().ok());
}
