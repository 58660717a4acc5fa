// The engine's interfaces' own drop counters (netio/if_drops.h, D144).
#include <catch2/catch.hpp>

#include "netio/if_drops.h"

using namespace mrct;

TEST_CASE("if_drops: receive and transmit drops between two readings, each counter modulo 2^32") {
    netio::link_counters a{10, 1, 2, 3, 7, 0};
    netio::link_counters b = a;
    CHECK_FALSE(netio::drops_between(a, b).any());
    b.rx_dropped += 4;
    b.rx_missed += 1;
    b.rx_fifo += 2;
    b.rx_over += 3;
    b.tx_dropped += 5;
    b.tx_fifo += 6;
    auto d = netio::drops_between(a, b);
    CHECK(d.rx == 10);
    CHECK(d.tx == 11);
    // A 32-bit counter that wrapped between the readings.
    netio::link_counters w{0xfffffffe, 0, 0, 0, 0, 0};
    netio::link_counters w2{1, 0, 0, 0, 0, 0};
    CHECK(netio::drops_between(w, w2).rx == 3);
}

TEST_CASE("if_drops: the interface that carries an address, and its counters") {
    netio::ip_address lo;
    lo.v4 = {127, 0, 0, 1};
    auto names = netio::interfaces_of({lo});
    REQUIRE(names.ok());
    CHECK(*names == std::vector<std::string>{"lo"});
    netio::ip_address lo2;  // not assigned, but in lo's 127.0.0.0/8, where a socket binds it
    lo2.v4 = {127, 0, 0, 2};
    CHECK(*netio::interfaces_of({lo2, lo}) == std::vector<std::string>{"lo"});
    CHECK(netio::read_link_counters("lo").has_value());
    CHECK_FALSE(netio::read_link_counters("no-such-if0").has_value());
    // An address no interface has (TEST-NET-3): an error that names it.
    netio::ip_address none;
    none.v4 = {203, 0, 113, 77};
    CHECK_THAT(netio::interfaces_of({lo, none}).err().message, Catch::Contains("no interface has the address 203.0.113.77"));
    // A watch of an interface that is not there counts nothing, and names it.
    const netio::if_drop_watch gone({"no-such-if0"});
    CHECK_FALSE(gone.drops().any());
    CHECK(gone.drops().ifaces == "no-such-if0");
}
