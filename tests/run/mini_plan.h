// A small plan the runner's and the DUT adapters' tests share: a loss the
// DUT must repair (MR-SACK-3), an RNR it must resume from (MR-RNR-4), and a
// case needing a capability no DUT has (skipped).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "plan/plan.h"

namespace mrct::test {

// A plan written from `text` as `name` in a folder of the tests' own, then
// loaded (the caller checks that it loaded).
inline core::result<plan::suite> load_plan_text(const std::string& folder, const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / folder;
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return plan::load(path);
}

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
