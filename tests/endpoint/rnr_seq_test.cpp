#include <catch2/catch.hpp>

#include "endpoint/rnr_seq.h"

using mrct::endpoint::rnr_seq_tracker;

TEST_CASE("RnrSeq serial order skips 0 when it wraps (§4)") {
    CHECK(rnr_seq_tracker::next(1) == 2);
    CHECK(rnr_seq_tracker::next(0xFFFF) == 1);
    CHECK(rnr_seq_tracker::distance(0xFFFF, 1) == 1);
    CHECK(rnr_seq_tracker::distance(0xFFFE, 2) == 3);
    CHECK(rnr_seq_tracker::distance(0, 5) == 5);
    CHECK(rnr_seq_tracker::after(0xFFF0, 3));
    CHECK_FALSE(rnr_seq_tracker::after(3, 0xFFF0));
    CHECK_FALSE(rnr_seq_tracker::after(7, 7));
    CHECK_FALSE(rnr_seq_tracker::after(7, 0));
}

TEST_CASE("RnrSeq tracker: missing until every RnrSeq up to the highest RnrCount arrived (MR-RNR-6)") {
    rnr_seq_tracker t;
    CHECK_FALSE(t.missing());
    t.count(2);
    CHECK(t.missing());
    t.received(2);  // 1 still missing
    CHECK(t.missing());
    t.received(2);  // a repeated RNR changes nothing
    CHECK(t.missing());
    t.received(1);
    CHECK_FALSE(t.missing());
    CHECK(t.have() == 2);
    t.received(3);  // an RNR may arrive before the ACK that counts it
    t.count(3);
    CHECK_FALSE(t.missing());
    t.count(2);  // an older count changes nothing
    CHECK(t.highest() == 3);
}

TEST_CASE("RnrSeq tracker across the wrap: 65535 is followed by 1, and a gap there is seen") {
    rnr_seq_tracker t;
    for (unsigned s = 1; s <= 0xFFFD; ++s) t.received(static_cast<std::uint16_t>(s));
    t.count(0xFFFD);
    CHECK_FALSE(t.missing());
    t.count(2);  // two more rejections: 65534, 65535, then 1, 2 after the wrap
    CHECK(t.highest() == 2);
    CHECK(t.missing());
    t.received(0xFFFE);
    t.received(1);  // 65535 lost
    t.received(2);
    CHECK(t.missing());
    CHECK(t.have() == 0xFFFE);
    t.received(0xFFFF);  // re-sent in answer to RNR_QUERY
    CHECK_FALSE(t.missing());
    CHECK(t.have() == 2);
    // The distinct count of seen RnrSeqs (the old rule) would call this complete
    // long before: 65535 different values were received.
    t.count(5);
    CHECK(t.missing());
}
