// A small plan the runner's and the DUT adapters' tests share: a loss the
// DUT must repair (MR-SACK-3), an RNR it must resume from (MR-RNR-4), and a
// case needing a capability no DUT has (skipped).
#pragma once

namespace mrct::test {

inline const char* k_plan = R"(suite: {name: T}
cases:
  - id: LOSS-1
    title: one lost packet
    clauses: [MR-SACK-3]
    setup:
      - drop: {match: {opcode: DATA, path: 1}, skip: 5, count: 1}
      - post_write: {side: dut, size: 262144, count: 2}
    expect:
      - fast_retransmit: {}
      - all_complete: {}
      - data_integrity: {}
  - id: RNR-1
    title: rnr
    clauses: [MR-RNR-4]
    peer: {rnr_timer_code: 10}
    setup:
      - post_send: {side: dut, stream: 1, tag: 2, size: 8192}
    steps:
      - {at: 500us, do: [post_recv: {side: peer, tag: 2, size: 8192}]}
    expect:
      - rnr_resume: {}
      - all_complete: {}
  - id: CAP-1
    title: needs an RTL-only capability
    clauses: [MR-HDR-1]
    requires: [rtl_backdoor]
    expect:
      - wire_format: {}
)";

}  // namespace mrct::test
