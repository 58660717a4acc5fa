// The one event scheduler (STYLE habit 4).
//
// Events are ordered by (time, sequence): two events at the same time run in
// the order they were scheduled, so a run replays exactly. The scheduler does
// not read any clock: a driver moves its time forward (virtual_driver jumps to
// the next event; realtime_driver waits for the wall clock to reach it).
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "sim/inplace_function.h"

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

private:
    struct entry {
        nanos time;
        std::uint64_t seq;
        std::uint32_t slot;
        std::uint32_t generation;
    };
    struct slot_data {
        callback cb;
        std::uint32_t generation = 0;
        bool live = false;
    };
    static bool later(const entry& a, const entry& b) {
        return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
    void drop_dead_top();

    nanos now_{0};
    std::uint64_t seq_ = 0;
    std::uint64_t events_run_ = 0;
    std::size_t live_ = 0;
    std::vector<entry> heap_;
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
        cancel();
        deadline_ = t;
        id_ = s_->at(t, std::move(cb));
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
