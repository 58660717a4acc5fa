// Packet storage for the fabric: buffers addressed by handles.
//
// Stages and delay lines hold handles, never copies of the payload; the pool
// grows in blocks and a buffer grows at once to the longest frame the pool
// has carried, so once warm, forwarding allocates nothing (the same stages
// are meant to run on DPDK mbufs later; tests/fabric/alloc_test.cpp).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/bytes.h"
#include "core/time.h"
#include "fabric/frame_offsets.h"

namespace mrct::fabric {

using handle = std::uint32_t;
inline constexpr handle k_no_packet = ~0u;

struct packet_meta {
    std::uint32_t len = 0;
    // Payload bytes the frame describes but does not carry (a symbolic
    // payload, wire::frame_spec::symbolic_payload), just before its last 4
    // bytes (the ICRC): on the wire it is len + elided bytes long.
    std::uint32_t elided = 0;
    std::uint16_t path = 0;     // fabric path it travels
    std::uint8_t direction = 0; // 0: A->B, 1: B->A
    core::nanos sent{0};        // when it entered the fabric
    std::uint64_t id = 0;       // unique per injected packet (duplicates keep their original's)
    std::int64_t stamp = 0;     // the sender's, carried through untouched (mrct emulate: the frame's receive time)
};

class packet_pool {
public:
    static constexpr std::size_t k_capacity = 9216;  // jumbo frame
    static constexpr std::size_t k_copy_up_to = 512;  // adopt() copies frames this small

    // A packet's bytes are view(h): its first meta(h).len bytes. The vector
    // behind it may be longer, left over from an earlier packet; buffers
    // never shrink, so refilling one never zero-fills it first.
    handle alloc(core::bytes_view frame) {
        const handle h = take();
        fill(h, frame);
        return h;
    }
    // Takes a frame built by its sender without copying it: the sender's
    // buffer and the packet's swap, and the sender gets back a buffer whose
    // size and bytes are left over from an earlier packet (a builder that
    // overwrites it need not zero-fill it first).
    // Small frames (ACKs, CTRL) are copied instead: the sender keeps its
    // large buffer, and buffers do not shrink and regrow as they alternate
    // between ACKs and data.
    handle adopt(core::byte_buffer& frame) {
        if (frame.size() <= k_copy_up_to) return alloc(frame);
        assert(frame.size() <= k_capacity);
        longest_ = std::max(longest_, frame.size());
        const handle h = take();
        bufs_[h].swap(frame);
        meta_[h].len = static_cast<std::uint32_t>(bufs_[h].size());
        if (symbolic_) meta_[h].elided = elided_of(view(h));
        return h;
    }
    handle clone(handle h) {
        const handle c = take();
        fill(c, view(h));
        meta_[c] = meta_[h];
        return c;
    }
    void release(handle h) {
        free_.push_back(h);
        --in_use_;
    }
    std::uint8_t* buf(handle h) { return bufs_[h].data(); }
    // The frame's length on the wire: what queues serialize and count.
    std::uint32_t wire_len(handle h) const { return meta_[h].len + meta_[h].elided; }
    // Frames that claim more IPv4 bytes than they hold describe that many
    // payload bytes instead of carrying them (mrct simulate --payload
    // symbolic): counted at their full length. Off by default: elsewhere such
    // a frame is a truncated one, carried as it is.
    void set_symbolic_payload(bool on) { symbolic_ = on; }
    std::span<std::uint8_t> data(handle h) { return {buf(h), meta_[h].len}; }
    core::bytes_view view(handle h) { return {buf(h), meta_[h].len}; }
    packet_meta& meta(handle h) { return meta_[h]; }
    std::size_t in_use() const { return in_use_; }
    // Allocations the pool made so far (tests): a buffer given more storage,
    // or the pool's own vectors grown when more packets are in flight than
    // ever before. Once warm, neither happens.
    std::uint64_t allocations() const { return allocations_; }

private:
    static constexpr std::size_t k_block = 256;
    handle take() {
        if (free_.empty()) grow();
        const handle h = free_.back();
        free_.pop_back();
        meta_[h] = {};
        ++in_use_;
        return h;
    }
    void fill(handle h, core::bytes_view frame) {
        assert(frame.size() <= k_capacity);
        auto& b = bufs_[h];
        if (b.size() < frame.size()) {
            // Straight to the longest frame yet: a buffer that carried only
            // ACKs would otherwise allocate again the first time data lands
            // in it, long after the pool is warm.
            longest_ = std::max(longest_, frame.size());
            allocations_ += b.capacity() < longest_;
            b.resize(longest_);
        }
        if (!frame.empty()) std::memcpy(b.data(), frame.data(), frame.size());
        meta_[h].len = static_cast<std::uint32_t>(frame.size());
        if (symbolic_) meta_[h].elided = elided_of(frame);
    }
    // IPv4 total length beyond the bytes present, or 0.
    static std::uint32_t elided_of(core::bytes_view f) {
        const int at = ip_offset(f);
        if (at < 0) return 0;
        const auto ip = static_cast<std::size_t>(at);
        if (f.size() < ip + 4 || (f[ip] >> 4) != 4) return 0;
        const std::size_t total = (std::size_t{f[ip + 2]} << 8) | f[ip + 3];
        return ip + total > f.size() ? static_cast<std::uint32_t>(ip + total - f.size()) : 0;
    }
    // Buffers keep their capacity across uses; a buffer only ever holds one
    // frame (<= k_capacity).
    void grow() {
        const std::size_t caps[3] = {bufs_.capacity(), meta_.capacity(), free_.capacity()};
        const auto base = static_cast<handle>(bufs_.size());
        bufs_.resize(bufs_.size() + k_block);
        meta_.resize(meta_.size() + k_block);
        free_.reserve(bufs_.size());  // so that release() never allocates
        for (std::size_t i = k_block; i-- > 0;) free_.push_back(base + static_cast<handle>(i));
        allocations_ += (bufs_.capacity() != caps[0]) + (meta_.capacity() != caps[1]) + (free_.capacity() != caps[2]);
    }
    std::vector<core::byte_buffer> bufs_;
    std::vector<packet_meta> meta_;
    std::vector<handle> free_;
    std::size_t in_use_ = 0;
    std::size_t longest_ = 0;  // the longest frame filled or adopted so far
    bool symbolic_ = false;
    std::uint64_t allocations_ = 0;
};

}  // namespace mrct::fabric
