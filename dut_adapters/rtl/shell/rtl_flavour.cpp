// The RTL DUT, libmrct-rtl-dut.so (docs/rtl.md): the reference endpoint's
// framing, CTRL, placement and connection state around the Verilated core
// (dut_adapters/rtl/hdl/mr_core.sv), which decides the receive path and ACKs,
// the retransmission timers and the RNR pauses through the endpoint's units
// seam (engine/endpoint/units.h). The clean core and one build per planted
// define are all in the library; bug=NAME picks the build, so
// `mrct selftest --dut rtl` gets the RTL kill matrix from mrct_dut_describe.
#include <filesystem>
#include <functional>

#include "flavour.h"
#include "rtl_units.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vmr_core.h"
#include "Vmr_core_ce_saturates.h"
#include "Vmr_core_frozen_rnr.h"
#include "Vmr_core_karn_violation.h"
#include "Vmr_core_lazy_ack.h"
#include "Vmr_core_no_backoff.h"
#include "Vmr_core_no_sack.h"
#include "Vmr_core_rnr_pauses_all.h"
#include "Vmr_core_sack_word.h"
#include "Vmr_core_shared_rto.h"
#pragma GCC diagnostic pop

namespace mrct::so_shell {
namespace {

struct variant {
    bug_entry bug;  // empty name: the clean core
    endpoint::units_factory (*make)(std::string waveform, std::string stats);
};

// Waveform files: the first connection's at PATH, the next ones' beside it
// as STEM.conn2.fst, STEM.conn3.fst, ...
std::string waveform_for(const std::string& path, unsigned n) {
    if (path.empty() || n == 1) return path;
    std::filesystem::path p(path);
    return (p.parent_path() / (p.stem().string() + ".conn" + std::to_string(n) + p.extension().string())).string();
}

template <class V>
endpoint::units_factory make_units(std::string waveform, std::string stats_file) {
    auto stats = std::make_shared<rtl::core_stats>();
    stats->file = std::move(stats_file);
    return [waveform, stats](sim::scheduler& s, const endpoint::config& cfg, unsigned /*max_paths*/,
                             endpoint::unit_events ev) -> std::unique_ptr<endpoint::units> {
        return std::make_unique<rtl::rtl_units<V>>(s, cfg, std::move(ev), waveform_for(waveform, stats->cores + 1), stats);
    };
}

const std::vector<variant>& variants() {
    static const std::vector<variant> v{
        {{"", "", ""}, make_units<Vmr_core>},
        {{"shared-rto", "MR-RTO-2", "mr_rto with MR_BUG_SHARED_RTO: one retransmission timer and estimator serve every path"},
         make_units<Vmr_core_shared_rto>},
        {{"no-backoff", "MR-RTO-3", "mr_rto with MR_BUG_NO_BACKOFF: the RTO is not doubled per expiry"},
         make_units<Vmr_core_no_backoff>},
        {{"karn-violation", "MR-RTO-3",
          "mr_rto with MR_BUG_KARN_VIOLATION: a retransmitted packet gives an RTT sample, measured from its first transmission"},
         make_units<Vmr_core_karn_violation>},
        {{"frozen-rnr", "MR-RNR-4", "mr_rnr with MR_BUG_FROZEN_RNR: a paused tag's timer never expires, the tag never resumes"},
         make_units<Vmr_core_frozen_rnr>},
        {{"rnr-pauses-all", "MR-RNR-2, MR-RNR-3", "mr_rnr with MR_BUG_RNR_PAUSES_ALL: a pause on one tag holds every tag"},
         make_units<Vmr_core_rnr_pauses_all>},
        {{"sack-word", "MR-SACK-1", "mr_rx_path with MR_BUG_SACK_WORD: the SACK bitmap is reported one 32-bit word off"},
         make_units<Vmr_core_sack_word>},
        {{"ce-saturates", "MR-CC-1", "mr_rx_path with MR_BUG_CE_SATURATES: the CE count stops at 15 instead of wrapping at 65536"},
         make_units<Vmr_core_ce_saturates>},
        {{"no-sack", "MR-SACK-1", "mr_rx_path with MR_BUG_NO_SACK: ACKs carry CumAck with an empty SACK"},
         make_units<Vmr_core_no_sack>},
        {{"lazy-ack", "MR-SACK-2",
          "mr_rx_path with MR_BUG_LAZY_ACK: neither AckReq nor a new gap asks for an ACK (only CE, ack_every packets, the ACK timer)"},
         make_units<Vmr_core_lazy_ack>},
    };
    return v;
}

}  // namespace

const flavour& this_flavour() {
    static const flavour f = [] {
        flavour r;
        r.name = "mrct-rtl (Verilator)";
        r.capabilities = "write,write_imm,send,send_imm,ipv4,fine_timing,virtual_time,raw_frames,raw_rx,wire_headers,waveform";
        for (const auto& v : variants())
            if (!v.bug.name.empty()) r.bugs.push_back(v.bug);
        r.options = {{"waveform", "an FST of the RTL core per connection, the first at this path"},
                     {"stats", "a line 'EDGES EVALS CORES' appended to this file per instance (bench/rtl_dut.sh)"}};
        r.attach = [](endpoint::endpoint& ep, const std::string& bug, const std::map<std::string, std::string>& o) {
            auto get = [&o](const char* k) {
                const auto it = o.find(k);
                return it == o.end() ? std::string() : it->second;
            };
            for (const auto& v : variants())
                if (v.bug.name == bug) ep.set_units(v.make(get("waveform"), get("stats")));
        };
        return r;
    }();
    return f;
}

}  // namespace mrct::so_shell
