// so: a DUT library behind the in-process ABI. The reference library gives
// sim's verdicts and wire; a misbehaving library (toy_dut.c) is caught at
// each breach with a message naming the function, and never crashes the
// engine.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "dut_adapters/dut.h"
#include "run/mini_plan.h"
#include "run/runner.h"

using namespace mrct;
using test::k_plan;
using assertions::verdict;

namespace {

const std::string k_reference = MRCT_REFERENCE_DUT;
const std::string k_toy = MRCT_TOY_DUT;
// isolate=process runs libraries in mrct-dut-host, which is not beside
// this test program.
const bool k_env = (setenv("MRCT_DUT_HOST", MRCT_DUT_HOST_PATH, 1), true);
// How a segfaulting child ends: by the signal, or, built with
// AddressSanitizer, by ASan's report and then exit status 1, or SIGABRT
// under ASAN_OPTIONS=abort_on_error=1 (CI).
const std::string k_crashed =
    "(died of signal 11 \\(Segmentation fault\\)|died of signal 6 \\(Aborted\\)|exited with status 1)";

plan::suite load(const std::string& text) {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "so_dut_test_files";
    std::filesystem::create_directories(dir);
    const auto p = (dir / "plan.yaml").string();
    std::ofstream(p) << text;
    auto s = plan::load(p);
    REQUIRE(s.ok());
    return *s;
}


struct toy {
    sim::scheduler s;
    std::unique_ptr<dut::dut> d;
    std::vector<core::byte_buffer> sent;
    explicit toy(const std::string& mode, const std::string& engine_options = "") {
        auto o = dut::parse_so_options(k_toy + ",mode=" + mode + engine_options);
        REQUIRE(o.ok());
        auto m = dut::make_so(*o);
        REQUIRE(m.ok());
        d = std::move(*m);
        REQUIRE(d->configure({{"mtu", "4096"}}).ok());
        REQUIRE(d->start(s, d->address(), 1, [this](core::bytes_view f, core::nanos) { sent.emplace_back(f.begin(), f.end()); })
                    .ok());
    }
    void run_until(core::nanos t) {
        while (s.run_one(t)) {
        }
    }
};

}  // namespace

TEST_CASE("so: the reference library gives sim's verdicts, frames and times, in a child or in-process") {
    auto s = load(k_plan);
    run::run_options o;
    o.seed = 11;
    for (const std::string isolate : {"process", "none"})
    for (const std::string bug : {"", "no-fast-retx", "frozen-rnr"}) {
        auto sim = run::run_suite(s, *run::parse_dut(bug.empty() ? "sim" : "sim:bug=" + bug), o);
        auto so = run::run_suite(
            s, *run::parse_dut("so:" + k_reference + ",isolate=" + isolate + (bug.empty() ? "" : ",bug=" + bug)), o);
        REQUIRE(sim.size() == so.size());
        for (std::size_t i = 0; i < sim.size(); ++i) {
            INFO(isolate << " " << bug << " " << sim[i].id << ": " << so[i].reason);
            CHECK(sim[i].v == so[i].v);
            CHECK(sim[i].reason == so[i].reason);
            CHECK(sim[i].frames == so[i].frames);
            CHECK(sim[i].sim_time == so[i].sim_time);
        }
    }
    // And the bugs do break it (the comparison above is not of two passes).
    auto fr = run::run_suite(s, *run::parse_dut("so:" + k_reference + ",bug=frozen-rnr"), o);
    CHECK(fr[1].v == verdict::fail);
}

TEST_CASE("so: the library describes itself; its bugs are listed for selftest") {
    auto bugs = dut::so_bugs(*dut::parse_so_options(k_reference));
    REQUIRE(bugs.ok());
    CHECK(bugs->size() == endpoint::bug_profiles().size());
    CHECK(bugs->front().name == endpoint::bug_profiles().front().name);
    auto d = dut::make_so(*dut::parse_so_options(k_reference + ",bug=frozen-rnr"));
    REQUIRE(d.ok());
    CHECK((*d)->hello().bug == "frozen-rnr");
    CHECK((*d)->hello().name == "mrct-reference (so)");
    CHECK_THAT(run::parse_dut("so:" + k_reference + ",bug=nope").err().message, Catch::Contains("unknown bug profile 'nope'"));
    CHECK_THAT(run::parse_dut("so:" + k_reference + ",colour=red").err().message, Catch::Contains("unknown option 'colour'"));
    CHECK_THAT(run::parse_dut("so:" + k_reference + ",oops").err().message, Catch::Contains("not KEY=VALUE"));
    CHECK_THAT(run::parse_dut("so:").err().message, Catch::Contains("so:PATH.so"));
}

TEST_CASE("so: the reference answers an unknown connection or R_Key with not_found, in every operation") {
    auto d = dut::make_so(*dut::parse_so_options(k_reference + ",isolate=none"));
    REQUIRE(d.ok());
    sim::scheduler s;
    REQUIRE((*d)->start(s, (*d)->address(), 1, [](core::bytes_view, core::nanos) {}).ok());
    const core::byte_buffer data(16, 1);
    for (const auto& st : {(*d)->post_recv(99, 1, 1, 0, 16, 1), (*d)->post_write(99, 0, data, 0, 1, 2, std::nullopt),
                           (*d)->post_send(99, 0, 1, data, 3, std::nullopt), (*d)->close(99)}) {
        REQUIRE_FALSE(st.ok());
        CHECK_THAT(st.err().message, Catch::Contains("not_found: unknown connection 99"));
    }
    CHECK_THAT((*d)->read_mem(4242, 0, 1).err().message, Catch::Contains("not_found: unknown R_Key 4242"));
}

TEST_CASE("so: a library that cannot be used is refused before the run, saying why") {
  for (const std::string iso : {",isolate=process", ",isolate=none"}) {
    INFO(iso);
    CHECK_THAT(run::parse_dut("so:/nonexistent/libx.so" + iso).err().message, Catch::Contains("cannot load '/nonexistent/libx.so'"));
    const auto v2 = run::parse_dut("so:" + std::string(MRCT_TOY_DUT_V2) + iso);
    REQUIRE_FALSE(v2.ok());
    CHECK_THAT(v2.err().message, Catch::Contains("built against mrct_dut.h 2.0; this mrct speaks 1.0"));
    const auto missing = run::parse_dut("so:" + std::string(MRCT_TOY_DUT_MISSING) + iso);
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.err().message, Catch::Contains("lacks 1 symbol of the DUT ABI: mrct_dut_poll"));
    // Not a shared library at all.
    const auto junk = std::filesystem::path(MRCT_TEST_TMP) / "not_a_library.so";
    std::ofstream(junk) << "hello";
    CHECK_THAT(run::parse_dut("so:" + junk.string() + iso).err().message, Catch::Contains("cannot load"));
    // The library's create refuses an option: its own words, made printable.
    CHECK_THAT(run::parse_dut("so:" + k_toy + iso + ",speed=11").err().message,
               Catch::Contains("mrct_dut_create refused: unknown option"));
  }
    CHECK_THAT(run::parse_dut("so:" + k_toy + ",isolate=maybe").err().message, Catch::Contains("isolate= expects process or none"));
    CHECK_THAT(run::parse_dut("so:" + k_toy + ",call_limit=0").err().message, Catch::Contains("call_limit= expects a duration"));
    // A library whose loading crashes crashes only its host process.
    const auto boom = run::parse_dut("so:" + std::string(MRCT_TOY_DUT_CRASH_ON_LOAD));
    REQUIRE_FALSE(boom.ok());
    CHECK_THAT(boom.err().message, Catch::Matches(".*" + k_crashed + " while loading it"));
    // Isolation needs its host program.
    setenv("MRCT_DUT_HOST", "/nonexistent/mrct-dut-host", 1);
    CHECK_THAT(run::parse_dut("so:" + k_reference + ",bug=close-early").err().message,
               Catch::Contains("cannot start the DUT host program '/nonexistent/mrct-dut-host'"));
    setenv("MRCT_DUT_HOST", MRCT_DUT_HOST_PATH, 1);
}

TEST_CASE("so: a well-behaved toy runs: frames out after the call, completions, counters, memory") {
  for (const std::string iso : {",isolate=process", ",isolate=none"}) {
    INFO(iso);
    toy t("ok", iso);
    const core::byte_buffer f(60, 0x5a);
    t.d->receive(f);
    REQUIRE(t.sent.size() == 1);  // the echo, delivered after the call returned
    CHECK(t.sent[0] == f);
    REQUIRE(t.d->post_write(1, 0, f, 0x1000, 7, 42, std::nullopt).ok());
    auto wcs = t.d->poll();
    REQUIRE(wcs.size() == 1);
    CHECK(wcs[0].wr_id == 42);
    CHECK(t.d->counters().at("frames_in") == 1);
    CHECK(t.d->register_mr(4096) == 7);
    CHECK(t.d->mr_va(7) == 0x1000);
    CHECK((*t.d->read_mem(7, 0, 4))[0] == 0xab);
    // A refusal is the operation's error, not a fault: the case decides.
    auto st = t.d->post_write(9, 0, f, 0x1000, 7, 43, std::nullopt);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("mrct_dut_post_write: not_found: unknown connection 9"));
    CHECK(t.d->fault().empty());
    CHECK_THAT(t.d->read_mem(8, 0, 4).err().message, Catch::Contains("not_found: unknown R_Key 8"));
  }
}

// Isolated, the child polls after each call given a time and sends the
// completions with the answer: the engine's polls (every 50 us of virtual
// time in a case) are answered without a round trip, and hand over the
// same completions, in order, as polling the library itself.
TEST_CASE("so: isolated, the engine's polls are answered from what the child polled after each call") {
  for (const std::string iso : {",isolate=process", ",isolate=none"}) {
    INFO(iso);
    const bool isolated = iso == ",isolate=process";
    toy t("ok", iso);
    const core::byte_buffer f(60, 0x5a);
    for (std::uint64_t wr = 100; wr < 170; ++wr) REQUIRE(t.d->post_write(1, 0, f, 0x1000, 7, wr, std::nullopt).ok());
    std::vector<std::uint64_t> got;
    for (int i = 0; i < 6; ++i)
        for (const auto& wc : t.d->poll()) got.push_back(wc.wr_id);
    REQUIRE(got.size() == 70);  // every completion, in order
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 100 + i);
    // In-process the library saw the engine's polls: 7 (the first filled
    // its 64 places, so it asked again at once). Isolated: one after each of
    // the 70 posts, and one of the engine's, the first that had room left:
    // the start and configuration before the posts had no poll after them.
    CHECK(t.d->counters().at("polls") == (isolated ? 71u : 7u));
    CHECK(t.d->poll().empty());
    CHECK(t.d->counters().at("polls") == (isolated ? 71u : 8u));  // nothing called since: not asked again
    // A call given no time (configure) may change the library: the next
    // poll reaches it.
    REQUIRE(t.d->configure({{"mtu", "4096"}}).ok());
    CHECK(t.d->poll().empty());
    CHECK(t.d->counters().at("polls") == (isolated ? 72u : 9u));

    // A completion later than the poll that gave it is a breach, also when
    // the engine's own poll comes later than that completion: isolated, it
    // is held to the time of the call the child polled after.
    toy future("future_completion", iso);
    REQUIRE(future.d->post_write(1, 0, f, 0, 7, 1, std::nullopt).ok());  // at 0 ns
    future.s.advance_to(core::nanos{50'000});
    (void)future.d->poll();
    CHECK_THAT(future.d->fault(), Catch::Contains(isolated ? "mrct_dut_poll gave a completion at 1000 ns, outside 0..0 ns (now)"
                                                           : "mrct_dut_poll gave a completion at 51000 ns, outside 0..50000 ns (now)"));
  }
}

TEST_CASE("so: the engine follows the library's next time") {
  for (const std::string iso : {",isolate=process", ",isolate=none"}) {
    INFO(iso);
    toy t("tick", iso);
    t.d->listen();  // a call at 0: the toy asks to run again 1 us later
    t.run_until(core::nanos{10'500});
    CHECK(t.s.now() == core::nanos{10'000});  // woke at 1, 2, ... 10 us
    CHECK(t.s.size() == 1);                   // and is due at 11 us
  }
}

TEST_CASE("so: each breach of the ABI is a fault naming the function and what was wrong") {
  for (const std::string iso : {",isolate=process", ",isolate=none"}) {
    INFO(iso);
    const core::byte_buffer f(60, 0x5a);
    auto fault_of = [&](const std::string& mode, auto&& act) {
        toy t(mode, iso);
        act(t);
        return t.d->fault();
    };
    CHECK_THAT(fault_of("bad_status", [&](toy& t) { (void)t.d->post_write(1, 0, f, 0, 7, 1, std::nullopt); }),
               Catch::Contains("mrct_dut_post_write returned 42, not a status of the ABI"));
    // An internal error carries the library's words, with bytes that are not text escaped.
    const auto internal = fault_of("internal", [&](toy& t) { (void)t.d->post_send(1, 0, 0, f, 1, std::nullopt); });
    CHECK_THAT(internal, Catch::Contains("mrct_dut_post_send failed (internal): the model fell over \\xff\\xfe in its ECC block"));
    CHECK_THAT(fault_of("big_frame", [&](toy& t) { t.d->receive(f); }),
               Catch::Contains("mrct_dut_receive transmitted a frame of 16484 bytes (at most 16384)"));
    CHECK_THAT(fault_of("flood", [&](toy& t) { t.d->receive(f); }),
               Catch::Contains("mrct_dut_receive transmitted more than 65536 frames in one call"));
    CHECK_THAT(fault_of("never_yields", [&](toy& t) { t.d->listen(); t.run_until(core::nanos{1}); }),
               Catch::Contains("mrct_dut_advance asked to run at 0 ns more than 65536 times (a DUT that never yields)"));
    CHECK_THAT(fault_of("past_time", [&](toy& t) { t.d->listen(); }), Catch::Contains("mrct_dut_next_time returned -5 ns"));
    CHECK_THAT(fault_of("future_completion", [&](toy& t) { (void)t.d->post_write(1, 0, f, 0, 7, 1, std::nullopt); (void)t.d->poll(); }),
               Catch::Contains("mrct_dut_poll gave a completion at 1000 ns, outside 0..0 ns (now)"));
    CHECK_THAT(fault_of("bad_kind", [&](toy& t) { (void)t.d->post_write(1, 0, f, 0, 7, 1, std::nullopt); (void)t.d->poll(); }),
               Catch::Contains("mrct_dut_poll gave a completion of kind 9"));
    CHECK_THAT(fault_of("poll_overflow", [&](toy& t) { (void)t.d->poll(); }),
               Catch::Contains("mrct_dut_poll wrote 65 completions into room for 64"));
    CHECK_THAT(fault_of("unterminated_counter", [&](toy& t) { (void)t.d->counters(); }),
               Catch::Contains("mrct_dut_counters a counter name not NUL-terminated"));
    CHECK_THAT(fault_of("send_in_status", [&](toy& t) { (void)t.d->established(1); }),
               Catch::Contains("transmit was called from a function that takes no time"));
    // After a fault the library is not called again: no frame goes out.
    toy t("big_frame", iso);
    t.d->receive(f);
    REQUIRE_FALSE(t.d->fault().empty());
    t.d->receive(f);
    CHECK(t.sent.empty());
    CHECK(t.d->poll().empty());
  }
}

TEST_CASE("so: isolated, a library that crashes, exits or hangs ends its case, not the engine") {
    const core::byte_buffer f(60, 0x5a);
    {
        toy t("crash");
        t.d->receive(f);
        CHECK_THAT(t.d->fault(), Catch::Matches("the DUT library's process " + k_crashed + " in mrct_dut_receive"));
        CHECK_FALSE(t.d->post_write(1, 0, f, 0, 7, 1, std::nullopt).ok());  // and stays down
    }
    {
        toy t("exit");
        CHECK_FALSE(t.d->post_write(1, 0, f, 0, 7, 1, std::nullopt).ok());
        CHECK_THAT(t.d->fault(), Catch::Contains("the DUT library's process exited with status 3 in mrct_dut_post_write"));
    }
    {
        toy t("hang", ",call_limit=200ms");
        t.d->receive(f);
        CHECK_THAT(t.d->fault(), Catch::Contains("the DUT library did not return from mrct_dut_receive within 200 ms (call_limit); "
                                                 "its process was killed"));
    }
    // The whole case: error with the reason; the next case gets a new process.
    auto s = load(k_plan);
    run::run_options o;
    o.filters = {"RNR-1", "LOSS-1"};
    auto r = run::run_suite(s, *run::parse_dut("so:" + k_toy + ",mode=crash"), o);
    REQUIRE(r.size() == 2);
    for (const auto& x : r) {
        CHECK(x.v == verdict::error);
        CHECK_THAT(x.reason, Catch::Matches(".*" + k_crashed + ".*"));
    }
}

TEST_CASE("so: a library refusing a parameter refuses the case's configuration, in its words") {
    auto o = dut::parse_so_options(k_toy + ",mode=refuse_config");
    REQUIRE(o.ok());
    auto d = dut::make_so(*o);
    REQUIRE(d.ok());
    auto st = (*d)->configure({{"rto_min", "1us"}});
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("mrct_dut_configure: invalid_param: no parameter 'rto_min' here"));
    // A frame before start has nowhere to go: a breach, not a crash.
    auto early = dut::make_so(*dut::parse_so_options(k_toy + ",mode=send_in_configure"));
    REQUIRE(early.ok());
    (void)(*early)->configure({{"mtu", "4096"}});
    CHECK_THAT((*early)->fault(), Catch::Contains("mrct_dut_configure transmitted a frame before mrct_dut_start"));
}

TEST_CASE("so: a whole case against a library that errs ends as error, with reports") {
    auto s = load(k_plan);
    run::run_options o;
    o.filters = {"LOSS-1"};
    auto r = run::run_suite(s, *run::parse_dut("so:" + k_toy + ",isolate=none,mode=bad_status"), o);
    REQUIRE(r.size() == 1);
    CHECK(r[0].v == verdict::error);
    CHECK_THAT(r[0].reason, Catch::Contains("DUT: the DUT library mrct_dut_connect returned 42, not a status of the ABI"));
}
