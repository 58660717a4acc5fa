// Decisions the spec model leaves open, each one edit away from change.
// docs/decisions.md explains every entry (D-numbers) and what it affects.
#pragma once

namespace mrct::wire::policy {

// D1: BTH TVer other than 0 is dropped (bad_transport_version), as InfiniBand does.
inline constexpr bool k_drop_nonzero_tver = true;
// D2: the Ver nibble of ACKH, NAKH, RNRH and CTRLH is checked like MRH's (must be 1).
inline constexpr bool k_check_ver_on_all_mr_headers = true;
// D3: what follows the op headers (payload or TLVs) plus PadCnt must be a
// multiple of 4 bytes; otherwise the frame is a structural drop (misaligned).
inline constexpr bool k_require_4byte_alignment = true;
// D4: IPv4 header checksums are verified on receipt (bad_checksum).
inline constexpr bool k_verify_ipv4_checksum = true;
// D5: UDP checksum sent as 0 over IPv4 (RoCEv2 practice) and computed over
// IPv6 (RFC 8200 §8.1: kernels drop IPv6 UDP with checksum 0). Never verified
// on receipt: the ICRC covers integrity.
inline constexpr bool k_udp_checksum_ipv6 = true;

}  // namespace mrct::wire::policy
