// Matching recorded frames on decoded fields (plan triggers, step filters,
// the frame_count assertion).
#include "trace/match.h"

#include "wire/ctrl.h"

namespace mrct::trace {

using namespace wire;

namespace {

const std::vector<std::string> k_match_keys = {"opcode", "path",     "ppsn",    "tag",        "stream",        "seq",
                                               "offset", "retx",     "som",     "eom",        "ece",           "ctrl",
                                               "nak_code", "attempt", "rnr_resend", "version_major", "version_minor"};

std::optional<std::uint8_t> opcode_by_name(const std::string& s) {
    static const std::pair<const char*, std::uint8_t> k[] = {{"WRITE", 0xC0}, {"WRITE_IMM", 0xC1}, {"SEND", 0xC2},
                                                             {"SEND_IMM", 0xC3}, {"ACK", 0xD0}, {"NAK", 0xD1},
                                                             {"RNR", 0xD2}, {"CTRL", 0xD3}};
    for (auto [n, v] : k)
        if (s == n) return v;
    if (s == "DATA") return 0;  // any data opcode
    try {
        return static_cast<std::uint8_t>(std::stoul(s, nullptr, 0));
    } catch (...) {
        return std::nullopt;
    }
}

std::optional<std::uint8_t> ctrl_by_name(const std::string& s) {
    static const char* k[] = {"", "CONNECT", "ACCEPT", "REJECT", "CLOSE", "CLOSE_ACK", "PROBE", "PROBE_REPLY",
                              "RNR_QUERY", "RNR_SYNC", "PATH_RESET", "PATH_RESET_ACK"};
    for (std::uint8_t i = 1; i < 12; ++i)
        if (s == k[i]) return i;
    return std::nullopt;
}

}  // namespace

const std::vector<std::string>& match_keys() { return k_match_keys; }

core::status check_match(const field_map& match) {
    for (const auto& [k, v] : match) {
        bool known = false;
        for (const auto& m : k_match_keys) known |= m == k;
        if (!known) {
            std::string all;
            for (const auto& m : k_match_keys) all += (all.empty() ? "" : ", ") + m;
            return core::error{"unknown match field '" + k + "' (expected one of: " + all + ")"};
        }
        if (k == "opcode" && !opcode_by_name(v))
            return core::error{"unknown opcode '" + v + "' (WRITE, WRITE_IMM, SEND, SEND_IMM, DATA, ACK, NAK, RNR, CTRL)"};
        if (k == "ctrl" && !ctrl_by_name(v))
            return core::error{"unknown CTRL type '" + v + "'"};
    }
    return core::ok_status();
}

bool matches(const field_map& match, const record& r) {
    if (!r.ok()) return false;
    const auto& f = r.f();
    for (const auto& kv : match) {
        const std::string& k = kv.first;
        const std::string& v = kv.second;  // not a structured binding: clang 14 cannot capture those in lambdas
        auto num = [&] { return std::stoull(v, nullptr, 0); };
        auto flag = [&](bool b) { return (v == "true") == b; };
        if (k == "opcode") {
            auto op = opcode_by_name(v);
            if (*op == 0 ? !is_data_opcode(f.bth.opcode) : f.bth.opcode != *op) return false;
        } else if (k == "path") {
            if (r.path_id() < 0 || static_cast<unsigned long long>(r.path_id()) != num()) return false;
        } else if (k == "ppsn") {
            const std::uint32_t x = f.has(has_nakh) ? f.nakh.nak_ppsn.ppsn() : f.has(has_rnrh) ? f.rnrh.ppsn.ppsn() : f.bth.psn;
            if (x != num()) return false;
        } else if (k == "tag" || k == "stream" || k == "seq" || k == "offset" || k == "attempt") {
            if (!f.has(has_mrh) && !f.has(has_rnrh) && !f.has(has_nakh)) return false;
            std::uint64_t x = 0;
            if (f.has(has_mrh))
                x = k == "tag" ? f.mrh.tag : k == "stream" ? f.mrh.stream_id : k == "seq" ? f.mrh.stream_seq
                    : k == "offset" ? f.mrh.msg_offset : f.mrh.attempt;
            else if (f.has(has_rnrh))
                x = k == "tag" ? f.rnrh.tag : k == "stream" ? f.rnrh.stream_id : k == "seq" ? f.rnrh.stream_seq
                    : k == "attempt" ? f.rnrh.attempt : ~0ull;
            else
                x = k == "tag" ? f.nakh.tag : k == "stream" ? f.nakh.stream_id : k == "seq" ? f.nakh.stream_seq : ~0ull;
            if (x != num()) return false;
        } else if (k == "retx" || k == "som" || k == "eom" || k == "rnr_resend") {
            if (!f.has(has_mrh)) return false;
            const std::uint8_t bit = k == "retx" ? k_flag_retx : k == "som" ? k_flag_som : k == "eom" ? k_flag_eom : k_flag_rnr_resend;
            if (!flag(f.mrh.flags & bit)) return false;
        } else if (k == "ece") {
            if (!f.has(has_ackh) || !flag(f.ackh.ece())) return false;
        } else if (k == "ctrl") {
            if (!f.has(has_ctrlh) || f.ctrlh.type != *ctrl_by_name(v)) return false;
        } else if (k == "nak_code") {
            if (!f.has(has_nakh) || f.nakh.code != num()) return false;
        } else if (k == "version_major" || k == "version_minor") {
            // A CTRL's VERSION TLV (CONNECT, ACCEPT); frames without one do not match.
            if (!f.has(has_ctrlh)) return false;
            const auto t = read_ctrl_tlvs(f.tlvs);
            const auto x = k == "version_major" ? t.version_major : t.version_minor;
            if (!x || *x != num()) return false;
        }
    }
    return true;
}

}  // namespace mrct::trace
