#include "trace/trace.h"

#include <algorithm>

#include "core/pages.h"

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

void trace::prepare(std::size_t expect) {
    store.prepare(expect);
    const std::size_t ready = std::min(expect / k_bytes_per_record + 1024, k_max_ready_records);
    frames.reserve(std::max(k_min_records, frames.size() + ready));  // no-op when already that large
    // The records not built yet: raw storage of the vector's, each page
    // written once, a byte back unchanged.
    auto* at = reinterpret_cast<std::uint8_t*>(frames.data() + frames.size());
    const std::size_t n = std::min(ready, frames.capacity() - frames.size()) * sizeof(record);
    core::make_resident(at, n);
    core::touch_pages(at, n);
}

core::bytes_view frame_store::keep(core::bytes_view b) {
    if (b.empty()) return {};
    if (cap_ - used_ < b.size()) open_block(std::max(k_block, b.size()));
    std::uint8_t* at = blocks_.back().get() + used_;
    std::copy(b.begin(), b.end(), at);
    used_ += b.size();
    return {at, b.size()};
}

void frame_store::prepare(std::size_t expect) {
    resident_ = true;
    const std::size_t want = std::min(std::max(expect, k_block), k_max_ready);
    std::size_t room = cap_ - used_ >= k_block / 2 ? cap_ - used_ : 0;
    room += ready_.size() * k_block;
    while (room < want) {
        // Not zeroed: every byte handed out is written first. A refused
        // make_resident (no memory for them now) leaves the pages to the touch.
        std::shared_ptr<std::uint8_t[]> b(new std::uint8_t[k_block]);
        core::make_resident(b.get(), k_block);
        core::touch_pages(b.get(), k_block);
        ready_.push_back(std::move(b));
        room += k_block;
    }
    if (cap_ - used_ < k_block / 2) open_block(k_block);
}

void frame_store::open_block(std::size_t n) {
    cap_ = n;
    used_ = 0;
    if (n == k_block && !ready_.empty()) {
        blocks_.push_back(std::move(ready_.back()));
        ready_.pop_back();
        return;
    }
    // Not zeroed: every byte handed out is written first.
    blocks_.emplace_back(new std::uint8_t[cap_]);
    // Refused (no memory for them now): the pages come in at first touch,
    // as without.
    if (resident_) core::make_resident(blocks_.back().get(), cap_);
}

record& trace::add(nanos t, dir d, core::bytes_view bytes) {
    record& r = frames.emplace_back();
    r.index = frames.size() - 1;
    r.t = t;
    r.d = d;
    r.bytes = store.keep(bytes);
    r.dec = wire::decode_ethernet(r.bytes);
    return r;
}

}  // namespace mrct::trace
