// mr_rx_path (dut_adapters/rtl/hdl/mr_rx_path.sv) under Verilator against
// the reference receiver's per-path tracking and ACK policy
// (engine/endpoint/receiver.cpp, on_data: classification, mark_received,
// ack_policy), written out again here with the codebase's own 24-bit serial
// arithmetic and sack256: CumAck, the SACK bitmap, the CE count, the ACK
// decision and the ACK timer, bit for bit over random traffic with loss,
// duplicates, reordering and CE; and each planted define caught.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <vector>

#include "Vmr_rx_path.h"
#include "Vmr_rx_path_ce.h"
#include "Vmr_rx_path_lazy.h"
#include "Vmr_rx_path_no_sack.h"
#include "Vmr_rx_path_sack.h"
#include "core/serial.h"
#include "rtl/clocked.h"
#include "verilated.h"
#include "wire/sack.h"

using namespace mrct;

namespace {

using core::psn24;
enum op : std::uint8_t { restart = 1, packet = 2, acked = 3 };
constexpr unsigned k_ack_every = 8;
constexpr std::int64_t k_ack_delay = 20'000;
constexpr std::uint64_t k_never = (std::uint64_t{1} << 48) - 1;

struct model_path {
    std::uint32_t cum_ack = 0, highest = 0;
    wire::sack256 got;
    std::uint16_t ce_count = 0;
    unsigned unacked = 0;
    bool timing = false;
    std::int64_t ack_at = 0;

    void restart_at(std::uint32_t ppsn) {
        cum_ack = ppsn;
        highest = psn24::add(ppsn, 0xFFFFFF);
        got.reset();
        ce_count = 0;
        unacked = 0;
        timing = false;
    }
    bool duplicate(std::uint32_t ppsn) const {
        const auto d = psn24::diff(ppsn, cum_ack);
        return d >= psn24::k_half || (d < 256 && got.test(d));
    }
    bool out_of_window(std::uint32_t ppsn) const { return !duplicate(ppsn) && psn24::diff(ppsn, cum_ack) >= 256; }
    // receiver.cpp's ce count, mark_received and ack_policy; returns "ACK now".
    bool on_packet(std::uint32_t ppsn, bool ce, bool ack_req, bool mark, std::int64_t now) {
        if (ce) ++ce_count;
        bool new_gap = false;
        if (mark) {
            const auto d = psn24::diff(ppsn, cum_ack);
            new_gap = psn24::lt(psn24::add(highest, 1), ppsn);
            if (psn24::lt(highest, ppsn)) highest = ppsn;
            got.set(d);
            if (const unsigned n = got.next_clear(0); n > 0) {
                got.shift_down(n);
                cum_ack = psn24::add(cum_ack, n);
            }
        }
        if (ce || ack_req || new_gap || ++unacked >= k_ack_every) {
            unacked = 0;
            timing = false;
            return true;
        }
        if (!timing) {
            timing = true;
            ack_at = now + k_ack_delay;
        }
        return false;
    }
    void on_ack_sent() {
        unacked = 0;
        timing = false;
    }
};

template <class V>
struct unit : test::clocked<V> {
    using test::clocked<V>::m;
    unit() : test::clocked<V>([](V& v) {
        v.cfg_ack_every = k_ack_every;
        v.cfg_ack_delay = k_ack_delay;
    }) {}
    void classify(unsigned path, std::uint32_t ppsn) {
        m->cmd_path = path;
        m->cmd_ppsn = ppsn;
        m->eval();
    }
    void cmd(op o, unsigned path, std::uint32_t ppsn = 0, bool ce = false, bool ack_req = false, bool mark = false) {
        m->cmd_op = o;
        m->cmd_path = path;
        m->cmd_ppsn = ppsn;
        m->cmd_ce = ce;
        m->cmd_ack_req = ack_req;
        m->cmd_mark = mark;
        this->pulse();
    }
    wire::sack256 sack(unsigned path) {
        m->rd_path = path;
        m->eval();
        wire::sack256 s;
        for (unsigned w = 0; w < 4; ++w)
            s.set_word(w, m->rd_sack[2 * w] | std::uint64_t{m->rd_sack[2 * w + 1]} << 32);
        return s;
    }
};

}  // namespace

TEST_CASE("mr_rx_path: CumAck, SACK, CE count, ACK decisions and timers equal the reference receiver's, bit for bit") {
    unit<Vmr_rx_path> u;
    constexpr unsigned k_paths = 4;
    std::vector<model_path> mp(k_paths);
    std::vector<std::uint32_t> next(k_paths);  // the sender's next PPSN per path
    std::mt19937_64 rng(99);
    std::int64_t t = 0;
    for (unsigned p = 0; p < k_paths; ++p) {
        next[p] = (0xFFFF00u + p * 100) & 0xFFFFFF;  // near the 24-bit wrap (past it for path 3)
        u.cmd(restart, p, next[p]);
        mp[p].restart_at(next[p]);
    }
    std::size_t acks = 0, timeouts = 0, dups = 0, oow = 0;
    for (int step = 0; step < 30000; ++step) {
        t += static_cast<std::int64_t>(rng() % 8'000);
        u.at(t);
        while (u.m->tmo_valid) {  // the ACK timers due now, as the shell takes them
            const unsigned p = u.m->tmo_path;
            REQUIRE(mp[p].timing);
            REQUIRE(mp[p].ack_at <= t);
            u.cmd(acked, p);
            mp[p].on_ack_sent();
            ++timeouts;
        }
        const unsigned p = static_cast<unsigned>(rng() % k_paths);
        // Mostly the next PPSN; sometimes a skip (loss), an old one (a
        // duplicate or a late copy), or one far ahead (out of the window).
        std::uint32_t ppsn = next[p];
        const auto r = rng() % 100;
        if (r < 10) ppsn = psn24::add(next[p], 1 + static_cast<std::uint32_t>(rng() % 6));
        else if (r < 20) ppsn = psn24::add(next[p], 0xFFFFFF - static_cast<std::uint32_t>(rng() % 40));
        else if (r < 21) ppsn = psn24::add(mp[p].cum_ack, 256 + static_cast<std::uint32_t>(rng() % 100));
        if (psn24::lt(next[p], psn24::add(ppsn, 1)) && psn24::diff(ppsn, mp[p].cum_ack) < 200) next[p] = psn24::add(ppsn, 1);
        u.classify(p, ppsn);
        REQUIRE(u.m->cls_duplicate == mp[p].duplicate(ppsn));
        REQUIRE(u.m->cls_out_of_window == mp[p].out_of_window(ppsn));
        if (mp[p].out_of_window(ppsn)) {  // NAK 0x0B: nothing recorded
            ++oow;
            continue;
        }
        const bool dup = mp[p].duplicate(ppsn);
        dups += dup;
        const bool ce = rng() % 10 == 0, ack_req = rng() % 12 == 0;
        u.cmd(packet, p, ppsn, ce, ack_req, !dup);
        const bool now_ack = mp[p].on_packet(ppsn, ce, ack_req, !dup, t);
        REQUIRE(u.m->ack_now == now_ack);
        if (now_ack) {
            u.cmd(acked, p);  // the shell sends it; the unit's count restarts (it did already)
            ++acks;
        }
        for (unsigned q = 0; q < k_paths; ++q) {
            INFO("step " << step << " path " << q);
            u.m->rd_path = q;
            u.m->eval();
            REQUIRE(u.m->rd_cum_ack == mp[q].cum_ack);
            REQUIRE(u.m->rd_ce_count == mp[q].ce_count);
            REQUIRE(u.sack(q) == mp[q].got);
        }
        std::uint64_t nd = k_never;
        for (const auto& q : mp)
            if (q.timing) nd = std::min(nd, static_cast<std::uint64_t>(q.ack_at));
        REQUIRE(u.m->next_deadline == nd);
    }
    CHECK(acks > 3000);
    CHECK(timeouts > 100);
    CHECK(dups > 1000);
    CHECK(oow > 100);
}

TEST_CASE("mr_rx_path planted bugs: the SACK a word off (MR-SACK-1); the CE count saturating (MR-CC-1)") {
    auto drive = [](auto& u) {
        u.at(0);
        u.cmd(restart, 0, 100);
        u.cmd(packet, 0, 102, false, false, true);  // 101 lost: bit 2 of the SACK
        for (int i = 0; i < 20; ++i) u.cmd(packet, 0, 102, true, false, false);  // CE-marked duplicates
    };
    unit<Vmr_rx_path> clean;
    drive(clean);
    CHECK(clean.sack(0).test(2));
    CHECK(clean.m->rd_ce_count == 20);
    unit<Vmr_rx_path_sack> sack;
    drive(sack);
    CHECK_FALSE(sack.sack(0).test(2));
    CHECK(sack.sack(0).test(34));
    unit<Vmr_rx_path_ce> ce;
    drive(ce);
    CHECK(ce.m->rd_ce_count == 15);
}

TEST_CASE("mr_rx_path planted bugs: no SACK at all (MR-SACK-1); no ACK for AckReq or a new gap (MR-SACK-2)") {
    auto gap = [](auto& u) {
        u.at(0);
        u.cmd(restart, 0, 100);
        u.cmd(packet, 0, 100, false, false, true);
        u.cmd(packet, 0, 102, false, false, true);  // 101 lost: a new gap
        return static_cast<bool>(u.m->ack_now);
    };
    unit<Vmr_rx_path> clean;
    CHECK(gap(clean));
    CHECK(clean.m->rd_cum_ack == 101);
    CHECK(clean.sack(0).test(1));
    unit<Vmr_rx_path_no_sack> no_sack;
    CHECK(gap(no_sack));
    CHECK(no_sack.m->rd_cum_ack == 101);
    CHECK(no_sack.sack(0).none());  // 102 never reported
    unit<Vmr_rx_path_lazy> lazy;
    CHECK_FALSE(gap(lazy));  // the new gap asks for no ACK
    lazy.cmd(packet, 0, 103, false, true, true);  // nor does AckReq
    CHECK_FALSE(lazy.m->ack_now);
    lazy.cmd(packet, 0, 104, true, false, true);  // CE still does
    CHECK(lazy.m->ack_now);
    unit<Vmr_rx_path> clean2;
    clean2.at(0);
    clean2.cmd(restart, 0, 100);
    clean2.cmd(packet, 0, 100, false, true, true);  // AckReq: at once
    CHECK(clean2.m->ack_now);
}
