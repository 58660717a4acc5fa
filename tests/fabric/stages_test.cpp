#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "fabric/fabric.h"
#include "sim/drivers.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::fabric;
using namespace std::chrono_literals;

namespace {

// One direction, one path with the given stages; records deliveries.
struct rig {
    sim::scheduler s;
    sim::virtual_driver d{s};
    std::unique_ptr<fabric::fabric> f;
    struct arrival {
        core::nanos t;
        core::byte_buffer bytes;
    };
    std::vector<arrival> got;

    explicit rig(std::vector<stage_spec> stages, unsigned paths = 1, std::uint64_t seed = 7) {
        fabric_config c;
        c.paths = paths;
        c.seed = seed;
        c.default_stages = std::move(stages);
        auto r = fabric::fabric::create(s, c);
        REQUIRE(r.ok());
        f = std::move(*r);
        f->set_receiver(direction::a_to_b, [this](core::bytes_view b, const packet_meta&) {
            got.push_back({s.now(), {b.begin(), b.end()}});
        });
    }
    // n WRITE frames with PPSN 0..n-1, payload `len`, sent `gap` apart.
    void send_writes(int n, std::size_t len = 100, core::nanos gap = 0ns) {
        for (int i = 0; i < n; ++i) {
            s.at(gap * i, [this, i, len] {
                auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(len, 0xAB));
                spec.bth.psn = static_cast<std::uint32_t>(i);
                f->send(direction::a_to_b, wire::build(spec));
            });
        }
        d.run();
    }
    std::vector<std::uint32_t> psns() const {
        std::vector<std::uint32_t> v;
        for (const auto& a : got) v.push_back(wire::decode_ethernet(a.bytes, {.verify_icrc = false}).f.bth.psn);
        return v;
    }
};

}  // namespace

TEST_CASE("bernoulli loss: exact count under seed 7, and near p") {
    rig r({{"loss", {{"p", "0.1"}}}});
    r.send_writes(10000);
    const auto lost = 10000 - r.got.size();
    CHECK(lost > 900);  // binomial(10000, 0.1): mean 1000, sd 30
    CHECK(lost < 1100);
    CHECK(lost == 994);  // pinned: a change here changes every recorded run
}

TEST_CASE("every_nth loss is exact") {
    rig r({{"loss", {{"model", "every_nth"}, {"nth", "10"}, {"offset", "3"}}}});
    r.send_writes(100);
    auto p = r.psns();
    CHECK(p.size() == 90);
    for (std::uint32_t x : {3u, 13u, 93u}) CHECK(std::find(p.begin(), p.end(), x) == p.end());
    CHECK(std::find(p.begin(), p.end(), 4u) != p.end());
}

TEST_CASE("gilbert-elliott loss comes in bursts") {
    rig r({{"loss", {{"model", "gilbert_elliott"}, {"p_gb", "0.01"}, {"p_bg", "0.2"}}}});
    r.send_writes(20000);
    auto p = r.psns();
    const auto lost = 20000 - p.size();
    // Stationary bad-state share 0.01/0.21 ~ 4.8 %, mean burst 5.
    CHECK(lost > 600);
    CHECK(lost < 1400);
    CHECK(lost == 977);  // pinned under seed 7
    std::size_t gaps = 0;
    for (std::size_t i = 1; i < p.size(); ++i) gaps += p[i] != p[i - 1] + 1;
    CHECK(static_cast<double>(lost) / static_cast<double>(gaps) > 3.0);  // mean burst length
}

TEST_CASE("ppsn_list drops each listed PPSN once; a retransmission passes") {
    rig r({{"loss", {{"model", "ppsn_list"}, {"ppsns", "5,7"}}}});
    r.send_writes(10);
    r.send_writes(10);  // the same PPSNs again, as retransmissions would be
    auto p = r.psns();
    CHECK(p.size() == 18);
    CHECK(std::count(p.begin(), p.end(), 5u) == 1);
    CHECK(std::count(p.begin(), p.end(), 7u) == 1);
}

TEST_CASE("match_drop drops matches by decoded fields, after skip, up to count") {
    rig r({{"match_drop", {{"opcode", "WRITE"}, {"skip", "2"}, {"count", "3"}}}});
    r.send_writes(10);
    CHECK(r.psns() == std::vector<std::uint32_t>{0, 1, 5, 6, 7, 8, 9});
    rig q({{"match_drop", {{"opcode", "ACK"}, {"count", "0"}}}});
    q.send_writes(5);
    CHECK(q.got.size() == 5);  // nothing matched
}

TEST_CASE("duplication: exact count and duplicates identical") {
    rig r({{"duplicate", {{"p", "0.5"}}}});
    r.send_writes(1000);
    CHECK(r.got.size() > 1450);
    CHECK(r.got.size() < 1550);
    CHECK(r.got.size() == 1493);  // pinned under seed 7
    auto p = r.psns();
    CHECK(std::is_sorted(p.begin(), p.end()));
}

TEST_CASE("corruption is always caught by the ICRC") {
    rig r({{"corrupt", {{"p", "0.3"}, {"bits", "3"}}}});
    r.send_writes(2000);
    REQUIRE(r.got.size() == 2000);
    int bad = 0;
    for (const auto& a : r.got) {
        auto d = wire::decode_ethernet(a.bytes);
        if (!d.ok()) {
            ++bad;
            CHECK(d.dropped->reason == wire::drop_reason::bad_icrc);
        }
    }
    const auto& c = r.f->at(direction::a_to_b, 0).stages()[0]->counters();
    CHECK(bad == static_cast<int>(c.corrupted));
    CHECK(c.corrupted == 620);  // pinned under seed 7
}

TEST_CASE("queue: serialization at the configured rate, tail drop, RED marking keeps frames valid") {
    // 10 Gb/s; 1250-byte frames take exactly 1 us each.
    auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(1250 - 14 - 20 - 8 - 12 - 32 - 4, 0));
    REQUIRE(wire::build(spec).size() == 1250);
    rig r({{"queue", {{"rate", "10Gbps"}, {"buffer", "6250"}, {"ecn", "true"}, {"kmin", "0"}, {"kmax", "2500"}}}});
    for (int i = 0; i < 8; ++i) r.f->send(direction::a_to_b, wire::build(spec));  // a burst at t=0
    r.d.run();
    REQUIRE(r.got.size() == 5);  // 6250-byte buffer holds five
    for (std::size_t i = 0; i < r.got.size(); ++i) CHECK(r.got[i].t == core::nanos((i + 1) * 1000));
    const auto& c = r.f->at(direction::a_to_b, 0).stages()[0]->counters();
    CHECK(c.dropped == 3);
    int ce = 0;
    for (const auto& a : r.got) {
        auto d = wire::decode_ethernet(a.bytes);
        REQUIRE(d.ok());  // IPv4 checksum fixed, ICRC unaffected by ECN
        ce += d.f.ipv4.ecn == wire::k_ecn_ce;
    }
    CHECK(ce == static_cast<int>(c.marked));
    CHECK(ce >= 3);  // queue >= kmax (2500 B) for the first three departures
}

TEST_CASE("delay: fixed delay, uniform jitter within bounds, order kept unless told") {
    rig fixed({{"delay", {{"delay", "5us"}}}});
    fixed.send_writes(3, 100, 1us);
    REQUIRE(fixed.got.size() == 3);
    CHECK(fixed.got[0].t == 5us);
    CHECK(fixed.got[2].t == 7us);

    rig j({{"delay", {{"delay", "5us"}, {"jitter", "uniform"}, {"jitter_param", "3us"}}}});
    j.send_writes(500, 100, 100ns);
    auto p = j.psns();
    CHECK(std::is_sorted(p.begin(), p.end()));
    for (std::size_t i = 0; i < j.got.size(); ++i) CHECK(j.got[i].t >= core::nanos(100 * static_cast<long>(p[i])) + 5us);

    rig u({{"delay", {{"delay", "5us"}, {"jitter", "uniform"}, {"jitter_param", "3us"}, {"keep_order", "false"}}}});
    u.send_writes(500, 100, 100ns);
    auto q = u.psns();
    CHECK_FALSE(std::is_sorted(q.begin(), q.end()));
    for (std::size_t i = 0; i < u.got.size(); ++i) {
        const auto sent = core::nanos(100 * static_cast<long>(q[i]));
        CHECK(u.got[i].t >= sent + 5us);
        CHECK(u.got[i].t <= sent + 8us);
    }
}

TEST_CASE("reorder holds packets back so later ones pass") {
    rig r({{"reorder", {{"p", "0.2"}, {"extra", "3us"}}}});
    r.send_writes(100, 100, 1us);
    auto p = r.psns();
    CHECK(p.size() == 100);
    CHECK_FALSE(std::is_sorted(p.begin(), p.end()));
    const auto held = r.f->at(direction::a_to_b, 0).stages()[0]->counters().delayed;
    CHECK(held == 20);  // pinned under seed 7
}

TEST_CASE("blackhole drops between fail_at and restore_at; a path can be failed by hand") {
    rig r({{"blackhole", {{"fail_at", "10us"}, {"restore_at", "20us"}}}});
    r.send_writes(30, 100, 1us);
    auto p = r.psns();
    CHECK(p.size() == 20);
    CHECK(std::find(p.begin(), p.end(), 10u) == p.end());
    CHECK(std::find(p.begin(), p.end(), 20u) != p.end());

    rig h({{"delay", {{"delay", "1us"}}}});
    h.f->at(direction::a_to_b, 0).set_failed(true);
    h.send_writes(3);
    CHECK(h.got.empty());
    CHECK(h.f->at(direction::a_to_b, 0).dropped_failed() == 3);
}

TEST_CASE("paths follow the UDP source port: pinned, or hashed like ECMP") {
    rig r({{"delay", {{"delay", "1us"}}}}, 8, 3);
    auto& f = *r.f;
    std::set<unsigned> used;
    for (std::uint16_t port = 0xC000; port < 0xC000 + 64; ++port) used.insert(f.path_of(port));
    CHECK(used.size() == 8);  // 64 ports spread over all 8 paths
    CHECK(f.path_of(0xC123) == f.path_of(0xC123));
    f.pin(0xC123, 5);
    CHECK(f.path_of(0xC123) == 5);
    auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, {});
    spec.udp.sport = 0xC123;
    std::vector<unsigned> seen_paths;
    f.set_receiver(direction::a_to_b, [&](core::bytes_view, const packet_meta& m) { seen_paths.push_back(m.path); });
    f.send(direction::a_to_b, wire::build(spec));
    spec.udp.sport = 0xC124;  // a moved path: another port, wherever it hashes
    f.send(direction::a_to_b, wire::build(spec));
    r.d.run();
    CHECK(seen_paths == std::vector<unsigned>{5, f.path_of(0xC124)});
    CHECK(f.pool().in_use() == 0);  // every handle released
}

TEST_CASE("a frame handed over in a buffer travels without a copy; pins can be changed") {
    rig r({{"delay", {{"delay", "1us"}}}}, 8, 3);
    auto& f = *r.f;
    f.pin(0xC200, 2);
    f.pin(0xC100, 1);
    f.pin(0xC200, 6);  // re-pinned
    CHECK(f.path_of(0xC100) == 1);
    CHECK(f.path_of(0xC200) == 6);
    auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(1000, 0x42));
    spec.udp.sport = 0xC200;
    core::byte_buffer frame = wire::build(spec);
    const core::byte_buffer copy = frame;
    const std::uint8_t* bytes = frame.data();
    std::vector<const std::uint8_t*> seen;
    std::vector<unsigned> paths;
    f.set_receiver(direction::a_to_b, [&](core::bytes_view v, const packet_meta& m) {
        seen.push_back(v.data());
        paths.push_back(m.path);
        CHECK(std::equal(v.begin(), v.end(), copy.begin(), copy.end()));
    });
    f.send_owned(direction::a_to_b, frame);
    CHECK(frame.data() != bytes);  // taken: the caller gets a spare buffer of the pool's back
    r.d.run();
    CHECK(seen == std::vector<const std::uint8_t*>{bytes});  // the very bytes the sender built
    CHECK(paths == std::vector<unsigned>{6});
    CHECK(f.pool().in_use() == 0);
}

TEST_CASE("fabric::create validates each distinct stage list once; paths keep their own random streams") {
    SECTION("a bad list is reported at the first path that uses it") {
        sim::scheduler s;
        fabric_config c;
        c.paths = 4;
        c.path_stages_ba[2] = {{"loss", {{"p", "2"}}}};
        c.path_stages_ba[3] = {{"loss", {{"p", "2"}}}};  // equal list: reported once, at path 2
        auto r = fabric::fabric::create(s, c);
        REQUIRE_FALSE(r.ok());
        CHECK(r.err().message.rfind("B->A path 2: stage 'loss': parameter 'p' = '2': out of range [0, 1]", 0) == 0);
        c.path_stages_ab[1] = {{"wormhole", {}}};
        auto w = fabric::fabric::create(s, c);
        REQUIRE_FALSE(w.ok());
        CHECK(w.err().message.rfind("A->B path 1: unknown stage 'wormhole'", 0) == 0);
    }
    SECTION("equal lists on every path: each path's loss is its own draw") {
        // As mrct simulate configures it: every path given its own, equal list.
        sim::scheduler s;
        sim::virtual_driver d(s);
        fabric_config c;
        c.paths = 4;
        for (unsigned p = 0; p < 4; ++p) c.path_stages_ab[p] = {{"loss", {{"p", "0.5"}}}};
        auto r = fabric::fabric::create(s, c);
        REQUIRE(r.ok());
        auto& f = **r;
        std::vector<std::vector<std::uint32_t>> got(4);
        f.set_receiver(direction::a_to_b, [&](core::bytes_view b, const packet_meta& m) {
            got[m.path].push_back(wire::decode_ethernet(b, {.verify_icrc = false}).f.bth.psn);
        });
        for (unsigned p = 0; p < 4; ++p) {
            f.pin(static_cast<std::uint16_t>(0xC000 + p), p);
            for (std::uint32_t i = 0; i < 64; ++i) {
                auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, {});
                spec.udp.sport = static_cast<std::uint16_t>(0xC000 + p);
                spec.bth.psn = i;
                f.send(direction::a_to_b, wire::build(spec));
            }
        }
        d.run();
        std::set<std::vector<std::uint32_t>> patterns(got.begin(), got.end());
        CHECK(patterns.size() == 4);  // one shared stage, or one shared stream, would repeat a pattern
        for (const auto& g : got) {
            CHECK(g.size() > 16);
            CHECK(g.size() < 48);
        }
    }
}

TEST_CASE("fabric: deliveries nested past a bound go through the scheduler, same instant, in order") {
    // Two sides answering each other through paths that hold nothing (no
    // stages): 200,000 round trips. Delivered from inside the receiver this
    // recursed once per frame and overflowed the stack (a 16 MiB WRITE over
    // `delay: 0us`); now nesting stops at k_max_nesting deliveries and the
    // next answer waits for the scheduler.
    sim::scheduler s;
    sim::virtual_driver d(s);
    fabric_config c;
    c.default_stages.clear();  // the default holds frames 2 us
    auto r = fabric::fabric::create(s, c);
    REQUIRE(r.ok());
    auto& f = **r;
    const auto frame = wire::build(wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(64, 0xAB)));
    int left = 200000, depth = 0, deepest = 0;
    std::vector<core::nanos> times;
    auto answer = [&](direction back) {
        return [&, back](core::bytes_view, const packet_meta&) {
            deepest = std::max(deepest, ++depth);
            times.push_back(s.now());
            if (--left > 0) f.send(back, frame);
            --depth;
        };
    };
    f.set_receiver(direction::a_to_b, answer(direction::b_to_a));
    f.set_receiver(direction::b_to_a, answer(direction::a_to_b));
    s.at(5us, [&] { f.send(direction::a_to_b, frame); });
    d.run();
    CHECK(left == 0);
    CHECK(deepest == static_cast<int>(fabric::fabric::k_max_nesting));
    REQUIRE(times.size() == 200000);
    CHECK(times.front() == 5us);
    CHECK(times.back() == 5us);  // nothing held them: the same instant
    CHECK(f.pool().in_use() == 0);
}

// A described payload (mrct simulate --payload symbolic): the frame holds the
// headers and ICRC only, the pool counts it at its full length, and a bit the
// corrupt stage flips in the described bytes is applied to the ICRC, so the
// receiver's check fails exactly when it fails over real bytes.
TEST_CASE("symbolic payloads: full length in queues, corruption caught exactly as over real bytes") {
    // n WRITEs of 4096 zero bytes through `r`, carried or (symbolic) described.
    auto carry = [](rig& r, bool symbolic, int n) {
        r.f->pool().set_symbolic_payload(symbolic);
        for (int i = 0; i < n; ++i) {
            auto spec = wire::data_spec(wire::opcode::write, wire::mrh{}, core::byte_buffer(4096, 0));
            spec.bth.psn = static_cast<std::uint32_t>(i);
            if (symbolic) {
                spec.payload.clear();
                spec.symbolic_payload = 4096;
            }
            r.f->send(direction::a_to_b, wire::build(spec));
        }
        r.d.run();
    };
    SECTION("corrupt") {
        const std::vector<stage_spec> corrupt = {{"corrupt", {{"p", "0.3"}, {"bits", "3"}}}};
        rig real(corrupt), sym(corrupt);
        carry(real, false, 2000);
        carry(sym, true, 2000);
        REQUIRE(real.got.size() == 2000);
        REQUIRE(sym.got.size() == 2000);
        int bad = 0, in_payload = 0;
        for (std::size_t i = 0; i < 2000; ++i) {
            const auto& a = real.got[i].bytes;
            const auto& b = sym.got[i].bytes;
            REQUIRE(b.size() + 4096 == a.size());
            auto da = wire::decode_ethernet(a);
            auto db = wire::decode_ethernet(b, {.symbolic_payload = true});
            CHECK(da.ok() == db.ok());
            if (!da.ok()) {
                ++bad;
                CHECK(db.dropped->reason == da.dropped->reason);
            }
            // The headers took the same flips; a flip in the payload shows in the
            // described frame's ICRC instead.
            const bool headers_same = std::equal(b.begin(), b.end() - 4, a.begin());
            CHECK(headers_same);
            const bool payload_hit = std::any_of(a.end() - 4 - 4096, a.end() - 4, [](std::uint8_t x) { return x != 0; });
            if (payload_hit) ++in_payload;
            else CHECK(std::equal(b.end() - 4, b.end(), a.end() - 4));
        }
        CHECK(bad == static_cast<int>(real.f->at(direction::a_to_b, 0).stages()[0]->counters().corrupted));
        CHECK(in_payload > 400);  // most flips land in the 4 KiB payload
    }
    SECTION("queue") {
        // 10 Gb/s: a frame of 4096 bytes of payload plus headers takes its full length to serialize.
        const std::vector<stage_spec> queue = {{"queue", {{"rate", "10Gbps"}, {"buffer", "100000"}}}};
        rig real(queue), sym(queue);
        carry(real, false, 40);
        carry(sym, true, 40);
        REQUIRE(real.got.size() == sym.got.size());
        CHECK(real.got.size() < 40);  // the buffer holds fewer than 40 full frames: tail drops in both
        for (std::size_t i = 0; i < real.got.size(); ++i) CHECK(real.got[i].t == sym.got[i].t);
    }
}
