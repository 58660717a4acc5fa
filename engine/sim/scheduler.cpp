#include "sim/scheduler.h"

#include <algorithm>
#include <cassert>

namespace mrct::sim {

scheduler::scheduler() {
    heap_.reserve(1024);
    slots_.reserve(1024);
}

event_id scheduler::at(nanos t, callback cb) {
    if (t < now_) t = now_;
    std::uint32_t slot;
    if (!free_.empty()) {
        slot = free_.back();
        free_.pop_back();
    } else {
        slot = static_cast<std::uint32_t>(slots_.size());
        slots_.emplace_back();
    }
    slot_data& s = slots_[slot];
    s.cb = std::move(cb);
    s.live = true;
    ++live_;
    heap_.push_back({t, seq_++, slot, s.generation});
    std::push_heap(heap_.begin(), heap_.end(), later);
    return {slot, s.generation};
}

bool scheduler::pending(event_id id) const {
    return id.slot < slots_.size() && slots_[id.slot].live && slots_[id.slot].generation == id.generation;
}

bool scheduler::cancel(event_id id) {
    if (!pending(id)) return false;
    slot_data& s = slots_[id.slot];
    s.cb.reset();
    s.live = false;
    ++s.generation;  // the heap entry is now stale and skipped when it surfaces
    free_.push_back(id.slot);
    --live_;
    return true;
}

void scheduler::drop_dead_top() {
    while (!heap_.empty()) {
        const entry& top = heap_.front();
        const slot_data& s = slots_[top.slot];
        if (s.live && s.generation == top.generation) return;
        std::pop_heap(heap_.begin(), heap_.end(), later);
        heap_.pop_back();
    }
}

nanos scheduler::next_time() {
    drop_dead_top();
    return heap_.empty() ? core::k_never : heap_.front().time;
}

void scheduler::advance_to(nanos t) {
    assert(t >= now_);
    if (t > now_) now_ = t;
}

bool scheduler::run_one(nanos limit) {
    drop_dead_top();
    if (heap_.empty() || heap_.front().time > limit) return false;
    entry e = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    slot_data& s = slots_[e.slot];
    callback cb = std::move(s.cb);
    s.live = false;
    ++s.generation;
    free_.push_back(e.slot);
    --live_;
    if (e.time > now_) now_ = e.time;
    ++events_run_;
    cb();
    return true;
}

}  // namespace mrct::sim
