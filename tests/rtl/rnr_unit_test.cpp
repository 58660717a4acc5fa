// mr_rnr (dut_adapters/rtl/hdl/mr_rnr.sv) under Verilator: every TimerCode
// decodes as the codec's table does (wire::rnr_timer_duration, §4), a tag
// is paused until its latest-ending timer, a stale Attempt's RNR changes
// nothing, resumptions come due at their time; the planted
// MR_BUG_FROZEN_RNR never resumes, MR_BUG_RNR_PAUSES_ALL holds every tag.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <random>

#include "Vmr_rnr.h"
#include "Vmr_rnr_all.h"
#include "Vmr_rnr_frozen.h"
#include "rtl/clocked.h"
#include "verilated.h"
#include "wire/rnr_timer.h"

using namespace mrct;

namespace {

enum op : std::uint8_t { op_pause = 1, op_resumed = 2 };
constexpr std::uint64_t k_never = (std::uint64_t{1} << 48) - 1;

template <class V>
struct unit : test::clocked<V> {
    using test::clocked<V>::m;
    void cmd(op o, std::uint16_t tag = 0, unsigned code = 0, unsigned rnr_attempt = 0, unsigned msg_attempt = 0,
             unsigned slot = 0) {
        m->cmd_op = o;
        m->cmd_tag = tag;
        m->cmd_code = code;
        m->cmd_rnr_attempt = rnr_attempt;
        m->cmd_msg_attempt = msg_attempt;
        m->cmd_slot = slot;
        this->pulse();
    }
    bool paused(std::uint16_t tag) {
        m->rd_tag = tag;
        m->eval();
        return m->rd_paused;
    }
    std::int64_t until(std::uint16_t tag) {
        m->rd_tag = tag;
        m->eval();
        return static_cast<std::int64_t>(m->rd_until);
    }
    // Takes every resumption due now, as the shell does.
    std::vector<std::uint16_t> take() {
        std::vector<std::uint16_t> tags;
        while (m->res_valid) {
            tags.push_back(m->res_tag);
            cmd(op_resumed, 0, 0, 0, 0, m->res_slot);
        }
        return tags;
    }
};

}  // namespace

TEST_CASE("mr_rnr: every TimerCode decodes as the codec's §4 table") {
    unit<Vmr_rnr> u;
    for (unsigned code = 0; code < 32; ++code) {
        INFO("TimerCode " << code);
        const std::int64_t t0 = 1'000'000'000 + code;
        u.at(t0);
        u.cmd(op_pause, 7, code, 3, 3);
        REQUIRE(u.m->accepted);
        const auto want = t0 + wire::rnr_timer_duration(static_cast<std::uint8_t>(code)).count();
        REQUIRE(u.until(7) == want);
        REQUIRE(u.m->next_deadline == static_cast<std::uint64_t>(want));
        u.at(want - 1);
        REQUIRE_FALSE(u.m->res_valid);
        u.at(want);
        REQUIRE(u.take() == std::vector<std::uint16_t>{7});
        REQUIRE_FALSE(u.paused(7));
    }
}

TEST_CASE("mr_rnr: the latest-ending timer on a tag holds it; other tags are not touched; a stale Attempt changes nothing") {
    unit<Vmr_rnr> u;
    u.at(0);
    u.cmd(op_pause, 2, 14, 1, 1);  // 1.28 ms
    u.cmd(op_pause, 2, 10, 1, 1);  // 320 us: ends earlier, the tag stays paused to 1.28 ms
    CHECK(u.until(2) == 1'280'000);
    u.cmd(op_pause, 2, 16, 1, 1);  // 2.56 ms: extends
    CHECK(u.until(2) == 2'560'000);
    CHECK_FALSE(u.paused(3));  // MR-RNR-2: only that tag
    u.cmd(op_pause, 3, 20, 2, 1);  // an RNR for Attempt 2 of a message now at Attempt 1: stale
    CHECK_FALSE(u.m->accepted);
    CHECK_FALSE(u.paused(3));
    u.at(2'559'999);
    CHECK(u.take().empty());
    u.at(2'560'000);
    CHECK(u.take() == std::vector<std::uint16_t>{2});
    // Attempt numbering wraps with its 4-bit field.
    u.m->attempt = 15;
    u.m->eval();
    CHECK(u.m->next_attempt == 0);
    u.m->attempt = 4;
    u.m->eval();
    CHECK(u.m->next_attempt == 5);
}

TEST_CASE("mr_rnr: a full table refuses a new tag and says so") {
    unit<Vmr_rnr> u;
    u.at(0);
    for (std::uint16_t tag = 100; tag < 116; ++tag) {
        u.cmd(op_pause, tag, 5, 0, 0);
        REQUIRE(u.m->accepted);
    }
    u.cmd(op_pause, 116, 5, 0, 0);
    CHECK(u.m->full);
    CHECK_FALSE(u.m->accepted);
    u.cmd(op_pause, 100, 6, 0, 0);  // a tag already held still extends
    CHECK(u.m->accepted);
    CHECK_FALSE(u.m->full);
}

TEST_CASE("mr_rnr: random pauses against a model of the reference's per-tag deadlines") {
    unit<Vmr_rnr> u;
    std::map<std::uint16_t, std::int64_t> model;  // tag -> paused until
    std::mt19937_64 rng(7);
    std::int64_t t = 0;
    for (int step = 0; step < 20000; ++step) {
        t += static_cast<std::int64_t>(rng() % 200'000);
        u.at(t);
        for (auto tag : u.take()) {
            REQUIRE(model.count(tag));
            REQUIRE(model[tag] <= t);
            model.erase(tag);
        }
        for (const auto& [tag, end] : model) REQUIRE(end > t);  // nothing due was left
        if (model.size() < 12) {
            const auto tag = static_cast<std::uint16_t>(rng() % 20);
            const auto code = static_cast<unsigned>(1 + rng() % 16);
            const auto a = static_cast<unsigned>(rng() % 16);
            const bool stale = rng() % 8 == 0;
            u.cmd(op_pause, tag, code, stale ? (a + 1) % 16 : a, a);
            REQUIRE(u.m->accepted == !stale);
            if (!stale) {
                const auto end = t + wire::rnr_timer_duration(static_cast<std::uint8_t>(code)).count();
                auto& slot = model[tag];
                slot = std::max(slot, end);
            }
        }
        std::uint64_t next = k_never;
        for (const auto& [tag, end] : model) {
            REQUIRE(u.until(tag) == end);
            next = std::min(next, static_cast<std::uint64_t>(end));
        }
        REQUIRE(u.m->next_deadline == next);
    }
}

TEST_CASE("mr_rnr planted bug frozen-rnr: the pause never ends (MR-RNR-4)") {
    unit<Vmr_rnr_frozen> u;
    u.at(0);
    u.cmd(op_pause, 9, 1, 0, 0);  // 10 us
    u.at(1'000'000'000);
    CHECK_FALSE(u.m->res_valid);
    CHECK(u.m->next_deadline == k_never);
    CHECK(u.paused(9));
    unit<Vmr_rnr> clean;
    clean.at(0);
    clean.cmd(op_pause, 9, 1, 0, 0);
    clean.at(10'000);
    CHECK(clean.take() == std::vector<std::uint16_t>{9});
}

TEST_CASE("mr_rnr planted bug rnr-pauses-all: a pause on one tag holds every tag (MR-RNR-2, MR-RNR-3)") {
    auto drive = [](auto& u) {
        u.at(0);
        u.cmd(op_pause, 4, 10, 0, 0);  // tag 4, 320 us
        u.cmd(op_pause, 5, 14, 0, 0);  // tag 5, 1.28 ms
    };
    unit<Vmr_rnr_all> all;
    drive(all);
    CHECK(all.paused(7));  // a tag no RNR named
    CHECK(all.until(7) == 1'280'000);  // until the latest pause ends
    all.at(320'000);
    CHECK(all.take() == std::vector<std::uint16_t>{4});
    CHECK(all.paused(4));  // tag 5's pause still holds tag 4
    all.at(1'280'000);
    CHECK(all.take() == std::vector<std::uint16_t>{5});
    CHECK_FALSE(all.paused(7));
    unit<Vmr_rnr> clean;
    drive(clean);
    CHECK_FALSE(clean.paused(7));
    clean.at(320'000);
    CHECK(clean.take() == std::vector<std::uint16_t>{4});
    CHECK_FALSE(clean.paused(4));
}
