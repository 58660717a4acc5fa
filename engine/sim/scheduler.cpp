#include "sim/scheduler.h"

#include <cassert>

namespace mrct::sim {

scheduler::scheduler() {
    heap_.reserve(1024);
    slots_.reserve(1024);
}

void scheduler::heap_push(const entry& e) {
    std::size_t i = heap_.size();
    heap_.push_back(e);
    entry* h = heap_.data();
    while (i > 0) {
        const std::size_t parent = (i - 1) / 4;
        if (!before(e, h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

void scheduler::heap_pop() {
    const entry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    entry* h = heap_.data();
    std::size_t i = 0;
    for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n) break;
        std::size_t best = first;
        const std::size_t end = first + 4 < n ? first + 4 : n;
        for (std::size_t c = first + 1; c < end; ++c)
            if (before(h[c], h[best])) best = c;
        if (!before(h[best], last)) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = last;
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
    const std::uint64_t seq = seq_++;
    s.cb = std::move(cb);
    s.live = true;
    s.queued_time = s.want_time = t;
    s.want_seq = seq;
    ++live_;
    heap_push({t, seq, slot, s.generation});
    return {slot, s.generation};
}

event_id scheduler::reschedule(event_id id, nanos t, callback cb) {
    if (t < now_) t = now_;
    if (!pending(id)) return at(t, std::move(cb));
    slot_data& s = slots_[id.slot];
    if (t < s.queued_time) {  // earlier than its queue entry: file it again
        cancel(id);
        return at(t, std::move(cb));
    }
    // Later (or equal): the queue entry surfaces first and is re-filed then
    // under this key, which is the key at() would have given it now.
    s.cb = std::move(cb);
    s.want_time = t;
    s.want_seq = seq_++;
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

void scheduler::settle_top() {
    while (!heap_.empty()) {
        const entry top = heap_.front();
        slot_data& s = slots_[top.slot];
        if (!s.live || s.generation != top.generation) {
            heap_pop();
            continue;
        }
        if (s.want_seq == top.seq) return;
        heap_pop();
        s.queued_time = s.want_time;
        heap_push({s.want_time, s.want_seq, top.slot, top.generation});
    }
}

nanos scheduler::next_time() {
    settle_top();
    return heap_.empty() ? core::k_never : heap_.front().time;
}

void scheduler::advance_to(nanos t) {
    assert(t >= now_);
    if (t > now_) now_ = t;
}

bool scheduler::run_one(nanos limit) {
    settle_top();
    if (heap_.empty() || heap_.front().time > limit) return false;
    const entry e = heap_.front();
    heap_pop();
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
