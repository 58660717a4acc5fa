// A conforming MetaRoCE WRITE frame spec for the netio tests.
#pragma once

#include "wire/build.h"

namespace mrct::test {

inline wire::frame_spec write_spec(wire::ipv4_addr src = {10, 1, 0, 1}, wire::ipv4_addr dst = {10, 1, 0, 2}) {
    wire::frame_spec s;
    s.ipv4.src = src;
    s.ipv4.dst = dst;
    s.ipv4.df = true;
    s.ipv4.ecn = 2;
    s.udp.sport = 0xC123;
    s.udp.dport = 4791;
    s.bth.opcode = 0xC0;
    s.bth.dest_qp = 77;
    s.bth.psn = 1000;
    s.mrh = wire::mrh{};
    s.reth = wire::reth{0x1000, 5, 64};
    s.payload.assign(64, 0x5A);
    return s;
}

}  // namespace mrct::test
