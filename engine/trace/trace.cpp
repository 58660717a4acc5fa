#include "trace/trace.h"

namespace mrct::trace {

std::string_view dir_name(dir d) { return d == dir::from_dut ? "from_dut" : "to_dut"; }

int record::path_id() const {
    if (!ok()) return -1;
    const auto& f = dec.f;
    if (f.has(wire::has_mrh)) return f.mrh.path_id;
    if (f.has(wire::has_ackh)) return f.ackh.path_id;
    if (f.has(wire::has_nakh)) return f.nakh.path_id;
    if (f.has(wire::has_rnrh)) return f.rnrh.path_id;
    return -1;
}

record& trace::add(nanos t, dir d, core::bytes_view bytes) {
    record r;
    r.index = frames.size();
    r.t = t;
    r.d = d;
    r.bytes.assign(bytes.begin(), bytes.end());
    frames.push_back(std::move(r));
    auto& back = frames.back();
    // Decoded after the move: the views point into the record's own buffer.
    back.dec = wire::decode_ethernet(back.bytes);
    return back;
}

}  // namespace mrct::trace
