// The scriptable peer's crafted packets: a data packet that looks like the
// peer's own (its connection ID, path port, epoch and next PPSN), then broken
// field by field on request. The plan's `inject` action lands here.
#pragma once

#include <map>
#include <string>

#include "core/bytes.h"
#include "core/result.h"
#include "endpoint/endpoint.h"
#include "wire/frame.h"

namespace mrct::peer {

// Fields (all optional; docs/plan-format.md, action `inject`):
//   template  write | send                (default write)
//   path      PathID to use               (default 0)
//   ppsn      next | next+N | N            (default next+64: ahead, in window)
//   size      payload bytes               (default 256)
//   va_offset offset into the DUT region  (default 0)
//   rkey      R_Key                       (default the DUT region's)
//   tag, stream, seq, recv_idx, msg_len, msg_offset, attempt, flags
//   icrc      bad                          (a wrong ICRC)
//   tver, mrh_ver, opcode, dest_qp, path_id, pad_cnt, truncate  (raw overrides)
// template connect: a CONNECT to the DUT's listener with version_major,
//   version_minor, num_paths, mtu, conn_id (a new connection attempt).
// template ack: a forged ACK for the DUT's data on `path`: cum (cum, cum+N,
//   cum-N or a number; default the peer's own CumAck), sack (offsets from
//   CumAck whose bits are set, e.g. "1,2,5"), trig, ece (true/false), grant,
//   rnr_count, ce_count.
// template rnr: an RNR for the DUT's SEND that triggered the step (`on:`):
//   its path, PPSN, stream, tag, StreamSeq, Attempt and epoch; `code` (TimerCode,
//   default 14), `rnr_seq` (default the peer's next).
// template nak: a NAK with `code` for the DUT's data packet that triggered
//   the step: its path, epoch, PPSN, stream, tag and StreamSeq.
// template rnr_query: an RNR_QUERY CTRL to the DUT's connection from `path`'s
//   port (default 0): the DUT answers with the RNR of every rejection it keeps,
//   then RNR_SYNC (§4).
// template rnr's TimerCode when `code` is not given (1.28 ms).
inline constexpr unsigned k_rnr_code_default = 14;

struct craft_target {
    std::uint64_t dut_va = 0;  // the DUT region WRITEs aim at
    std::uint32_t dut_rkey = 0;
    endpoint::address dut;
};

core::result<core::byte_buffer> craft(const endpoint::endpoint& peer, std::uint32_t conn,
                                      const std::map<std::string, std::string>& fields, const craft_target& target,
                                      const wire::frame* trigger = nullptr);

// The names `craft` accepts (validation).
const std::vector<std::string>& craft_fields();

}  // namespace mrct::peer
