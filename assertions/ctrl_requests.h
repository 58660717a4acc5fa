// The DUT's CTRL requests that wait for an answer (§4): CONNECT, CLOSE,
// RNR_QUERY and PATH_RESET, each repeated every max(initial RTO, the largest
// RTO among the paths in service) until answered, up to the retry limit.
// Fed the trace's CTRL records in order, the book knows which requests are
// open, when each last went out and how often. `ctrl_repeat` judges the
// spacing from it; the runner keeps a case going while a request may still be
// repeated (docs/testplan.md, CONN-032).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "trace/trace.h"
#include "wire/protocol.h"

namespace mrct::assertions {

// One request: the far end and type, plus the SRC_CONN_ID for CONNECT and the
// PATH_ID and INITIAL_PPSN for PATH_RESET.
struct ctrl_request {
    std::string far;  // the peer's IP address bytes
    wire::ctrl_type type{};
    std::uint64_t disc = 0;
    auto operator<=>(const ctrl_request&) const = default;
};

class ctrl_book {
public:
    struct entry {
        core::nanos last{0};
        std::size_t last_rec = 0;
        unsigned sent = 0;  // since the request began or was last answered
    };
    // What one record did to a request of the DUT's.
    struct step {
        wire::ctrl_type type{};
        bool repeat = false;  // another copy of an open request
        entry before;         // the request's entry before this copy (repeat only)
        entry now;            // after it
    };
    // Takes one record. A DUT request is counted and returned; an answer that
    // reached the DUT (or a PROBE_REPLY, which starts a failed path's
    // PATH_RESET anew) closes what it answers and returns nullopt.
    std::optional<step> take(const trace::record& r);
    const std::map<ctrl_request, entry>& open() const { return open_; }
    // The latest copy of a request still open that has gone out fewer than
    // `limit` times: the DUT may still repeat it. nullopt when none.
    std::optional<core::nanos> may_repeat(unsigned limit) const;

private:
    std::map<ctrl_request, entry> open_;
};

// Real time: the DUT's quickest answer in the trace to a request of the
// engine's on the wire (CONNECT to ACCEPT or REJECT, PATH_RESET to its ACK,
// PROBE to PROBE_REPLY; the engine's ACCEPT to the DUT's first frame to the
// connection it names; a data packet sent once to the ACK naming it as its
// TrigPPSN): the wire's round trip and the DUT's least work, so
// at least the wire's round trip (D146). Only a request's first copy, and
// only where no other copy of it (a repeat, or one the plan crafted) went
// out before the answer came. nullopt: none.
std::optional<core::nanos> quickest_answer(const trace::trace& tr);

// Real time: how many of the engine's frames the DUT's own frames show it
// received (D148): the data packets its ACKs name (TrigPPSN), the engine's
// CTRL requests it answered, the engine's ACCEPTs after which it sent to the
// connection named. A DUT's count of frames received below this contradicts
// its own wire.
std::uint64_t received_for_sure(const trace::trace& tr);

// Real time: how many of the DUT's new data packets (no RETX) reached the
// engine after a later one of the same flow (far end, connection, path,
// PathEpoch, UDP source port): frames a lab reordered within a flow (D150).
std::uint64_t reordered_from_dut(const trace::trace& tr);
// And the engine's data packets the DUT's ACKs show arrived after a later
// one of the same flow: left out of an ACK triggered by the later packet,
// then covered by a later ACK with nothing below them sent again between
// (each packet sent once, D150).
std::uint64_t reordered_to_dut(const trace::trace& tr);

}  // namespace mrct::assertions
