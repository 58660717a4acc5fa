// Frames on the DUT's wire: recorded, filtered, passed on.
#include "run/wire_tap.h"

namespace mrct::run::detail {

using core::nanos;

void wire_tap::from_dut(core::bytes_view fr, nanos age) {
    if (tr_.frames.size() >= max_frames_) {
        err_.set("the DUT flooded the wire (more than " + std::to_string(max_frames_) + " frames recorded)");
        return;
    }
    on_frame(trace::dir::from_dut, fr, age);
}

void wire_tap::on_frame(trace::dir d, core::bytes_view fr, nanos age) {
    nanos t = s_.now();
    late_.rx_delay_max = std::max(late_.rx_delay_max, age);
    if (age > nanos{0}) {
        // Recorded at its stamp, but never before the last record: a frame
        // stamped before something the engine recorded meanwhile is moved up
        // to it, and its time is then late by that much (kept as lateness).
        const nanos stamped = t - age;
        t = std::max(stamped, tr_.frames.empty() ? nanos{0} : tr_.frames.back().t);
        late_.note(stamped, t - stamped);
    }
    late_.note(t, age);
    auto& rec = tr_.add(t, d, fr);
    if (d == trace::dir::to_dut) {  // met the filters on its way (from_peer)
        if (seen_) seen_(rec);
        dut_.receive(rec.bytes);
        return;
    }
    w_.pin_dut_port(rec);
    // The filters first, then the steps it triggers: a step that sets a
    // filter at once (D131) acts from the next frame, not on this one.
    auto fate = filters_.apply(rec);
    if (fate.dropped) rec.dropped = true;
    if (!fate.action.empty() || fate.dropped) {
        rec.action = fate.action;
        rec.step = fate.step;
    }
    if (seen_) seen_(rec);
    if (fate.dropped) return;
    forward(fabric::direction::a_to_b, fate, rec.bytes, w_.fabric_to(rec));
}

void wire_tap::from_peer(core::bytes_view fr, fabric::fabric* via) {
    // The peer's frames meet the to_dut filters before the fabric; the
    // trace records them as they reach the DUT. With no filter that could act
    // on them (most of a plan's frames), nothing to decode for (issue 24).
    if (!filters_.may_act(trace::dir::to_dut)) {
        forward(fabric::direction::b_to_a, filter_set::fate{}, fr, via);
        return;
    }
    trace::record probe;  // views into `fr`, alive for this call
    probe.d = trace::dir::to_dut;
    probe.bytes = fr;
    // Decoded for the filters, which match headers, never the ICRC: the
    // frame's ICRC is checked where the trace records it (after the fabric,
    // which may corrupt it), not here too (a 4 KiB CRC per frame; issue 24).
    probe.dec = wire::decode_ethernet(probe.bytes, {.verify_icrc = false});
    auto fate = filters_.apply(probe);
    if (fate.dropped) {
        // Recorded, marked dropped, so the timeline shows it.
        auto& rec = tr_.add(s_.now(), trace::dir::to_dut, probe.bytes);
        rec.dropped = true;
        rec.action = fate.action;
        rec.step = fate.step;
        return;
    }
    forward(fabric::direction::b_to_a, fate, probe.bytes, via);
}

void wire_tap::inject(core::bytes_view fr, int step, std::string action) {
    auto& rec = tr_.add(s_.now(), trace::dir::to_dut, fr);
    rec.injected = true;
    rec.step = step;
    rec.action = std::move(action);
    dut_.receive(rec.bytes);
}

void wire_tap::forward(fabric::direction d, const filter_set::fate& fate, core::bytes_view bytes, fabric::fabric* fab) {
    // The fabric copies a frame into its pool before anything else, so a
    // single send can use the caller's bytes (a trace record's are stable; a
    // probe's live for the call). A changed or duplicated frame gets a copy
    // of its own first.
    const bool own = fate.mark_ce || fate.duplicate;
    core::byte_buffer copy;
    if (own) copy.assign(bytes.begin(), bytes.end());
    if (fate.mark_ce) fabric::mark_ce(copy);
    const core::bytes_view out = own ? core::bytes_view(copy) : bytes;
    const unsigned copies = fate.duplicate ? 2 : 1;
    for (unsigned i = 0; i < copies; ++i) {
        if (fate.delay.count() > 0) {
            auto keep = std::make_shared<core::byte_buffer>(out.begin(), out.end());
            s_.after(fate.delay, [d, keep, fab] { fab->send(d, *keep); });
        } else {
            fab->send(d, out);
        }
    }
}

}  // namespace mrct::run::detail
