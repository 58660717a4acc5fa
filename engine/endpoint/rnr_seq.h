// The sender's RnrSeq bookkeeping (§4, MR-RNR-6).
//
// RnrSeq is a 16-bit serial number that starts at 1 and skips 0 when it wraps
// (..., 65534, 65535, 1, 2, ...). The sender must know whether it has every
// RnrSeq up to the highest RnrCount it has seen. It keeps the highest RnrSeq
// below which nothing is missing (`have`), the RnrSeqs received beyond it, and
// the highest RnrCount; "beyond" and "highest" are judged in serial order over
// the 65535 non-zero values (half the space ahead is "after", as RFC 1982).
#pragma once

#include <cstdint>
#include <set>

namespace mrct::endpoint {

class rnr_seq_tracker {
public:
    static constexpr std::uint16_t next(std::uint16_t s) { return s == 0xFFFF ? 1 : static_cast<std::uint16_t>(s + 1); }
    // Steps of next() from a to b (b != 0); 0 means a == b.
    static constexpr unsigned distance(std::uint16_t a, std::uint16_t b) {
        if (a == 0) return b;
        return (static_cast<unsigned>(b) + 0xFFFFu - a) % 0xFFFFu;
    }
    // b comes after a in serial order (b == 0, "none", never does).
    static constexpr bool after(std::uint16_t a, std::uint16_t b) {
        if (b == 0) return false;
        const unsigned d = distance(a, b);
        return d > 0 && d < 0x8000u;
    }

    // An RNR carried `seq` (0: the peer did not number it, ignored).
    void received(std::uint16_t seq) {
        if (!after(have_, seq)) return;  // already counted
        if (seq != next(have_)) {
            ahead_.insert(seq);
            return;
        }
        have_ = seq;
        for (auto it = ahead_.find(next(have_)); it != ahead_.end(); it = ahead_.find(next(have_))) {
            have_ = *it;
            ahead_.erase(it);
        }
        // Anything left behind `have` by a wrap of the window is stale.
        for (auto it = ahead_.begin(); it != ahead_.end();) it = after(have_, *it) ? std::next(it) : ahead_.erase(it);
    }
    // An ACK or RNR_SYNC carried RnrCount `count`.
    void count(std::uint16_t c) {
        if (after(highest_, c)) highest_ = c;
    }
    // Some RnrSeq at or below the highest RnrCount has not arrived.
    bool missing() const { return after(have_, highest_); }
    std::uint16_t highest() const { return highest_; }
    std::uint16_t have() const { return have_; }

private:
    std::uint16_t have_ = 0;     // every RnrSeq up to this one has arrived (0: none yet)
    std::uint16_t highest_ = 0;  // highest RnrCount seen
    std::set<std::uint16_t> ahead_;
};

}  // namespace mrct::endpoint
