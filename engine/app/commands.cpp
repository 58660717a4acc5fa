#include "app/commands.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "capture/pcap_file.h"
#include "inspect/describe.h"
#include "wire/protocol.h"
#include "wire/samples.h"

namespace mrct::app {

std::string_view version_string() { return MRCT_VERSION " (" "metaroce-1.2-model" ")"; }

int run_decode(const decode_args& a) {
    auto reader = capture::pcap_reader::open(a.path);
    if (!reader) {
        spdlog::error("{}", reader.err().message);
        return k_exit_infra;
    }
    wire::decode_options opt;
    opt.verify_icrc = !a.no_icrc;
    inspect::json_options jopt;
    jopt.include_payload = a.payload;
    std::uint64_t n = 0, dropped = 0;
    std::int64_t first_ts = 0;
    std::string line;
    for (;;) {
        auto rec = (*reader)->next();
        if (!rec) {
            spdlog::error("{}: {}", a.path, rec.err().message);
            return k_exit_infra;
        }
        if (!rec->has_value()) break;
        const auto& r = **rec;
        if (n == 0) first_ts = r.ts_ns;
        inspect::frame_meta meta{++n, r.ts_ns, r.data.size(), r.wirelen};
        auto d = (*reader)->decode(r.data, opt);
        if (!d.ok()) ++dropped;
        line = a.json ? inspect::to_json(meta, d, jopt).dump() : inspect::summary_line(meta, first_ts, d);
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), stdout);
        if (a.count && n >= a.count) break;
    }
    spdlog::info("{}: {} frames, {} decoded, {} dropped", a.path, n, n - dropped, dropped);
    return std::fflush(stdout) == 0 ? k_exit_ok : k_exit_infra;
}

int run_samples(const samples_args& a) {
    std::vector<wire::opcode> ops;
    for (const auto& name : a.opcodes) {
        bool found = false;
        for (auto op : wire::k_all_opcodes) {
            if (wire::opcode_name(static_cast<std::uint8_t>(op)) == name) {
                ops.push_back(op);
                found = true;
            }
        }
        if (!found) {
            spdlog::error("--opcode {}: not one of WRITE WRITE_IMM SEND SEND_IMM ACK NAK RNR CTRL", name);
            return k_exit_usage;
        }
    }
    if (ops.empty()) ops.assign(std::begin(wire::k_all_opcodes), std::end(wire::k_all_opcodes));

    auto writer = capture::pcap_writer::create(a.path);
    if (!writer) {
        spdlog::error("{}", writer.err().message);
        return k_exit_infra;
    }
    core::byte_buffer buf;
    std::int64_t ts = 0;
    std::size_t n = 0;
    if (a.random == 0) {
        for (const auto& s : wire::sample_catalog()) {
            wire::build_into(s.spec, buf);
            (*writer)->write(ts += 1000, buf);
            ++n;
        }
    } else {
        core::rng r(a.seed, "samples");
        for (unsigned i = 0; i < a.random; ++i) {
            for (auto op : ops) {
                wire::build_into(wire::random_spec(r, op, a.ip_version), buf);
                (*writer)->write(ts += 1000, buf);
                ++n;
            }
        }
    }
    if (auto st = (*writer)->close(); !st) {
        spdlog::error("{}: {}", a.path, st.err().message);
        return k_exit_infra;
    }
    spdlog::info("wrote {} frames to {}", n, a.path);
    return k_exit_ok;
}

}  // namespace mrct::app
