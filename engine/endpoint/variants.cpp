// Conforming variants of the reference endpoint (D153).
#include "endpoint/config.h"

namespace mrct::endpoint {

const std::vector<variant_info>& variant_profiles() {
    static const std::vector<variant_info> k_variants = {
        {variant::ack_each, "ack-each", "MR-SACK-2, §5 ACK interval",
         "the receiver acknowledges every data packet at once (the model asks for an ACK at the latest every 8 packets or 20 us)"},
        {variant::trig_first, "trig-first", "MR-SACK-1, D53",
         "an ACK sent when the ACK interval ends names the first packet of the run it covers (TrigPPSN, source port), not the latest"},
        {variant::ackreq_none, "ackreq-none", "MR-SACK-2",
         "the sender never sets BTH AckReq: its last packets are acknowledged by the receiver's interval"},
        {variant::path_random, "path-random", "MR-PATH-5, D17",
         "a new packet takes a path drawn at random among those with window headroom, whatever their RTT"},
        {variant::rtt_every, "rtt-every", "MR-RTO-3",
         "an RTT sample from every newly acknowledged packet that was sent once, not only from the ACK's TrigPPSN"},
        {variant::grant_under, "grant-under", "MR-GR-3",
         "the receiver grants 92 % of the fair share, rounded up to its 100 Mb/s unit (the clause allows +-10 %)"},
        {variant::ip_fields, "ip-fields", "§2 framing, MR-HDR-4, MR-HDR-6",
         "every frame with DSCP 26, TTL (hop limit) 255, ECT(0) on ACK, NAK, RNR and CTRL frames too and, over IPv6, a "
         "flow label per source port: fields the model leaves to the sender and the ICRC masks"},
        {variant::vlan, "vlan", "§2 framing ([802.1Q])", "every frame 802.1Q-tagged, VID 100, PCP 3"},
        {variant::stream_rr, "stream-rr", "MR-STR-1, MR-STR-2",
         "first transmissions take turns packet by packet among the streams with packets waiting (each stream's in "
         "posting order), not all in posting order"},
        {variant::close_late, "close-late", "MR-CONN-3",
         "the first CLOSE leaves 200 us after everything is acknowledged (the clause says only when it may go)"},
        {variant::ack_first, "ack-first", "MR-RNR-1, MR-RNR-6, §5 NAK outcomes",
         "a packet's ACK, when one is due at once, leaves before the NAK or RNR the packet draws (the reference "
         "sends the NAK or RNR first; RnrCount covers the order)"},
        {variant::grant_over, "grant-over", "MR-GR-3",
         "the receiver grants 108 % of the fair share, rounded down to its 100 Mb/s unit (the clause allows +-10 %)"},
        {variant::wrap_soon, "wrap-soon", "MR-CONN-1, §2 serial numbers",
         "initial PPSNs drawn among the last 256 before the 24-bit wrap (every path wraps early in a case), "
         "connection IDs among the top 256 below the listener's 0xFFFFFF"},
        {variant::ackreq_each, "ackreq-each", "MR-SACK-2",
         "the sender sets BTH AckReq on every data packet: the receiver answers each at once"},
        {variant::reset_next, "reset-next", "MR-PATH-7, D22",
         "a failed path's PATH_RESET restarts it at the path's next PPSN, continuing its sequence (the reference jumps "
         "ahead by 65536 and more)"},
        {variant::nak_psn, "nak-psn", "§2 BTH.PSN, D25",
         "BTH.PSN of a NAK or RNR carries the PPSN it answers (the reference sends 0: the model defines BTH.PSN for "
         "data and ACK only)"},
        {variant::port_reuse, "port-reuse", "MR-PATH-1, MR-PATH-4",
         "a path moved off its port goes back to the port it had before that one when no other path holds it (the "
         "clause asks only that it differ from the previous port and the other paths')"},
        {variant::timer_tick, "timer-tick", "MR-RTO-3, MR-RNR-2, §5 ACK interval",
         "every timer on a 4.096 us grid, as hardware keeps them: the retransmission, RNR, CTRL and PROBE timers fire "
         "at the first tick at or after their time, the ACK interval at the last tick at or before it"},
        {variant::pace_under, "pace-under", "MR-GR-2",
         "the sender paces at 90 % of the latest grant (a grant is a ceiling, the clause bounds the rate from above "
         "only)"},
        {variant::answer_late, "answer-late", "MR-RNR-1, MR-HDR-5, MR-OOO-4, MR-SACK-5, MR-CONN-2/3/4",
         "NAKs and RNRs leave 50 us after the packet that draws them, as from a firmware slow path (the model bounds "
         "when an ACK must leave, not a NAK or an RNR), and an RNR_QUERY's RNR_SYNC after its RNRs; ACKs keep their "
         "time"},
        {variant::fixed_point, "fixed-point", "MR-RTO-3, MR-CC-2",
         "the sender's estimators in fixed point, as hardware keeps them: RTT samples truncated to 1.024 us, alpha "
         "rounded to 1/1024, a cut window rounded down to 1/256 packet (the model gives the formulas over the reals)"},
    };
    return k_variants;
}

core::result<std::uint32_t> variants_by_name(std::string_view names) {
    if (names.empty()) return core::error{"variant: empty name (give `none` for the reference's choices)"};
    if (names == "none") return std::uint32_t{0};
    std::uint32_t set = 0;
    while (!names.empty()) {
        const auto plus = names.find('+');
        const auto one = names.substr(0, plus);
        bool found = false;
        for (const auto& v : variant_profiles())
            if (v.name == one) {
                set |= variant_bit(v.id);
                found = true;
            }
        if (!found) {
            std::string all;
            for (const auto& v : variant_profiles()) all += (all.empty() ? "" : ", ") + std::string(v.name);
            return core::error{"unknown conforming variant '" + std::string(one) + "' (expected one or more of " + all +
                               ", joined by +)"};
        }
        if (plus == std::string_view::npos) break;
        names.remove_prefix(plus + 1);
        if (names.empty()) return core::error{"variant: a trailing '+'"};
    }
    return set;
}

std::uint32_t variants_undoing(bug b) {
    switch (b) {
    case bug::ecn_not_ect: return variant_bit(variant::ip_fields);
    case bug::lazy_ack: return variant_bit(variant::ack_each);
    default: return 0;
    }
}

std::string variants_text(std::uint32_t set) {
    std::string out;
    for (const auto& v : variant_profiles())
        if (set & variant_bit(v.id)) out += (out.empty() ? "" : "+") + std::string(v.name);
    return out.empty() ? "none" : out;
}

}  // namespace mrct::endpoint
