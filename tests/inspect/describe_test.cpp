#include <catch2/catch.hpp>

#include "inspect/describe.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::wire;

namespace {
nlohmann::ordered_json json_of(const std::string& name) {
    for (auto& s : sample_catalog()) {
        if (s.name != name) continue;
        auto bytes = build(s.spec);
        auto d = decode_ethernet(bytes);
        return inspect::to_json({1, 0, bytes.size(), bytes.size()}, d);
    }
    FAIL("no sample " << name);
    return {};
}
}  // namespace

TEST_CASE("JSON carries every header field by its spec-model name") {
    auto j = json_of("write");
    CHECK(j["ok"] == true);
    CHECK(j["eth"]["src"] == "02:00:00:00:00:01");
    CHECK(j["ipv4"]["df"] == true);
    CHECK(j["ipv4"]["ecn"] == 2);
    CHECK(j["udp"]["dport"] == 4791);
    CHECK(j["bth"]["opcode"] == 0xC0);
    CHECK(j["bth"]["opcode_name"] == "WRITE");
    CHECK(j["bth"]["dest_qp"] == 0x123);
    CHECK(j["bth"]["psn"] == 1000);
    CHECK(j["mrh"]["stream_id"] == 7);
    CHECK(j["mrh"]["path_id"] == 3);
    CHECK(j["mrh"]["som"] == true);
    CHECK(j["mrh"]["eom"] == true);
    CHECK(j["reth"]["r_key"] == 0x1234);
    CHECK(j["payload"]["length"] == 64);
    CHECK(j["icrc_ok"] == true);
}

TEST_CASE("JSON for ACK shows the SACK as its 32 wire bytes in hex") {
    auto j = json_of("ack");
    const std::string sack = j["ackh"]["sack"];
    CHECK(sack.size() == 64);
    // bits 3 and 5 -> last byte of word 0 = 0x28
    CHECK(sack.substr(14, 2) == "28");
    CHECK(j["ackh"]["ece"] == true);
    CHECK(j["ackh"]["trig_ppsn"] == 1010);
    CHECK(j["ackh"]["grant_rate"] == 4000);
    CHECK(j["bth"]["psn"] == 1000);
}

TEST_CASE("JSON for CTRL lists decoded TLVs") {
    auto j = json_of("ctrl_connect");
    CHECK(j["ctrlh"]["type_name"] == "CONNECT");
    CHECK(j["ctrlh"]["tlvs"].size() == 5);
    CHECK(j["ctrlh"]["tlvs"][0]["major"] == 1);
    CHECK(j["ctrlh"]["tlvs"][4]["initial_ppsn"].size() == 8);
    CHECK(j["ctrlh"]["tlvs_valid"] == true);
    auto r = json_of("rnr");
    CHECK(r["rnrh"]["timer_code"] == 14);
    CHECK(r["rnrh"]["timer_ns"] == 1280000);
}

TEST_CASE("dropped frames report the reason and the layers decoded so far") {
    auto s = sample_catalog()[0].spec;
    s.ov.icrc = 1;
    auto bytes = build(s);
    auto d = decode_ethernet(bytes);
    auto j = inspect::to_json({1, 0, bytes.size(), bytes.size()}, d);
    CHECK(j["ok"] == false);
    CHECK(j["drop"]["reason"] == "bad_icrc");
    CHECK(j["icrc_ok"] == false);
    auto line = inspect::summary_line({1, 0, bytes.size(), bytes.size()}, 0, d);
    CHECK(line.find("DROP bad_icrc") != std::string::npos);
}

TEST_CASE("summary line names the opcode and key fields") {
    auto s = sample_catalog()[0].spec;
    auto bytes = build(s);
    auto line = inspect::summary_line({3, 1500, bytes.size(), bytes.size()}, 500, decode_ethernet(bytes));
    CHECK(line.find("10.0.0.1 → 10.0.0.2") != std::string::npos);
    CHECK(line.find("WRITE qp=0x000123 psn=1000") != std::string::npos);
    CHECK(line.find("[SOM,EOM]") != std::string::npos);
    CHECK(line.find("0.000001000") != std::string::npos);
    CHECK(line.find("icrc=ok") != std::string::npos);
}
