#include "capture/pcap_file.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mrct::capture {

namespace {
// LINKTYPE_RAW is DLT_RAW (12 or 14 by platform) in libpcap's numbering;
// LINKTYPE_IPV4/IPV6 (228/229) map to DLT_IPV4/DLT_IPV6.
std::optional<link_kind> kind_of(int dlt) {
    switch (dlt) {
    case DLT_EN10MB: return link_kind::ethernet;
    case DLT_RAW:
#ifdef DLT_IPV4
    case DLT_IPV4:
    case DLT_IPV6:
#endif
        return link_kind::raw_ip;
    default: return std::nullopt;
    }
}
}  // namespace

core::result<std::unique_ptr<pcap_reader>> pcap_reader::open(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE] = {};
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (!p) return core::error{path + ": " + err};
    auto k = kind_of(pcap_datalink(p));
    if (!k) {
        std::string name = pcap_datalink_val_to_name(pcap_datalink(p)) ? pcap_datalink_val_to_name(pcap_datalink(p)) : "?";
        pcap_close(p);
        return core::error{path + ": unsupported link type " + name + " (need Ethernet or raw IP)"};
    }
    return std::unique_ptr<pcap_reader>(new pcap_reader(p, *k));
}

pcap_reader::~pcap_reader() { pcap_close(p_); }

core::result<std::optional<packet_record>> pcap_reader::next() {
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    int rc = pcap_next_ex(p_, &h, &data);
    if (rc == PCAP_ERROR_BREAK) return std::optional<packet_record>{};
    if (rc != 1) return core::error{std::string("pcap read error: ") + pcap_geterr(p_)};
    packet_record rec;
    rec.ts_ns = std::int64_t{h->ts.tv_sec} * 1'000'000'000 + h->ts.tv_usec;  // tv_usec holds ns at NANO precision
    rec.wirelen = h->len;
    rec.data = core::bytes_view(data, h->caplen);
    return std::optional<packet_record>{rec};
}

wire::decode_result pcap_reader::decode(core::bytes_view data, const wire::decode_options& opt) const {
    return link_ == link_kind::ethernet ? wire::decode_ethernet(data, opt) : wire::decode_ip(data, opt);
}

core::result<std::unique_ptr<pcap_writer>> pcap_writer::create(const std::string& path, std::size_t buffer) {
    pcap_t* p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    if (!p) return core::error{"pcap_open_dead failed"};
    std::unique_ptr<char[]> buf;
    pcap_dumper_t* d = nullptr;
    if (buffer == 0) {
        d = pcap_dump_open(p, path.c_str());
    } else if (FILE* f = std::fopen(path.c_str(), "wbe")) {
        // The buffer is set before the first write, as setvbuf needs.
        buf.reset(new char[buffer]);
        std::setvbuf(f, buf.get(), _IOFBF, buffer);
        d = pcap_dump_fopen(p, f);
        if (!d) std::fclose(f);
    } else {
        std::string e = path + ": " + std::strerror(errno);
        pcap_close(p);
        return core::error{e};
    }
    if (!d) {
        std::string e = path + ": " + pcap_geterr(p);
        pcap_close(p);
        return core::error{e};
    }
    return std::unique_ptr<pcap_writer>(new pcap_writer(p, d, std::move(buf)));
}

pcap_writer::~pcap_writer() {
    if (d_) pcap_dump_close(d_);
    pcap_close(p_);
}

void pcap_writer::write(std::int64_t ts_ns, core::bytes_view frame) {
    pcap_pkthdr h{};
    h.ts.tv_sec = ts_ns / 1'000'000'000;
    h.ts.tv_usec = ts_ns % 1'000'000'000;
    h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
    pcap_dump(reinterpret_cast<u_char*>(d_), &h, frame.data());
}

core::status pcap_writer::close() {
    if (!d_) return core::ok_status();
    // A write that failed earlier (a full disk) leaves the stream's error
    // flag set, and may have left nothing for the flush to fail on.
    bool flush_failed = pcap_dump_flush(d_) != 0 || std::ferror(pcap_dump_file(d_)) != 0;
    pcap_dump_close(d_);
    d_ = nullptr;
    if (flush_failed) return core::error{"pcap write failed (disk full?)"};
    return core::ok_status();
}

}  // namespace mrct::capture
