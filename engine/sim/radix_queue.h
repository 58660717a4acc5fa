// A monotone priority queue on 128-bit keys (a radix heap).
//
// The scheduler's queue. A discrete-event simulation takes events out in
// rising order and almost never schedules one before the last one taken out;
// a radix heap uses that. Each key sits in the bucket of the highest bit in
// which it differs from the last minimum found, so a push is one append, and
// finding the next minimum scans one bucket and spreads it over lower buckets
// (each key moves down a few times in its life, always forward in memory).
// A binary or 4-ary heap instead walks a chain of dependent loads on every
// push and pop, and that chain was most of the scheduler's cost.
//
// A key smaller than the last minimum found (an event scheduled from outside
// the run, between events, earlier than the next one already found) goes to
// a small ordinary heap that is served first: every key in it is smaller than
// every key in the buckets.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace mrct::sim {

class radix_queue {
public:
    __extension__ typedef unsigned __int128 key_type;  // GCC/Clang; __extension__ quiets -Wpedantic

    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }

    void push(key_type k) {
        ++size_;
        if (k < last_) {
            early_.push_back(k);
            std::push_heap(early_.begin(), early_.end(), std::greater<>{});
            return;
        }
        put(k);
    }
    // The smallest key; the queue must not be empty.
    key_type top() {
        if (!early_.empty()) return early_.front();
        settle();
        return buckets_[0].back();
    }
    void pop() {
        --size_;
        if (!early_.empty()) {
            std::pop_heap(early_.begin(), early_.end(), std::greater<>{});
            early_.pop_back();
            return;
        }
        settle();
        buckets_[0].pop_back();
        if (buckets_[0].empty()) mask_[0] &= ~std::uint64_t{1};
    }

private:
    static constexpr unsigned k_buckets = 129;  // 0: equal to last_; i: highest differing bit is i - 1

    static unsigned bucket_of(key_type k, key_type last) {
        const key_type d = k ^ last;
        const auto hi = static_cast<std::uint64_t>(d >> 64);
        const auto lo = static_cast<std::uint64_t>(d);
        if (hi) return 128 - static_cast<unsigned>(__builtin_clzll(hi));
        if (lo) return 64 - static_cast<unsigned>(__builtin_clzll(lo));
        return 0;
    }
    void put(key_type k) {
        const unsigned b = bucket_of(k, last_);
        buckets_[b].push_back(k);
        mask_[b / 64] |= std::uint64_t{1} << (b % 64);
    }
    unsigned lowest_bucket() const {
        for (unsigned w = 0; w < 3; ++w)
            if (mask_[w]) return w * 64 + static_cast<unsigned>(__builtin_ctzll(mask_[w]));
        return k_buckets;
    }
    // Makes bucket 0 hold the smallest key in the buckets (which are not empty).
    void settle() {
        if (!buckets_[0].empty()) return;
        const unsigned b = lowest_bucket();
        std::vector<key_type>& from = buckets_[b];
        last_ = *std::min_element(from.begin(), from.end());
        mask_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
        // Every key lands in a lower bucket than b, so `from` is not appended to.
        for (key_type k : from) put(k);
        from.clear();
    }

    std::array<std::vector<key_type>, k_buckets> buckets_;
    std::uint64_t mask_[3] = {0, 0, 0};  // bucket i is not empty
    key_type last_ = 0;                  // the last minimum found
    std::vector<key_type> early_;        // min-heap of keys below last_
    std::size_t size_ = 0;
};

}  // namespace mrct::sim
