// The clause table of the spec model (§5), generated from
// ../shared/spec/metaroce-1.2-model.md by hand-run script; docs/clauses.md shows it
// with the cases covering each clause (`mrct docs clauses PLAN`).
#include "run/clauses.h"

namespace mrct::run {

const std::vector<clause>& clauses() {
    static const std::vector<clause> k = {
        {"MR-HDR-1", "MUST", "UDP dport 4791, BTH TVer 0, MRH Ver 1; reserved bits sent as 0 and ignored on receipt."},
        {"MR-HDR-2", "MUST", "ICRC per §2; a packet with a bad ICRC is dropped silently (no ACK, NAK or placement) and counted."},
        {"MR-HDR-3", "MUST", "A reserved opcode, unknown MRH version, or structurally broken packet is dropped silently and counted."},
        {"MR-HDR-4", "MUST", "IP ECN field of data packets is ECT(0) when sent."},
        {"MR-HDR-5", "MUST", "A header mismatch gets NAK 0x0F and nothing of the message is completed."},
        {"MR-HDR-6", "MUST", "IPv4 packets are sent with DF set and Identification 0."},
        {"MR-PATH-1", "MUST", "Active paths of a connection use distinct UDP source ports in 0xC000–0xFFFF; a moved path's new port differs from its previous one and from every other active path's."},
        {"MR-PATH-2", "MUST", "A source-port change on a path increments PathEpoch; the path's PPSN sequence continues."},
        {"MR-PATH-3", "MUST", "The receiver identifies a path by (connection, PathID), never by source port."},
        {"MR-PATH-4", "MUST", "After 2 consecutive RTO expiries on a path, the sender moves that path to a new source port; the resend of the second expiry already uses it, and the count of moves restarts (the 4th expiry moves it again and fails it)."},
        {"MR-PATH-5", "SHOULD", "Packets are sprayed per packet over all paths with window headroom; no path with headroom stays idle while data waits."},
        {"MR-PATH-6", "MUST", "A failed path (see terms) is taken out of use, its unacknowledged packets complete over the other paths, and the connection completes without application action."},
        {"MR-PATH-7", "MUST", "A failed path returns to service only after a PROBE_REPLY (sent from its own port, nonce echoed) and the PATH_RESET_ACK, and restarts as a new path."},
        {"MR-OOO-1", "MUST", "Each WRITE packet is placed at its own RETH.VA whatever the arrival order."},
        {"MR-OOO-2", "MUST", "SEND payload lands at receive(Tag, RecvIdx).addr + MsgOffset with no reorder buffer."},
        {"MR-OOO-3", "MUST", "Duplicate packets are idempotent (including data re-sent on another path with a new PPSN); a completion is raised only once every byte of the message is placed, even when EOM arrives first."},
        {"MR-OOO-4", "MUST", "A WRITE outside the R_Key's bounds gets NAK 0x02; nothing of that packet is placed and the message fails (see NAK outcomes)."},
        {"MR-SACK-1", "MUST", "Every ACK carries CumAck and the path's 256-bit SACK."},
        {"MR-SACK-2", "MUST", "The receiver ACKs immediately on AckReq, on a new gap in a path, or on a CE mark, otherwise within the ACK interval."},
        {"MR-SACK-3", "MUST", "On detecting a loss (see terms), without waiting for an RTO, the sender resends exactly that packet once, on the same PathID with the same PPSN and RETX set."},
        {"MR-SACK-4", "MUST", "Packets whose SACK bits are set are never resent (no go-back-N)."},
        {"MR-SACK-5", "MUST", "A PPSN ≥ CumAck+256 is dropped with NAK 0x0B; a sender never has more than 256 PPSNs outstanding on a path."},
        {"MR-SACK-6", "MUST", "A packet transmitted the retry limit of times without being acknowledged fails its message with an error completion, and the connection goes into error."},
        {"MR-RTO-1", "MUST", "Each path runs its own retransmission timer for its oldest unacknowledged PPSN."},
        {"MR-RTO-2", "MUST", "An ACK, loss or timeout on path A never restarts, cancels or extends path B's timer."},
        {"MR-RTO-3", "MUST", "RTO_p = clamp(SRTT_p + 4·RTTVAR_p, min, max), doubled per expiry; retransmitted packets give no RTT sample."},
        {"MR-RTO-4", "MUST", "An RTO resends that path's oldest PPSN and cuts only that path's window to 1 packet."},
        {"MR-RNR-1", "MUST", "A rejected SEND (see terms) gets one RNR(tag, code, RnrSeq) per Attempt; its packets' PPSNs are still acknowledged on their paths."},
        {"MR-RNR-2", "MUST", "The sender pauses only that tag, for at least the decoded RNR time."},
        {"MR-RNR-3", "MUST", "Other tags and streams keep flowing during the pause."},
        {"MR-RNR-4", "MUST", "When the timer expires the sender resumes the tag unprompted, re-sending each rejected message with new PPSNs, RNR_RESEND set and Attempt incremented."},
        {"MR-RNR-5", "MUST", "An RNR changes no congestion window."},
        {"MR-RNR-6", "MUST", "The receiver counts each rejection in RnrCount before acknowledging the rejected packet. A sender never completes a rejected SEND: while an ACK's RnrCount is at or above an RnrSeq it lacks, it holds the covered SENDs and sends RNR_QUERY (§4)."},
        {"MR-CC-1", "MUST", "The receiver acknowledges a CE-marked packet at once with ECE (TrigPPSN = that packet) and keeps a cumulative per-path CE_Count."},
        {"MR-CC-2", "MUST", "Per path, at the end of each window (when every packet in flight at its start is acknowledged): F = increase of CE_Count / packets acknowledged in it; α_p ← (1 − g)·α_p + g·F (α starts at 1); then if F > 0, cwnd_p ← max(1, cwnd_p·(1 − α_p/2)), else cwnd_p ← cwnd_p + 1."},
        {"MR-CC-3", "MUST", "ECE on path A never shrinks path B's window."},
        {"MR-CC-4", "MUST", "A new packet goes on path p only if inflight_p + 1 ≤ cwnd_p (packets; resends see terms); total inflight ≤ Σ cwnd_p."},
        {"MR-CC-5", "MUST", "Correct operation never depends on PFC; the endpoint never emits PAUSE frames; a CNP may be ignored."},
        {"MR-GR-1", "MUST", "Every ACK carries GrantRate."},
        {"MR-GR-2", "MUST", "The sender's rate, measured over any window of max(RTT, 20 packet times at the granted rate), stays at or below the latest GrantRate (+5 %)."},
        {"MR-GR-3", "SHOULD", "With N active senders the receiver grants each about inbound rate / N (±10 %) within 2 RTTs of a sender's start and within the grant idle time + 2 RTTs of its stop."},
        {"MR-STR-1", "MUST", "Completions within a stream follow StreamSeq order."},
        {"MR-STR-2", "MUST", "Loss, RNR or delay on one stream never delays completions of another."},
        {"MR-CONN-1", "MUST", "CONNECT/ACCEPT negotiate version, NumPaths and MTU (each the minimum) and a random initial PPSN per path and direction; a major-version mismatch gets REJECT."},
        {"MR-CONN-2", "MUST", "Data to an unknown connection gets NAK 0x0E."},
        {"MR-CONN-3", "MUST", "CLOSE is sent only when everything is acknowledged; data after close gets NAK 0x10."},
        {"MR-CONN-4", "MUST", "A PathID ≥ NumPaths gets NAK 0x20."},
    };
    return k;
}

const clause* find_clause(std::string_view id) {
    for (const auto& c : clauses())
        if (c.id == id) return &c;
    return nullptr;
}

}  // namespace mrct::run
