// Fuzz target for the wire decoder.
//
// Properties checked on every input, beyond "no crash, no sanitizer report":
// a frame the decoder accepts is rebuilt byte for byte by build(to_spec(frame))
// (UDP and IPv4 checksums carried over: the decoder does not verify the former,
// and the latter has two valid encodings; the ICRC too when it was not
// verified), and the rebuilt frame decodes again.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "wire/build.h"
#include "wire/frame.h"

using namespace mrct;

namespace {
void check_round_trip(core::bytes_view in, const wire::decode_result& d, bool ethernet,
                      const wire::decode_options& opt) {
    if (!d.ok()) return;
    auto spec = wire::to_spec(d.f);
    // An ICRC the decoder did not verify may be wrong; a verified one must be
    // recomputed identically by the builder, so it is not carried over.
    if (!d.f.icrc_checked) spec.ov.icrc = d.f.icrc;
    spec.ov.udp_checksum = d.f.udp.checksum;
    if (d.f.ip_version() == 4) spec.ov.ipv4_checksum = d.f.ipv4.checksum;
    auto out = wire::build(spec);
    if (out.size() != in.size() || std::memcmp(out.data(), in.data(), in.size()) != 0) std::abort();
    auto again = ethernet ? wire::decode_ethernet(out, opt) : wire::decode_ip(out, opt);
    if (!again.ok()) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    core::bytes_view in(data, size);
    // With and without ICRC verification, so that inputs with a wrong ICRC
    // still reach the deeper layers; and reading described payloads
    // (symbolic_payload), where a short IPv4 packet may be a data frame whose
    // payload was left out.
    for (bool verify : {true, false}) {
        for (bool symbolic : {false, true}) {
            const wire::decode_options opt{.verify_icrc = verify, .symbolic_payload = symbolic};
            check_round_trip(in, wire::decode_ethernet(in, opt), true, opt);
            check_round_trip(in, wire::decode_ip(in, opt), false, opt);
        }
    }
    return 0;
}
