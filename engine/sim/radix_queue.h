// A monotone priority queue on 128-bit keys (a radix heap on the high word).
//
// The scheduler's queue. A discrete-event simulation takes events out in
// rising order and almost never schedules one before the last one taken out;
// a radix heap uses that. A key's high word is its time: each key sits in the
// bucket of the highest bit in which its time differs from the last minimum
// time found, so a push is one append, and finding the next minimum scans one
// bucket and spreads it over lower buckets (each key moves down a few times
// in its life, always forward in memory). A binary or 4-ary heap instead
// walks a chain of dependent loads on every push and pop, and that chain was
// most of the scheduler's cost.
//
// Keys whose time equals the last minimum time are kept apart, sorted on the
// whole key and taken from the front: in a symmetric run (64 senders doing the
// same thing) dozens of events share a nanosecond, and spreading them over
// buckets by their low words (sequence numbers) was three quarters of all
// moves. A key pushed at that time is almost always the largest yet (sequence
// numbers rise), so it is appended.
//
// A key whose time is before the last minimum time (an event scheduled from
// outside the run, between events, earlier than the next one already found)
// goes to another small heap that is served first: every key in it is smaller
// than every key in the buckets. min_time() looks at the next time without
// making it the last minimum time, so a caller that only asks whether
// anything is due by a limit (the scheduler's run_until) does not move that
// time past the limit; the events it then schedules from outside, at the
// limit, are not early. (Before min_time(), every run_until step that ended
// before the next event moved it there, and a quarter of the incast's keys
// went through the small heap: the first external event's follow-ups were
// early too, and theirs, until the run caught up with that time.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

namespace mrct::sim {

// std::allocator that adds one to a counter at each allocation: the queue
// counts its own allocations where they happen, not by a test on every push.
template <class T>
struct counting_allocator {
    using value_type = T;
    using propagate_on_container_move_assignment = std::true_type;
    std::uint64_t* count = nullptr;

    counting_allocator() = default;
    explicit counting_allocator(std::uint64_t* c) : count(c) {}
    template <class U>
    counting_allocator(const counting_allocator<U>& o) : count(o.count) {}
    T* allocate(std::size_t n) {
        if (count) ++*count;
        return std::allocator<T>{}.allocate(n);
    }
    void deallocate(T* p, std::size_t n) { std::allocator<T>{}.deallocate(p, n); }
    template <class U>
    bool operator==(const counting_allocator<U>&) const { return true; }  // all free with std::allocator
};

class radix_queue {
public:
    __extension__ typedef unsigned __int128 key_type;  // GCC/Clang; __extension__ quiets -Wpedantic

    radix_queue() {
        for (auto& b : buckets_) b = keys(alloc());
        now_ = keys(alloc());
        early_ = keys(alloc());
    }
    // The vectors' allocators point at growths_.
    radix_queue(const radix_queue&) = delete;
    radix_queue& operator=(const radix_queue&) = delete;

    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }

    void push(key_type k) {
        ++size_;
        const std::uint64_t t = time_of(k);
        if (t < last_) {
            heap_push(early_, k);
            ++early_pushes_;
            return;
        }
        put(k, t);
    }
    // The smallest key; the queue must not be empty.
    key_type top() {
        if (!early_.empty()) return early_.front();
        settle();
        return now_[head_];
    }
    // The smallest key's time, leaving the last minimum time where it is
    // (top() moves it to that time); the queue must not be empty.
    std::uint64_t min_time() {
        if (!early_.empty()) return time_of(early_.front());
        if (head_ < now_.size()) return last_;
        if (const unsigned b = lowest_bucket(); b != peek_bucket_) {
            peek_bucket_ = b;
            peek_min_ = bucket_min(buckets_[b]);
        }
        return peek_min_;
    }
    // Keys that went to the small heap of early keys so far (tests, diagnostics).
    std::uint64_t early_pushes() const { return early_pushes_; }
    // Allocations the queue's vectors made so far: a bucket holding more
    // keys than it ever held. A radix heap's buckets follow the clock's bits,
    // so a long run still meets a new high-water mark now and then (tests:
    // the fabric allocates nothing else).
    std::uint64_t growths() const { return growths_; }
    void pop() {
        --size_;
        if (!early_.empty()) {
            heap_pop(early_);
            return;
        }
        settle();
        if (++head_ == now_.size()) {
            now_.clear();
            head_ = 0;
        }
    }

private:
    static constexpr unsigned k_buckets = 65;  // 1..64: the highest differing time bit is i - 1 (0 is now_)
    using keys = std::vector<key_type, counting_allocator<key_type>>;
    counting_allocator<key_type> alloc() { return counting_allocator<key_type>(&growths_); }

    static std::uint64_t time_of(key_type k) { return static_cast<std::uint64_t>(k >> 64); }
    static void heap_push(keys& h, key_type k) {
        h.push_back(k);
        std::push_heap(h.begin(), h.end(), std::greater<>{});
    }
    static void heap_pop(keys& h) {
        std::pop_heap(h.begin(), h.end(), std::greater<>{});
        h.pop_back();
    }
    void put(key_type k, std::uint64_t t) {
        const std::uint64_t d = t ^ last_;
        if (!d) {
            // Almost always the largest yet (sequence numbers rise): an append.
            if (now_.size() == head_ || k >= now_.back()) now_.push_back(k);
            else now_.insert(std::upper_bound(now_.begin() + static_cast<std::ptrdiff_t>(head_), now_.end(), k), k);
            return;
        }
        to_bucket(k, d);
    }
    // Files a key whose time differs from last_ (d = time ^ last_, not 0).
    void to_bucket(key_type k, std::uint64_t d) {
        const unsigned b = 64 - static_cast<unsigned>(__builtin_clzll(d));
        buckets_[b].push_back(k);
        mask_[b / 64] |= std::uint64_t{1} << (b % 64);
        if (b <= peek_bucket_) peek_bucket_ = k_no_bucket;  // the minimum min_time() found may have changed
    }
    static std::uint64_t bucket_min(const keys& from) {
        std::uint64_t m = time_of(from.front());
        for (key_type k : from) m = std::min(m, time_of(k));
        return m;
    }
    unsigned lowest_bucket() const {
        for (unsigned w = 0; w < 2; ++w)
            if (mask_[w]) return w * 64 + static_cast<unsigned>(__builtin_ctzll(mask_[w]));
        return k_buckets;
    }
    // Makes now_ hold the keys of the smallest time in the buckets (which are not empty), in order.
    void settle() {
        if (head_ < now_.size()) return;
        const unsigned b = lowest_bucket();
        keys& from = buckets_[b];
        last_ = peek_bucket_ == b ? peek_min_ : bucket_min(from);
        peek_bucket_ = k_no_bucket;
        mask_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
        // Every key lands in now_ or a lower bucket than b, so `from` is not appended to.
        for (key_type k : from) {
            const std::uint64_t d = time_of(k) ^ last_;
            if (d) to_bucket(k, d);
            else now_.push_back(k);  // sorted below, once
        }
        from.clear();
        std::sort(now_.begin(), now_.end());
    }

    std::array<keys, k_buckets> buckets_;  // [0] unused
    std::uint64_t mask_[2] = {0, 0};  // bucket i is not empty
    std::uint64_t last_ = 0;          // the last minimum time found
    keys now_;       // keys at time last_, ascending from head_
    std::size_t head_ = 0;            // now_[head_] is the smallest
    keys early_;     // min-heap of keys before last_
    std::size_t size_ = 0;
    // min_time()'s last answer: the smallest time in bucket peek_bucket_,
    // the lowest bucket then (k_no_bucket: none kept). A push into that
    // bucket or a lower one drops it; settle() uses and drops it.
    static constexpr unsigned k_no_bucket = k_buckets;
    unsigned peek_bucket_ = k_no_bucket;
    std::uint64_t peek_min_ = 0;
    std::uint64_t early_pushes_ = 0;
    std::uint64_t growths_ = 0;
};

}  // namespace mrct::sim
