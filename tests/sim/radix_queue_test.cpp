#include <catch2/catch.hpp>

#include <algorithm>
#include <queue>

#include "sim/radix_queue.h"

using namespace mrct::sim;
using key = radix_queue::key_type;

namespace {

struct xorshift {
    std::uint64_t x = 88172645463325252ull;
    std::uint64_t operator()(std::uint64_t n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x % n;
    }
};

key make(std::uint64_t hi, std::uint64_t lo) { return key{hi} << 64 | lo; }

using model_heap = std::priority_queue<key, std::vector<key>, std::greater<>>;

// Takes everything out of both; they must agree key by key.
void drain_in_step(radix_queue& q, model_heap& model) {
    while (!model.empty()) {
        REQUIRE(q.top() == model.top());
        q.pop();
        model.pop();
    }
}

}  // namespace

TEST_CASE("radix_queue: keys come out in order, ties in the low word included") {
    radix_queue q;
    const key ks[] = {make(5, 2), make(5, 1), make(0, 7), make(1ull << 63, 0), make(5, 3), make(0, 0), make(2, ~0ull)};
    for (key k : ks) q.push(k);
    std::vector<key> out;
    while (!q.empty()) {
        out.push_back(q.top());
        q.pop();
    }
    CHECK(out == std::vector<key>{make(0, 0), make(0, 7), make(2, ~0ull), make(5, 1), make(5, 2), make(5, 3),
                                  make(1ull << 63, 0)});
}

TEST_CASE("radix_queue: equal keys are all kept") {
    radix_queue q;
    for (int i = 0; i < 5; ++i) q.push(make(9, 9));
    q.push(make(9, 8));
    CHECK(q.size() == 6);
    CHECK(q.top() == make(9, 8));
    q.pop();
    for (int i = 0; i < 5; ++i) {
        REQUIRE(q.top() == make(9, 9));
        q.pop();
    }
    CHECK(q.empty());
}

// The scheduler's pattern, against std::priority_queue as the model: keys at
// or after the last one taken, many at the same time, some far ahead (timers),
// and now and then a key below the last minimum found but not yet taken (an
// event scheduled from outside the run), which must still come out first.
TEST_CASE("radix_queue: random monotone workload with early keys matches a binary heap") {
    radix_queue q;
    model_heap model;
    xorshift r;
    std::uint64_t now = 0, seq = 0;
    std::size_t early = 0, taken = 0, peeks = 0;
    std::uint64_t topped = 0;  // the latest time top() returned: the queue's floor
    for (int step = 0; step < 200000; ++step) {
        const auto op = r(10);
        if (op < 5 || model.empty()) {
            std::uint64_t t = now;
            const auto d = r(8);
            if (d < 3) t += r(64);                      // soon
            else if (d < 6) t += r(5000);               // a packet time or two
            else if (d < 7) t += 1'000'000 + r(10000);  // a timer
            const key k = make(t, seq++);
            q.push(k);
            model.push(k);
        } else if (op < 6 && !model.empty() && r(2) == 0) {
            // Ask for the next time only: the right answer, and a push below
            // it, at or after every time top() has returned, is not early.
            const auto next = static_cast<std::uint64_t>(model.top() >> 64);
            REQUIRE(q.min_time() == next);
            const std::uint64_t from = std::max(now, topped);
            if (next >= from) {  // (not while early keys are pending below the floor)
                const auto before = q.early_pushes();
                const key k = make(from + r(next - from + 1), seq++);
                q.push(k);
                model.push(k);
                REQUIRE(q.early_pushes() == before);
                ++peeks;
            }
        } else if (op < 6 && !model.empty()) {
            // Peek (the queue finds its minimum), then schedule below it.
            const key top = q.top();
            REQUIRE(top == model.top());
            const auto top_time = static_cast<std::uint64_t>(top >> 64);
            topped = std::max(topped, top_time);
            if (top_time > now) {
                const key k = make(now + r(top_time - now), seq++);
                early += k < top;
                q.push(k);
                model.push(k);
            }
        } else {
            REQUIRE(q.top() == model.top());
            now = static_cast<std::uint64_t>(model.top() >> 64);
            topped = std::max(topped, now);
            q.pop();
            model.pop();
            ++taken;
        }
        REQUIRE(q.size() == model.size());
    }
    drain_in_step(q, model);
    CHECK(q.empty());
    CHECK(early > 1000);  // the early path was exercised
    CHECK(q.early_pushes() >= early);  // other pushes after a peek may be early too
    CHECK(peeks > 1000);
    CHECK(taken > 50000);
}

// Many keys at the same time, low words in any order: the keys at the current
// minimum time are kept sorted apart, and a key pushed at that time with a
// smaller low word than some still there (not the scheduler's habit, whose
// sequence numbers rise) must be put in its place, not appended.
TEST_CASE("radix_queue: crowded times with low words in any order match a binary heap") {
    radix_queue q;
    model_heap model;
    xorshift r;
    std::uint64_t now = 0;
    std::size_t same_time_pushes = 0;
    for (int step = 0; step < 100000; ++step) {
        if (r(3) != 0 || model.empty()) {
            const std::uint64_t t = now + r(4);  // four times at most: crowded
            const key k = make(t, r(1000));
            same_time_pushes += t == now && !model.empty() && static_cast<std::uint64_t>(model.top() >> 64) == now;
            q.push(k);
            model.push(k);
        } else {
            REQUIRE(q.top() == model.top());
            now = static_cast<std::uint64_t>(model.top() >> 64);
            q.pop();
            model.pop();
        }
        REQUIRE(q.size() == model.size());
    }
    drain_in_step(q, model);
    CHECK(same_time_pushes > 1000);
}

// min_time() answers without moving the last minimum time, and keeps its
// answer only while no key lands in its bucket or a lower one.
TEST_CASE("radix_queue: min_time follows pushes below its last answer") {
    radix_queue q;
    q.push(make(0, 0));
    q.pop();  // the last minimum time is 0
    q.push(make(1000, 1));
    q.push(make(1500, 2));
    CHECK(q.min_time() == 1000);
    q.push(make(1200, 3));  // the same bucket, not the minimum
    CHECK(q.min_time() == 1000);
    q.push(make(700, 4));  // the same bucket (bit 9 differs from 0), a new minimum
    CHECK(q.min_time() == 700);
    q.push(make(3, 5));  // a lower bucket
    CHECK(q.min_time() == 3);
    q.push(make(5000, 6));  // a higher bucket: the answer stands
    CHECK(q.min_time() == 3);
    CHECK(q.early_pushes() == 0);
    std::vector<std::uint64_t> times;
    while (!q.empty()) {
        const auto t = q.min_time();
        REQUIRE(static_cast<std::uint64_t>(q.top() >> 64) == t);
        times.push_back(t);
        q.pop();
    }
    CHECK(times == std::vector<std::uint64_t>{3, 700, 1000, 1200, 1500, 5000});
}
