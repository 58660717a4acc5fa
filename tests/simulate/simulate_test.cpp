#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <functional>

#include "simulate/simulate.h"

using namespace mrct;

namespace {
nlohmann::ordered_json stable(nlohmann::ordered_json j) {
    j.erase("wall_s");  // wall-clock fields differ run to run
    j.erase("events_per_s");
    j.erase("frames_per_s");
    return j;
}
// 8 senders x 4 MiB through the receiver's own 200 Gb/s link, grants at 200 Gb/s.
simulate::options incast_8x200() {
    simulate::options o;
    o.senders = 8;
    o.messages = 4;
    o.receiver_link = "200Gbps";
    o.inbound_rate_bps = 200e9;
    return o;
}
}  // namespace

TEST_CASE("a small transfer completes with sane metrics") {
    simulate::options o;
    o.messages = 4;
    o.message_bytes = 256 * 1024;
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    const auto& j = r->json;
    CHECK(j["completed"] == 4);
    CHECK(j["errors"] == 0);
    CHECK(j["goodput_gbps"].get<double>() > 50);
    CHECK(j["goodput_gbps"].get<double>() < 400 * 1.05);  // never above the grant
    CHECK(j["sender0_paths"].size() == 8);
    CHECK(j["events"].get<std::uint64_t>() > 100);
    CHECK(j["frames"].get<std::uint64_t>() >= 64);  // 1 MiB is 256 data packets plus ACKs
}

TEST_CASE("same seed, same results (apart from wall-clock fields)") {
    simulate::options o;
    o.messages = 8;
    o.loss = 0.02;
    o.senders = 3;
    auto a = simulate::run(o), b = simulate::run(o);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(stable(a->json) == stable(b->json));
    o.seed = 2;
    auto c = simulate::run(o);
    CHECK(stable(c->json) != stable(a->json));
}

TEST_CASE("SEND with pre-posted receives, several streams, and a sender bug profile") {
    simulate::options o;
    o.use_send = true;
    o.streams = 4;
    o.messages = 8;
    o.message_bytes = 64 * 1024;
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    o.sender_bug = "no-such-bug";
    auto bad = simulate::run(o);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.err().message.find("unknown bug profile") != std::string::npos);
    o.sender_bug = "";  // not taken as `none`
    auto empty = simulate::run(o);
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.err().message == "sender: bug profile: empty name (give `none` for the reference behaviour)");
    o.sender_bug = "none";
    o.receiver_bug = "";
    REQUIRE_FALSE(simulate::run(o).ok());
}

TEST_CASE("YAML options: values, unknown keys with line numbers") {
    const std::string good = std::string(MRCT_TEST_TMP) + "/sim_good.yaml";
    std::ofstream(good) << "paths: 4\nsenders: 2\nloss: 0.01\npath_delay: {1: 50us}\nsender_bug: shared-rto\nop: send\npayload: symbolic\n";
    auto o = simulate::options_from_yaml(good);
    REQUIRE(o.ok());
    CHECK(o->paths == 4);
    CHECK(o->senders == 2);
    CHECK(o->loss == 0.01);
    CHECK(o->path_delay.at(1) == "50us");
    CHECK(o->sender_bug == "shared-rto");
    CHECK(o->use_send);
    CHECK(o->symbolic_payload);
    const std::string wrong = std::string(MRCT_TEST_TMP) + "/sim_payload.yaml";
    std::ofstream(wrong) << "paths: 4\npayload: zeros\n";
    auto w = simulate::options_from_yaml(wrong);
    REQUIRE_FALSE(w.ok());
    CHECK(w.err().message.find("sim_payload.yaml:2:10: payload must be real or symbolic") != std::string::npos);
    const std::string bad = std::string(MRCT_TEST_TMP) + "/sim_bad.yaml";
    std::ofstream(bad) << "paths: 4\nlos: 0.01\n";
    auto e = simulate::options_from_yaml(bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.err().message.find("sim_bad.yaml:2:1: unknown key 'los'") != std::string::npos);
}

TEST_CASE("YAML options: a hostile configuration is refused where it goes wrong, before it is built") {
    auto err = [](const std::string& name, const std::string& text) {
        const std::string p = std::string(MRCT_TEST_TMP) + "/" + name;
        std::ofstream(p) << text;
        auto o = simulate::options_from_yaml(p);
        REQUIRE_FALSE(o.ok());
        return o.err().message;
    };
    std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'h'; ++c)
        laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
                  char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
                  char(c - 1) + ", *" + char(c - 1) + "]\n";
    CHECK_THAT(err("sim_laughs.yaml", laughs), Catch::Contains("sim_laughs.yaml:5:") && Catch::Contains("holds more than 100000 YAML nodes"));
    CHECK_THAT(err("sim_deep.yaml", "impair: " + std::string(100, '[') + std::string(100, ']') + "\n"),
               Catch::Contains("sim_deep.yaml:1:") && Catch::Contains("nested more than 32 levels deep"));
    CHECK_THAT(err("sim_dup.yaml", "senders: 2\npaths: 4\nsenders: 64\n"), Catch::Contains("sim_dup.yaml:3:1: duplicate key 'senders'"));
    CHECK_THAT(err("sim_two.yaml", "senders: 2\n---\nsenders: 3\n"), Catch::Contains("sim_two.yaml:2:1: a second YAML document"));
    CHECK_THAT(err("sim_big.yaml", std::string(2u << 20, '#')), Catch::Contains("holds more than 1048576 bytes"));
    CHECK_THAT(err("sim_list.yaml", "- 1\n- 2\n"), Catch::Contains("sim_list.yaml:1:1: a simulate configuration is a map"));
    auto dev = simulate::options_from_yaml("/dev/zero");
    REQUIRE_FALSE(dev.ok());
    CHECK_THAT(dev.err().message, Catch::Contains("not a regular file"));
}

TEST_CASE("incast through a shared receiver link: marked, not dropped, at most the link rate") {
    simulate::options o = incast_8x200();
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    const auto& j = r->json;
    CHECK(j["receiver_link"]["marked"].get<std::uint64_t>() > 0);
    CHECK(j["receiver_link"]["dropped"] == 0);
    CHECK(j["ece_received"] == j["receiver_link"]["marked"]);  // every mark echoed by ECE
    CHECK(j["goodput_gbps"].get<double>() <= 200 * 1.02);
    CHECK(j["goodput_gbps"].get<double>() > 150);
}

TEST_CASE("closed loop: at most `outstanding` messages in flight per sender") {
    simulate::options o;
    o.messages = 12;
    o.outstanding = 2;
    o.message_bytes = 64 * 1024;
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    CHECK(r->json["completed"] == 12);
    // Closed loop takes longer than posting everything at once.
    o.outstanding = 0;
    auto open = simulate::run(o);
    CHECK(r->json["completion_us"]["max"].get<double>() > open->json["completion_us"]["max"].get<double>());
}

TEST_CASE("a CONNECT lost to --loss is sent again; the run still connects every sender") {
    // Seed 1: with 1 % loss on 64 senders, sender 19's first CONNECT is
    // dropped (this run once failed with "sender 19 did not connect").
    simulate::options o;
    o.senders = 64;
    o.messages = 1;
    o.message_bytes = 16 * 1024;
    o.loss = 0.01;
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    CHECK(r->json["completed"] == 64);
}

namespace {
simulate::impairment imp(const std::string& text) {
    auto i = simulate::parse_impairment(text);
    REQUIRE(i.ok());
    return *i;
}
}  // namespace

TEST_CASE("impair: corruption on one path is dropped by the receiver's ICRC check and repaired") {
    simulate::options o;
    o.messages = 8;
    o.message_bytes = 256 * 1024;
    o.impair.push_back(imp("corrupt:p=0.05,path=2"));
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    const auto& j = r->json;
    REQUIRE(j["impair"].size() == 1);
    const auto& s = j["impair"][0];
    CHECK(s["kind"] == "corrupt");
    CHECK(s["path"] == 2);
    CHECK(s["stages"] == 1);  // one path, one sender, one direction
    const auto corrupted = s["corrupted"].get<std::uint64_t>();
    const auto bad_icrc = j["receiver"]["drops_bad_icrc"].get<std::uint64_t>();
    CHECK(corrupted > 0);
    CHECK(bad_icrc > 0);
    CHECK(bad_icrc <= corrupted);  // a flip in a masked BTH bit is not an ICRC error
    CHECK(j["receiver"]["drops"].get<std::uint64_t>() >= bad_icrc);
    CHECK(j["retransmissions"]["fast"].get<std::uint64_t>() + j["retransmissions"]["rto"].get<std::uint64_t>() > 0);
    // Only path 2's frames went through it: the sender's path 2 carried them all.
    CHECK(s["in"] == j["sender0_paths"][2]["packets"].get<std::uint64_t>());
    // Without the impairment, nothing is dropped.
    o.impair.clear();
    auto clean = simulate::run(o);
    REQUIRE(clean.ok());
    CHECK(clean->json["receiver"]["drops"] == 0);
    CHECK_FALSE(clean->json.contains("impair"));
}

TEST_CASE("impair: path, sender and direction select where the stages go") {
    simulate::options o;
    o.senders = 2;
    o.messages = 2;
    o.message_bytes = 64 * 1024;
    o.impair.push_back(imp("duplicate:p=1,path=0"));                // every sender, toward the receiver
    o.impair.push_back(imp("delay:delay=1us,path=3,sender=1,dir=both"));
    o.impair.push_back(imp("ecn_mark:p=0,dir=to_sender"));         // every path, ACK direction
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->all_completed);
    const auto& im = r->json["impair"];
    REQUIRE(im.size() == 3);
    CHECK(im[0]["stages"] == 2);
    CHECK(im[0]["sender"] == "all");
    CHECK(im[0]["duplicated"] == im[0]["in"]);  // p = 1: every frame twice
    CHECK(im[0]["out"].get<std::uint64_t>() == 2 * im[0]["in"].get<std::uint64_t>());
    CHECK(r->json["receiver"]["duplicates"].get<std::uint64_t>() > 0);
    CHECK(im[1]["stages"] == 2);  // sender 1's path 3, both directions
    CHECK(im[1]["delayed"] == im[1]["in"]);
    CHECK(im[1]["in"].get<std::uint64_t>() > 0);
    CHECK(im[2]["stages"] == 16);  // 2 senders x 8 paths, one direction
    CHECK(im[2]["dir"] == "to_sender");
    // The ACK direction: the receiver's ACKs (and its CTRL answers) pass through it.
    const auto acks = r->json["receiver"]["acks_sent"].get<std::uint64_t>();
    CHECK(im[2]["in"].get<std::uint64_t>() >= acks);
    CHECK(im[2]["in"].get<std::uint64_t>() <= acks + 8);
    CHECK(im[2]["marked"] == 0);
}

TEST_CASE("impair: same seed, same run, jitter and reordering included") {
    simulate::options o;
    o.messages = 4;
    o.message_bytes = 256 * 1024;
    o.impair.push_back(imp("delay:delay=0us,jitter=pareto,jitter_param=1us,keep_order=false,dir=both"));
    o.impair.push_back(imp("loss:model=gilbert_elliott,p_gb=0.1,p_bg=0.5,path=1"));
    auto a = simulate::run(o);
    auto b = simulate::run(o);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->all_completed);
    CHECK(stable(a->json) == stable(b->json));
    CHECK(a->json["impair"][1]["dropped"].get<std::uint64_t>() > 0);
    o.seed = 2;
    auto c = simulate::run(o);
    REQUIRE(c.ok());
    CHECK(stable(c->json) != stable(a->json));
}

TEST_CASE("impair: bad input is refused with where it came from") {
    auto err = [](const std::string& text) {
        auto i = simulate::parse_impairment(text);
        REQUIRE_FALSE(i.ok());
        return i.err().message;
    };
    CHECK(err("bogus").find("unknown stage 'bogus'") != std::string::npos);
    CHECK(err("corrupt:q=1").find("unknown parameter 'q'") != std::string::npos);
    CHECK(err("corrupt:p=2").find("--impair corrupt:p=2") == 0);  // out of the stage's range
    CHECK(err("loss:p").find("expected KIND:KEY=VALUE") != std::string::npos);
    CHECK(err("loss:p=0.1,dir=up").find("dir must be to_receiver, to_sender or both") != std::string::npos);
    CHECK(err("loss:p=0.1,path=x").find("path must be a number or 'all'") != std::string::npos);
    // Ranges that depend on the run: checked when it starts.
    simulate::options o;
    o.impair.push_back(imp("loss:p=0.1,path=8"));
    auto r = simulate::run(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().message.find("path 8 is out of range (paths 0..7)") != std::string::npos);
    o.impair = {imp("loss:p=0.1,sender=1")};
    r = simulate::run(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().message.find("sender 1 is out of range (senders 0..0)") != std::string::npos);
}

TEST_CASE("impair in YAML: the plan's syntax; errors carry file:line:column") {
    const std::string good = std::string(MRCT_TEST_TMP) + "/sim_impair.yaml";
    std::ofstream(good) << "paths: 4\nimpair:\n  - corrupt: {p: 0.01, path: 2}\n"
                           "  - loss: {model: ppsn_list, ppsns: [1, 2, 3], dir: both}\n  - duplicate:\n";
    auto o = simulate::options_from_yaml(good);
    REQUIRE(o.ok());
    REQUIRE(o->impair.size() == 3);
    CHECK(o->impair[0].kind == "corrupt");
    CHECK(o->impair[0].path == 2u);
    CHECK(o->impair[0].params.at("p") == "0.01");
    CHECK(o->impair[1].params.at("ppsns") == "1,2,3");
    CHECK(o->impair[1].dir == simulate::impairment::direction::both);
    CHECK_FALSE(o->impair[2].path.has_value());
    const std::string bad = std::string(MRCT_TEST_TMP) + "/sim_impair_bad.yaml";
    std::ofstream(bad) << "paths: 4\nimpair:\n  - corrupt: {p: 0.01}\n  - jitter: {p: 1}\n";
    auto e = simulate::options_from_yaml(bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.err().message.find("sim_impair_bad.yaml:4:5: unknown stage 'jitter'") != std::string::npos);
    std::ofstream(bad) << "impair: {corrupt: {p: 1}}\n";
    e = simulate::options_from_yaml(bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.err().message.find("sim_impair_bad.yaml:1:9: impair: expected a list") != std::string::npos);
}

TEST_CASE("per-sender goodput: fair shares in an incast give Jain's index ~1; a lossy sender falls behind") {
    simulate::options o = incast_8x200();
    auto fair = simulate::run(o);
    REQUIRE(fair.ok());
    const auto& f = fair->json["sender_goodput_gbps"];
    CHECK(f["jain"].get<double>() > 0.999);
    CHECK(f["min"].get<double>() > 0.98 * f["max"].get<double>());
    // Eight equal shares of what the receiver took in.
    CHECK(f["p50"].get<double>() * 8 == Approx(fair->json["goodput_gbps"].get<double>()).epsilon(0.05));
    o.impair.push_back(imp("loss:p=0.2,sender=0"));
    auto lossy = simulate::run(o);
    REQUIRE(lossy.ok());
    CHECK(lossy->all_completed);
    const auto& l = lossy->json["sender_goodput_gbps"];
    CHECK(l["min"].get<double>() < 0.9 * l["p50"].get<double>());
    CHECK(l["jain"].get<double>() < f["jain"].get<double>());
}

TEST_CASE("bad options are refused before the run, saying which and why") {
    auto refused = [](const std::function<void(simulate::options&)>& set) {
        simulate::options o;
        set(o);
        auto r = simulate::run(o);
        REQUIRE_FALSE(r.ok());
        return r.err().message;
    };
    // Each of these once ran: an MTU outside 256..4096 waited out the 10 s
    // time limit for a connection that could not be made; a path that does not
    // exist or a delay that is not one was ignored; no messages "passed".
    CHECK_THAT(refused([](auto& o) { o.mtu = 100; }), Catch::Contains("mtu: parameter 'mtu' = '100': expected an integer in 256..4096"));
    CHECK_THAT(refused([](auto& o) { o.mtu = 9000; }), Catch::Contains("256..4096"));
    CHECK_THAT(refused([](auto& o) { o.path_delay[8] = "10us"; }), Catch::Contains("path_delay: path 8 is out of range (paths 0..7)"));
    CHECK_THAT(refused([](auto& o) { o.path_delay[1] = "soon"; }), Catch::Contains("path_delay: 'soon' is not a duration"));
    CHECK_THAT(refused([](auto& o) { o.fail_path[9] = "1ms"; }), Catch::Contains("fail_path: path 9 is out of range"));
    CHECK_THAT(refused([](auto& o) { o.messages = 0; }), Catch::Contains("messages must be >= 1"));
    CHECK_THAT(refused([](auto& o) { o.inbound_rate_bps = 0; }), Catch::Contains("inbound rate must be at least 0.1 Gb/s"));
    simulate::options ok;  // the edges pass
    ok.mtu = 256;
    ok.messages = 1;
    ok.message_bytes = 4096;
    ok.path_delay[7] = "1us";
    CHECK(simulate::run(ok).ok());
}

// Issue 21 item 3: a symbolic payload gives the metrics of real bytes for the
// same seed: losses, queues, grants, corruption (flips in the described
// bytes reach the ICRC), duplicates, SENDs on several streams, messages
// whose last packet is not a multiple of 4 bytes (sent as real bytes), an
// MTU that is not one either, and a receiver that accepts bad ICRCs.
TEST_CASE("payload symbolic: the same metrics as real bytes, corruption included") {
    struct variant {
        const char* name;
        std::function<void(simulate::options&)> set;
    };
    const std::vector<variant> variants = {
        {"incast through the receiver's link", [](simulate::options& o) { o = incast_8x200(); }},
        {"corruption both ways, 3 bits", [](simulate::options& o) {
             o.senders = 3;
             o.messages = 5;
             o.impair.push_back(imp("corrupt:p=0.05,bits=3,dir=both"));
         }},
        {"SEND, 3 streams, odd size, loss, duplicates, reordering", [](simulate::options& o) {
             o.senders = 2;
             o.messages = 6;
             o.use_send = true;
             o.streams = 3;
             o.message_bytes = 100003;
             o.loss = 0.01;
             o.impair.push_back(imp("duplicate:p=0.02"));
             o.impair.push_back(imp("reorder:p=0.05"));
         }},
        {"MTU 1001, corruption", [](simulate::options& o) {
             o.senders = 2;
             o.messages = 4;
             o.mtu = 1001;
             o.impair.push_back(imp("corrupt:p=0.02"));
         }},
        {"receiver accepts bad ICRCs", [](simulate::options& o) {
             o.senders = 2;
             o.messages = 4;
             o.receiver_bug = "accept-bad-icrc";
             o.impair.push_back(imp("corrupt:p=0.02"));
         }},
    };
    for (const auto& v : variants) {
        INFO(v.name);
        simulate::options o;
        v.set(o);
        auto real = simulate::run(o);
        o.symbolic_payload = true;
        auto sym = simulate::run(o);
        REQUIRE(real.ok());
        REQUIRE(sym.ok());
        CHECK(real->json["config"]["payload"] == "real");
        CHECK(sym->json["config"]["payload"] == "symbolic");
        auto a = stable(real->json), b = stable(sym->json);
        a["config"].erase("payload");
        b["config"].erase("payload");
        CHECK(a == b);
        CHECK(sym->all_completed);
    }
    // The corruption variant did reach the described bytes: its drops are ICRC drops.
    simulate::options o;
    variants[1].set(o);
    o.symbolic_payload = true;
    auto r = simulate::run(o);
    REQUIRE(r.ok());
    CHECK(r->json["receiver"]["drops_bad_icrc"].get<std::uint64_t>() > 100);
}
