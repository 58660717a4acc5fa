// The one event scheduler (STYLE habit 4).
//
// Events are ordered by (time, sequence): two events at the same time run in
// the order they were scheduled, so a run replays exactly. The scheduler does
// not read any clock: a driver moves its time forward (virtual_driver jumps to
// the next event; realtime_driver waits for the wall clock to reach it).
//
// Re-arming is lazy. Transport timers (RTO, ACK delay) are pushed back on
// almost every packet; moving a pending event later only records its new key
// (time, and a sequence number taken exactly as a new event would take it),
// and the queue entry is re-filed when it surfaces. The order in which events
// run is therefore identical to cancelling and scheduling again, and a re-file
// is not an event: it runs nothing and is not counted in events_run().
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "sim/inplace_function.h"
#include "sim/radix_queue.h"

namespace mrct::sim {

using core::nanos;
using callback = inplace_callback<48>;

// Names one scheduled event; stale ids (already run or cancelled) are harmless.
struct event_id {
    std::uint32_t slot = ~0u;
    std::uint32_t generation = 0;
    bool valid() const { return slot != ~0u; }
};

class scheduler final : public core::clock_source {
public:
    scheduler();
    nanos now() const override { return now_; }

    event_id at(nanos t, callback cb);  // t < now() runs at now() (never in the past)
    event_id after(nanos d, callback cb) { return at(now_ + d, std::move(cb)); }
    // Moves a pending event to time t with a new callback, ordered as if it
    // had been cancelled and scheduled again now. Returns a new id (the old
    // one may or may not stay valid); a stale `id` schedules a new event.
    event_id reschedule(event_id id, nanos t, callback cb);
    bool cancel(event_id id);            // true if it was pending
    bool pending(event_id id) const;

    // The time of the next live event, or k_never.
    nanos next_time();
    // Advances the time to t (>= now) without running anything; drivers only.
    void advance_to(nanos t);
    // Runs the next live event if its time is <= limit; returns whether one ran.
    bool run_one(nanos limit = core::k_never);

    std::uint64_t events_run() const { return events_run_; }
    std::size_t size() const { return live_; }
    // Entries filed below the queue's floor so far (radix_queue::early_pushes; tests).
    std::uint64_t queue_early_pushes() const { return queue_.early_pushes(); }
    // Allocations the queue made so far (radix_queue::growths; tests).
    std::uint64_t queue_growths() const { return queue_.growths(); }

private:
    // A queue key: the time in the high 64 bits, then the sequence number,
    // then the slot. Sequence numbers are unique, so ordering by key is
    // ordering by (time, sequence).
    static constexpr unsigned k_slot_bits = 24;  // 16 M events pending at once
    static constexpr std::uint64_t k_slot_mask = (std::uint64_t{1} << k_slot_bits) - 1;
    static radix_queue::key_type key_of(nanos t, std::uint64_t seq, std::uint32_t slot) {
        return radix_queue::key_type{static_cast<std::uint64_t>(t.count())} << 64 | (seq << k_slot_bits | slot);
    }
    struct slot_data {
        callback cb;
        nanos queued_time{0};          // time of this slot's entry in the queue
        nanos want_time{0};            // key it should run at (>= the queued one)
        std::uint64_t queued_seq = 0;  // seq of that entry; older entries naming the slot are stale
        std::uint64_t want_seq = 0;    // the entry is re-filed when its seq differs
        std::uint32_t generation = 0;
        bool live = false;
    };
    void file(std::uint32_t slot, nanos t, std::uint64_t seq);
    // Drops dead entries and re-files moved ones until the top is a live
    // event due as keyed; returns whether there is one by `limit`.
    bool settle_top(nanos limit);

    nanos now_{0};
    std::uint64_t seq_ = 0;
    std::uint64_t events_run_ = 0;
    std::size_t live_ = 0;
    radix_queue queue_;
    std::vector<slot_data> slots_;
    std::vector<std::uint32_t> free_;
};

// A restartable one-shot timer bound to a scheduler (RTO, ACK delay, RNR pause).
class timer {
public:
    explicit timer(scheduler& s) : s_(&s) {}
    ~timer() { cancel(); }
    timer(const timer&) = delete;
    timer& operator=(const timer&) = delete;

    void arm_at(nanos t, callback cb) {
        deadline_ = t;
        id_ = s_->reschedule(id_, t, std::move(cb));
    }
    void arm_in(nanos d, callback cb) { arm_at(s_->now() + d, std::move(cb)); }
    void cancel() {
        if (id_.valid()) s_->cancel(id_);
        id_ = {};
    }
    bool armed() const { return id_.valid() && s_->pending(id_); }
    nanos deadline() const { return deadline_; }

private:
    scheduler* s_;
    event_id id_{};
    nanos deadline_{0};
};

}  // namespace mrct::sim
