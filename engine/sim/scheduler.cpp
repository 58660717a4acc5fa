#include "sim/scheduler.h"

#include <cassert>
#include <stdexcept>

namespace mrct::sim {

scheduler::scheduler() { slots_.reserve(1024); }

void scheduler::file(std::uint32_t slot, nanos t, std::uint64_t seq) {
    // 40 bits of sequence number: about 30 hours of events and re-arms at
    // 10 M/s. Past that the keys would no longer order; stop instead.
    if (seq >> (64 - k_slot_bits)) throw std::length_error("scheduler: sequence numbers exhausted (2^40)");
    slot_data& s = slots_[slot];
    s.queued_time = t;
    s.queued_seq = seq;
    queue_.push(key_of(t, seq, slot));
}

event_id scheduler::at(nanos t, callback cb) {
    if (t < now_) t = now_;
    std::uint32_t slot;
    if (!free_.empty()) {
        slot = free_.back();
        free_.pop_back();
    } else {
        slot = static_cast<std::uint32_t>(slots_.size());
        if (slot > k_slot_mask) throw std::length_error("scheduler: more than 16 M events pending");
        slots_.emplace_back();
    }
    slot_data& s = slots_[slot];
    const std::uint64_t seq = seq_++;
    s.cb = std::move(cb);
    s.live = true;
    s.want_time = t;
    s.want_seq = seq;
    ++live_;
    file(slot, t, seq);
    return {slot, s.generation};
}

event_id scheduler::reschedule(event_id id, nanos t, callback cb) {
    if (t < now_) t = now_;
    if (!pending(id)) return at(t, std::move(cb));
    slot_data& s = slots_[id.slot];
    s.cb = std::move(cb);
    s.want_time = t;
    s.want_seq = seq_++;  // the key at() would give it now
    // Earlier than its queue entry: file it again now (the old entry no
    // longer matches the slot and is dropped when it surfaces). Later or
    // equal: the old entry surfaces first and is re-filed then.
    if (t < s.queued_time) file(id.slot, t, s.want_seq);
    return id;
}

bool scheduler::pending(event_id id) const {
    return id.slot < slots_.size() && slots_[id.slot].live && slots_[id.slot].generation == id.generation;
}

bool scheduler::cancel(event_id id) {
    if (!pending(id)) return false;
    slot_data& s = slots_[id.slot];
    s.cb.reset();
    s.live = false;
    ++s.generation;  // the queue entry is now stale and skipped when it surfaces
    free_.push_back(id.slot);
    --live_;
    return true;
}

bool scheduler::settle_top(nanos limit) {
    while (!queue_.empty()) {
        // Nothing due by the limit: stop before top() makes the queue's
        // last minimum time the later one (radix_queue::min_time()).
        if (static_cast<std::int64_t>(queue_.min_time()) > limit.count()) return false;
        const auto low = static_cast<std::uint64_t>(queue_.top());
        const auto slot = static_cast<std::uint32_t>(low & k_slot_mask);
        const std::uint64_t seq = low >> k_slot_bits;
        slot_data& s = slots_[slot];
        if (!s.live || s.queued_seq != seq) {  // cancelled, or its slot was reused since
            queue_.pop();
            continue;
        }
        if (s.want_seq == seq) return true;
        queue_.pop();  // moved later: file it under its new key
        file(slot, s.want_time, s.want_seq);
    }
    return false;
}

nanos scheduler::next_time() {
    return settle_top(core::k_never) ? nanos{static_cast<std::int64_t>(queue_.top() >> 64)} : core::k_never;
}

void scheduler::advance_to(nanos t) {
    assert(t >= now_);
    if (t > now_) now_ = t;
}

bool scheduler::run_one(nanos limit) {
    if (!settle_top(limit)) return false;
    const radix_queue::key_type top = queue_.top();
    const nanos t{static_cast<std::int64_t>(top >> 64)};
    queue_.pop();
    const auto slot = static_cast<std::uint32_t>(static_cast<std::uint64_t>(top) & k_slot_mask);
    slot_data& s = slots_[slot];
    callback cb = std::move(s.cb);
    s.live = false;
    ++s.generation;
    free_.push_back(slot);
    --live_;
    if (t > now_) now_ = t;
    ++events_run_;
    cb();
    return true;
}

}  // namespace mrct::sim
