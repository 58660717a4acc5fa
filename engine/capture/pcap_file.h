// pcap files through libpcap, nanosecond timestamps.
//
// Reading accepts microsecond or nanosecond files (libpcap scales to ns) with
// Ethernet or raw-IP link types; writing produces nanosecond Ethernet pcaps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "core/result.h"
#include "wire/frame.h"

struct pcap;
struct pcap_dumper;

namespace mrct::capture {

enum class link_kind { ethernet, raw_ip };

struct packet_record {
    std::int64_t ts_ns = 0;
    std::size_t wirelen = 0;
    core::bytes_view data;  // valid until the next read
};

class pcap_reader {
public:
    static core::result<std::unique_ptr<pcap_reader>> open(const std::string& path);
    ~pcap_reader();
    // The next record, nullopt at end of file; an error for a damaged file.
    core::result<std::optional<packet_record>> next();
    link_kind link() const { return link_; }
    // Decodes a record according to the file's link type.
    wire::decode_result decode(core::bytes_view data, const wire::decode_options& opt = {}) const;

private:
    pcap_reader(::pcap* p, link_kind l) : p_(p), link_(l) {}
    ::pcap* p_;
    link_kind link_;
};

class pcap_writer {
public:
    // Ethernet link type, nanosecond timestamps, snaplen 65535. `buffer`:
    // bytes written to the file at a time (0: stdio's, 4 KiB); a whole
    // capture written at once takes a larger one (a 64 MiB case's 84 MB
    // pcap was 16 k write calls at 4 KiB).
    static core::result<std::unique_ptr<pcap_writer>> create(const std::string& path, std::size_t buffer = 0);
    static constexpr std::size_t k_bulk_buffer = std::size_t{1} << 20;
    ~pcap_writer();
    void write(std::int64_t ts_ns, core::bytes_view frame);
    core::status close();

private:
    pcap_writer(::pcap* p, ::pcap_dumper* d, std::unique_ptr<char[]> buf) : p_(p), d_(d), buf_(std::move(buf)) {}
    ::pcap* p_;
    ::pcap_dumper* d_;
    std::unique_ptr<char[]> buf_;  // the FILE's buffer (outlives it: freed after the close)
};

}  // namespace mrct::capture
