// mr_rto (dut_adapters/rtl/hdl/mr_rto.sv) under Verilator against the
// reference sender's RTO arithmetic (engine/endpoint/sender.cpp:
// current_rto and the RFC 6298 update), written out again here: every
// estimate, RTO and deadline bit for bit, over random command sequences;
// and each planted define caught by what it breaks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "Vmr_rto.h"
#include "Vmr_rto_karn.h"
#include "Vmr_rto_no_backoff.h"
#include "Vmr_rto_shared.h"
#include "rtl/clocked.h"
#include "verilated.h"

using namespace mrct;

namespace {

constexpr std::int64_t k_initial = 1'000'000, k_min = 100'000, k_max = 100'000'000;
enum op : std::uint8_t { sample = 1, arm = 2, cancel = 3, acked = 4, reset = 5, expire = 6 };

struct model_path {
    bool has_rtt = false, armed = false;
    std::int64_t srtt = 0, rttvar = 0, deadline = 0;
    unsigned backoff = 0;
};

// sender.cpp's current_rto.
std::int64_t model_rto(const model_path& p) {
    std::int64_t base = p.has_rtt ? std::clamp(p.srtt + 4 * p.rttvar, k_min, k_max) : k_initial;
    for (unsigned i = 0; i < p.backoff && base < k_max; ++i) base *= 2;
    return std::min(base, k_max);
}

// sender.cpp's sample, Karn's rule included.
void model_sample(model_path& p, std::int64_t now, std::int64_t sent, bool retransmitted) {
    if (retransmitted) return;
    const std::int64_t r = std::max(now, sent) - sent;
    if (!p.has_rtt) {
        p.srtt = r;
        p.rttvar = r / 2;
        p.has_rtt = true;
    } else {
        p.rttvar = (3 * p.rttvar + (p.srtt > r ? p.srtt - r : r - p.srtt)) / 4;
        p.srtt = (7 * p.srtt + r) / 8;
    }
}

template <class V>
struct unit : test::clocked<V> {
    using test::clocked<V>::m;
    unit() : test::clocked<V>([](V& v) {
        v.cfg_rto_initial = k_initial;
        v.cfg_rto_min = k_min;
        v.cfg_rto_max = k_max;
    }) {}
    // FIRST: the packet's first transmission, when it differs from SENT (its last).
    void cmd(op o, unsigned path, std::int64_t sent = 0, bool retx = false, std::int64_t first = -1) {
        m->cmd_op = o;
        m->cmd_path = path;
        m->cmd_sent_first = static_cast<std::uint64_t>(first < 0 ? sent : first);
        m->cmd_sent_last = static_cast<std::uint64_t>(sent);
        m->cmd_retransmitted = retx;
        this->pulse();
    }
    std::int64_t rto(unsigned path) {
        m->rd_path = path;
        m->eval();
        return static_cast<std::int64_t>(m->rd_rto);
    }
};

constexpr std::uint64_t k_never = (std::uint64_t{1} << 48) - 1;

}  // namespace

TEST_CASE("mr_rto: estimates, RTOs, deadlines and expiries equal the reference sender's, bit for bit") {
    unit<Vmr_rto> u;
    constexpr unsigned k_paths = 8;
    std::vector<model_path> mp(k_paths);
    std::mt19937_64 rng(20261203);
    std::int64_t t = 0;
    std::size_t expiries = 0, samples = 0;
    for (int step = 0; step < 20000; ++step) {
        t += static_cast<std::int64_t>(rng() % 3'000'000);  // up to 3 ms on
        u.at(t);
        // Expiries due now, lowest path first, as the shell takes them.
        while (u.m->exp_valid) {
            const unsigned p = u.m->exp_path;
            REQUIRE(p < k_paths);
            REQUIRE(mp[p].armed);
            REQUIRE(mp[p].deadline <= t);
            for (unsigned q = 0; q < p; ++q) REQUIRE_FALSE((mp[q].armed && mp[q].deadline <= t));
            u.cmd(expire, p);
            mp[p].armed = false;
            mp[p].backoff++;
            ++expiries;
        }
        const unsigned p = static_cast<unsigned>(rng() % k_paths);
        switch (rng() % 6) {
            case 0:
            case 1: {
                const std::int64_t sent = std::max<std::int64_t>(0, t - static_cast<std::int64_t>(rng() % 5'000'000));
                const bool retx = rng() % 5 == 0;
                u.cmd(sample, p, sent, retx);
                model_sample(mp[p], t, sent, retx);
                samples += !retx;
                break;
            }
            case 2:
                u.cmd(arm, p);
                mp[p].armed = true;
                mp[p].deadline = t + model_rto(mp[p]);
                break;
            case 3:
                u.cmd(cancel, p);
                mp[p].armed = false;
                break;
            case 4:
                u.cmd(acked, p);
                mp[p].backoff = 0;
                break;
            default:
                if (rng() % 20 == 0) {
                    u.cmd(reset, p);
                    mp[p].has_rtt = false;
                    mp[p].backoff = 0;
                }
        }
        for (unsigned q = 0; q < k_paths; ++q) {
            INFO("step " << step << " path " << q);
            u.m->rd_path = q;
            u.m->eval();
            REQUIRE(u.m->rd_has_rtt == mp[q].has_rtt);
            if (mp[q].has_rtt) {
                REQUIRE(static_cast<std::int64_t>(u.m->rd_srtt) == mp[q].srtt);
                REQUIRE(static_cast<std::int64_t>(u.m->rd_rttvar) == mp[q].rttvar);
            }
            REQUIRE(u.m->rd_backoff == std::min(mp[q].backoff, 255u));
            REQUIRE(static_cast<std::int64_t>(u.m->rd_rto) == model_rto(mp[q]));
        }
        std::uint64_t next = k_never;
        for (const auto& q : mp)
            if (q.armed) next = std::min(next, static_cast<std::uint64_t>(q.deadline));
        REQUIRE(u.m->next_deadline == next);
    }
    CHECK(expiries > 1000);  // the sequence exercised backoff and expiry
    CHECK(samples > 1000);
}

TEST_CASE("mr_rto: doubling per expiry, capped at rto_max, ended by new acknowledgements") {
    unit<Vmr_rto> u;
    u.at(10'000'000);
    u.cmd(sample, 3, 9'000'000);  // R = 1 ms: SRTT 1 ms, RTTVAR 0.5 ms, RTO 3 ms
    CHECK(u.rto(3) == 3'000'000);
    u.cmd(expire, 3);
    CHECK(u.rto(3) == 6'000'000);
    for (int i = 0; i < 10; ++i) u.cmd(expire, 3);
    CHECK(u.rto(3) == k_max);
    u.cmd(acked, 3);
    CHECK(u.rto(3) == 3'000'000);
    // Karn's rule: a retransmitted packet's ACK is no sample.
    u.cmd(sample, 4, 9'000'000, true);
    u.m->rd_path = 4;
    u.m->eval();
    CHECK_FALSE(u.m->rd_has_rtt);
    CHECK(u.rto(4) == k_initial);
}

TEST_CASE("mr_rto planted bugs: shared-rto restarts every path's timer from any path; no-backoff never doubles") {
    {
        unit<Vmr_rto_shared> u;
        u.at(1'000'000);
        u.cmd(arm, 1);  // path 1's timer, due at 2 ms
        u.at(1'500'000);
        u.cmd(arm, 2);  // path 2's progress restarts the one timer: path 1's expiry moves to 2.5 ms
        u.at(2'000'000);
        CHECK_FALSE(u.m->exp_valid);  // MR-RTO-2 broken: path 1 did not expire at its own RTO
        CHECK(u.m->next_deadline == 2'500'000);
        unit<Vmr_rto> clean;
        clean.at(1'000'000);
        clean.cmd(arm, 1);
        clean.at(1'500'000);
        clean.cmd(arm, 2);
        clean.at(2'000'000);
        CHECK(clean.m->exp_valid);
        CHECK(clean.m->exp_path == 1);
    }
    {
        unit<Vmr_rto_no_backoff> u;
        u.at(0);
        const auto before = u.rto(0);
        u.cmd(expire, 0);
        CHECK(u.rto(0) == before);  // MR-RTO-3 broken: not doubled
        unit<Vmr_rto> clean;
        clean.at(0);
        clean.cmd(expire, 0);
        CHECK(clean.rto(0) == 2 * before);
    }
}

TEST_CASE("mr_rto planted bug karn-violation: a resent packet's sample, from its first transmission, is taken (MR-RTO-3)") {
    auto drive = [](auto& u) {
        u.at(100'000);
        u.cmd(sample, 0, 0);  // sent once at 0, acknowledged at 100 us
        u.at(1'100'000);
        u.cmd(sample, 0, 1'000'000, true, 0);  // first sent at 0, resent at 1 ms, acknowledged at 1.1 ms
        u.m->rd_path = 0;
        u.m->eval();
        return static_cast<std::int64_t>(u.m->rd_srtt);
    };
    unit<Vmr_rto> clean;
    CHECK(drive(clean) == 100'000);  // Karn's rule: no sample from the resent packet
    unit<Vmr_rto_karn> karn;
    CHECK(drive(karn) == (7 * 100'000 + 1'100'000) / 8);  // 1.1 ms taken as an RTT
}
