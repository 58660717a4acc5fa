// The wire tap of one case (engine/run, internal): every frame on the DUT's
// wire is recorded into the trace, where it is, when it is; the step filters
// (run/actions.h) act on it; then it goes on, to the DUT or over the fabric
// to a peer. Triggers see each record as it is made (step_exec).
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/pages.h"
#include "dut_adapters/dut.h"
#include "run/actions.h"
#include "run/case_wiring.h"
#include "trace/trace.h"

namespace mrct::run::detail {

// A case's first error (a flood, an action that failed): what ends it as `error`.
struct first_error {
    std::string what;
    void set(std::string why) {
        if (what.empty()) what = std::move(why);
    }
};

// Real time: the engine's own lateness (trace::timing_figures): steps and
// DUT frames handled late, above the floor.
struct lateness {
    std::vector<trace::timing_figures::late_span> spans;
    core::nanos rx_delay_max{0}, step_late_max{0};
    static constexpr std::size_t k_max_spans = std::size_t{1} << 18;
    void note(core::nanos due, core::nanos late) {
        if (late > trace::timing_figures::k_late_floor && spans.size() < k_max_spans) spans.push_back({due, late});
    }
    // Real time, before the traffic: room for `n` more spans (at most
    // k_max_spans in all), its pages touched now. A DUT's burst queued in
    // the engine's socket is handled more than the floor late frame by
    // frame, a span each: growing the vector then moved it and faulted its
    // new pages in on the data path (5 % of the engine's samples while the
    // DUT sent at full rate; bench/wire_rate.py, issue 24).
    void prepare(std::size_t n) {
        const std::size_t want = std::min(k_max_spans, spans.size() + n);
        if (spans.capacity() >= want) return;
        spans.reserve(want);
        core::touch_pages(spans.data() + spans.size(), (want - spans.size()) * sizeof(trace::timing_figures::late_span));
    }
};

class wire_tap {
public:
    wire_tap(sim::scheduler& s, trace::trace& tr, dut::dut& d, case_wiring& w, lateness& late, first_error& err)
        : s_(s), tr_(tr), dut_(d), w_(w), late_(late), err_(err), filters_(s) {}

    // Each record as it is made, before the filters act on it (triggers).
    void on_record(std::function<void(const trace::record&)> f) { seen_ = std::move(f); }
    // The most frames the case records (limits.max_frames); a DUT that
    // sends more flooded the wire, the case's error.
    void set_max_frames(std::size_t n) { max_frames_ = n; }

    // A frame from the DUT, `age` ago (real time: the kernel's stamp).
    void from_dut(core::bytes_view fr, core::nanos age);
    // A frame the fabric delivers to the DUT.
    void arrive(core::bytes_view fr) { on_frame(trace::dir::to_dut, fr); }
    // A peer's frame: the to_dut filters, then the fabric `via`.
    void from_peer(core::bytes_view fr, fabric::fabric* via);
    // A crafted frame, straight onto the DUT's wire (no filter, no fabric).
    void inject(core::bytes_view fr, int step, std::string action);

    filter_set& filters() { return filters_; }

private:
    // Records a frame and passes it on. `age`: how long ago it reached the
    // engine's host; it is recorded then, but never before the last recorded
    // frame, so the trace stays in time order.
    void on_frame(trace::dir d, core::bytes_view fr, core::nanos age = core::nanos{0});
    void forward(fabric::direction d, const filter_set::fate& fate, core::bytes_view bytes, fabric::fabric* fab);

    sim::scheduler& s_;
    trace::trace& tr_;
    dut::dut& dut_;
    case_wiring& w_;
    lateness& late_;
    first_error& err_;
    filter_set filters_;
    std::function<void(const trace::record&)> seen_;
    std::size_t max_frames_ = std::numeric_limits<std::size_t>::max();  // until set_max_frames
};

}  // namespace mrct::run::detail
