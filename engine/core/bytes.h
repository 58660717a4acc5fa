// Bounds-checked big-endian byte reader and writer.
//
// The reader never reads past its span and never advances on failure, so a
// caller can try a read, see it fail, and report exactly where the input ended
// (the habit of mvfst's codec). The writer appends to a caller-owned vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace mrct::core {

using bytes_view = std::span<const std::uint8_t>;
using byte_buffer = std::vector<std::uint8_t>;

class byte_reader {
public:
    explicit byte_reader(bytes_view data) : data_(data) {}

    std::size_t offset() const { return pos_; }
    std::size_t remaining() const { return data_.size() - pos_; }
    bool can_read(std::size_t n) const { return n <= remaining(); }

    std::optional<std::uint8_t> u8() {
        if (!can_read(1)) return std::nullopt;
        return data_[pos_++];
    }
    std::optional<std::uint16_t> u16() {
        if (!can_read(2)) return std::nullopt;
        std::uint16_t v = static_cast<std::uint16_t>((data_[pos_] << 8) | data_[pos_ + 1]);
        pos_ += 2;
        return v;
    }
    std::optional<std::uint32_t> u24() {
        if (!can_read(3)) return std::nullopt;
        std::uint32_t v = (std::uint32_t{data_[pos_]} << 16) | (std::uint32_t{data_[pos_ + 1]} << 8) |
                          data_[pos_ + 2];
        pos_ += 3;
        return v;
    }
    std::optional<std::uint32_t> u32() {
        if (!can_read(4)) return std::nullopt;
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v = (v << 8) | data_[pos_ + i];
        pos_ += 4;
        return v;
    }
    std::optional<std::uint64_t> u64() {
        if (!can_read(8)) return std::nullopt;
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | data_[pos_ + i];
        pos_ += 8;
        return v;
    }
    // A view of the next n bytes; empty optional (and no advance) if short.
    std::optional<bytes_view> take(std::size_t n) {
        if (!can_read(n)) return std::nullopt;
        bytes_view v = data_.subspan(pos_, n);
        pos_ += n;
        return v;
    }
    bytes_view rest() const { return data_.subspan(pos_); }

private:
    bytes_view data_;
    std::size_t pos_ = 0;
};

class byte_writer {
public:
    explicit byte_writer(byte_buffer& out) : out_(out) {}

    std::size_t size() const { return out_.size(); }
    void u8(std::uint8_t v) { out_.push_back(v); }
    void u16(std::uint16_t v) {
        out_.push_back(static_cast<std::uint8_t>(v >> 8));
        out_.push_back(static_cast<std::uint8_t>(v));
    }
    void u24(std::uint32_t v) {
        out_.push_back(static_cast<std::uint8_t>(v >> 16));
        out_.push_back(static_cast<std::uint8_t>(v >> 8));
        out_.push_back(static_cast<std::uint8_t>(v));
    }
    void u32(std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) out_.push_back(static_cast<std::uint8_t>(v >> s));
    }
    void u64(std::uint64_t v) {
        for (int s = 56; s >= 0; s -= 8) out_.push_back(static_cast<std::uint8_t>(v >> s));
    }
    void bytes(bytes_view v) { out_.insert(out_.end(), v.begin(), v.end()); }
    void zeros(std::size_t n) { out_.insert(out_.end(), n, 0); }
    // Patch a big-endian 16-bit value at an absolute offset written earlier.
    void patch_u16(std::size_t at, std::uint16_t v) {
        out_[at] = static_cast<std::uint8_t>(v >> 8);
        out_[at + 1] = static_cast<std::uint8_t>(v);
    }

private:
    byte_buffer& out_;
};

}  // namespace mrct::core
