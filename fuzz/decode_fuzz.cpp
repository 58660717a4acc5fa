// Fuzz target for the wire decoder.
//
// Properties checked on every input, beyond "no crash, no sanitizer report":
// a frame the decoder accepts is rebuilt byte for byte by build(to_spec(frame))
// (UDP and IPv4 checksums carried over: the decoder does not verify the former,
// and the latter has two valid encodings), and the rebuilt frame decodes again.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "wire/build.h"
#include "wire/frame.h"

using namespace mrct;

namespace {
void check_round_trip(core::bytes_view in, const wire::decode_result& d, bool ethernet) {
    if (!d.ok()) return;
    auto spec = wire::to_spec(d.f);
    spec.ov.udp_checksum = d.f.udp.checksum;
    if (d.f.ip_version() == 4) spec.ov.ipv4_checksum = d.f.ipv4.checksum;
    auto out = wire::build(spec);
    if (out.size() != in.size() || std::memcmp(out.data(), in.data(), in.size()) != 0) std::abort();
    auto again = ethernet ? wire::decode_ethernet(out) : wire::decode_ip(out);
    if (!again.ok()) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    core::bytes_view in(data, size);
    // One input byte picks ICRC verification on or off, so that inputs with a
    // wrong ICRC still reach the deeper layers.
    const bool verify = size == 0 || (data[0] & 1);
    check_round_trip(in, wire::decode_ethernet(in, {.verify_icrc = verify}), true);
    check_round_trip(in, wire::decode_ip(in, {.verify_icrc = verify}), false);
    return 0;
}
