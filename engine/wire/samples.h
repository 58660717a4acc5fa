// Known frames (one of every packet type, IPv4/IPv6/802.1Q) and seeded random
// frames. Used by `mrct samples`, the codec tests, the fuzz seed corpus and the
// independent-decoder checks (scapy, tshark).
#pragma once

#include <string>
#include <vector>

#include "core/rng.h"
#include "wire/build.h"

namespace mrct::wire {

struct named_spec {
    std::string name;
    frame_spec spec;
};

// Fixed addresses used by samples: 02:00:00:00:00:01 -> :02, 10.0.0.1 -> 10.0.0.2
// (documentation-only; these frames go to files, never to a network).
frame_spec base_spec(unsigned ip_version = 4);

// A consistent spec for one packet of each kind (opcode and headers agree).
frame_spec data_spec(opcode op, const struct mrh& m, core::byte_buffer payload, unsigned ip_version = 4);
frame_spec ack_spec(const struct ackh& a, std::uint32_t cum_ack, unsigned ip_version = 4);
frame_spec nak_spec(const struct nakh& n, unsigned ip_version = 4);
frame_spec rnr_spec(const struct rnrh& r, unsigned ip_version = 4);
frame_spec ctrl_spec(ctrl_type type, std::vector<tlv_spec> tlvs, unsigned ip_version = 4);

std::vector<named_spec> sample_catalog();

// A random, structurally valid frame of the given opcode: random header fields
// (reserved bits, FECN/BECN, TTL, TOS included), random payload or TLVs.
frame_spec random_spec(core::rng& r, opcode op, unsigned ip_version);

inline constexpr opcode k_all_opcodes[] = {
    opcode::write, opcode::write_imm, opcode::send, opcode::send_imm,
    opcode::ack,   opcode::nak,       opcode::rnr,  opcode::ctrl,
};

}  // namespace mrct::wire
