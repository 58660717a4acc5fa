// Matching recorded frames on decoded fields. Keys: opcode (WRITE, WRITE_IMM,
// SEND, SEND_IMM, DATA = any data, ACK, NAK, RNR, CTRL or a number), path
// (PathID), ppsn (BTH.PSN, or NakPPSN/RNR PPSN), tag, stream, seq, offset,
// attempt, retx, som, eom, rnr_resend, ece (true/false), ctrl (CONNECT ...
// PATH_RESET_ACK), nak_code, version_major and version_minor (a CTRL's
// VERSION TLV). Every given key must match.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "trace/trace.h"

namespace mrct::trace {

using field_map = std::map<std::string, std::string>;

bool matches(const field_map& match, const record& r);
core::status check_match(const field_map& match);
const std::vector<std::string>& match_keys();

}  // namespace mrct::trace
