// Per-case evidence for the reports: a timeline of the frames that matter and
// plot series, computed from the case's trace (engine/trace) with the same
// wire replay the assertions use.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "assertions/sender_view.h"
#include "inspect/describe.h"
#include "reports/reports.h"

namespace mrct::reports {

namespace {

using core::nanos;

double us(nanos t) { return core::to_micros(t); }
double round3(double v) { return std::round(v * 1000) / 1000; }

// Timeline: the frames the non-passing assertions cite, with some context; or
// the start and end of the case.
json timeline(const trace::trace& tr, const run::case_result& r) {
    std::set<std::size_t> pick;
    for (const auto& a : r.asserts)
        if (a.o.v != assertions::verdict::pass)
            for (auto i : a.o.frames)
                for (std::size_t k = i >= 4 ? i - 4 : 0; k <= i + 4 && k < tr.frames.size(); ++k) pick.insert(k);
    if (pick.empty()) {
        for (std::size_t k = 0; k < std::min<std::size_t>(8, tr.frames.size()); ++k) pick.insert(k);
        for (std::size_t k = tr.frames.size() > 4 ? tr.frames.size() - 4 : 0; k < tr.frames.size(); ++k) pick.insert(k);
    }
    json rows = json::array();
    std::size_t n = 0;
    for (auto i : pick) {
        if (++n > 80) break;
        const auto& f = tr.frames[i];
        inspect::frame_meta m{i + 1, f.t.count(), f.bytes.size(), f.bytes.size()};
        auto line = inspect::summary_line(m, 0, f.dec);
        // Drop the number and time columns of the summary: the row has its own.
        std::size_t cut = 0;
        for (int field = 0; field < 2 && cut < line.size(); ++field) {
            while (cut < line.size() && line[cut] == ' ') ++cut;
            while (cut < line.size() && line[cut] != ' ') ++cut;
        }
        while (cut < line.size() && line[cut] == ' ') ++cut;
        rows.push_back({{"i", i}, {"t_us", round3(us(f.t))}, {"dir", trace::dir_name(f.d)}, {"frame", line.substr(cut)},
                        {"action", f.action}});
    }
    return rows;
}

// Keeps at most `n` points, by the maximum in each bucket (peaks stay visible).
json thin(const std::vector<std::pair<double, double>>& pts, std::size_t n = 120) {
    json out = json::array();
    if (pts.size() <= n) {
        for (const auto& [x, y] : pts) out.push_back({round3(x), round3(y)});
        return out;
    }
    const std::size_t per = (pts.size() + n - 1) / n;
    for (std::size_t i = 0; i < pts.size(); i += per) {
        double x = pts[i].first, y = pts[i].second;
        for (std::size_t j = i; j < std::min(pts.size(), i + per); ++j)
            if (pts[j].second > y) y = pts[j].second, x = pts[j].first;
        out.push_back({round3(x), round3(y)});
    }
    return out;
}

json plot(std::string title, std::string x, std::string y, json series) {
    return {{"title", std::move(title)}, {"x", std::move(x)}, {"y", std::move(y)}, {"series", std::move(series)}};
}

json plots(const trace::trace& tr) {
    json out = json::array();
    assertions::sender_view sv(tr);
    const double end_ms = core::to_micros(tr.end) / 1000;
    if (!sv.tx.empty()) {
        // Per-path RTO over time: RFC 6298 from the Karn-valid samples, as the
        // DUT should have it, and the timeouts it actually took.
        json rto = json::array();
        for (const auto& [p, s] : sv.paths) {
            if (s.rtt_samples.empty()) continue;
            std::vector<std::pair<double, double>> pts;
            double srtt = 0, var = 0;
            bool first = true;
            for (const auto& [t, sample] : s.rtt_samples) {
                const double x = us(sample);
                if (first) srtt = x, var = x / 2, first = false;
                else var = 0.75 * var + 0.25 * std::fabs(srtt - x), srtt = 0.875 * srtt + 0.125 * x;
                const double r = std::clamp(srtt + 4 * var, us(tr.p.rto_min), us(tr.p.rto_max));
                pts.push_back({us(t) / 1000, r});
            }
            rto.push_back({{"name", "path " + std::to_string(p) + " RTO"}, {"points", thin(pts)}});
        }
        std::map<unsigned, std::vector<std::pair<double, double>>> took;
        for (const auto& x : sv.expiries)
            if (x.timer_start.count() >= 0) took[x.path].push_back({us(x.t) / 1000, us(x.t - x.timer_start)});
        for (const auto& [p, pts] : took)
            rto.push_back({{"name", "path " + std::to_string(p) + " timeout taken"}, {"points", thin(pts)}, {"dots", true}});
        if (!rto.empty()) out.push_back(plot("Per-path RTO", "time (ms)", "RTO (us)", rto));

        // Per-path window: packets in flight.
        std::map<unsigned, std::vector<std::pair<double, double>>> infl;
        for (const auto& p : sv.inflight) infl[p.path].push_back({us(p.t) / 1000, static_cast<double>(p.inflight)});
        json win = json::array();
        for (const auto& [p, pts] : infl)
            win.push_back({{"name", "path " + std::to_string(p)}, {"points", thin(pts)}});
        out.push_back(plot("Packets in flight per path", "time (ms)", "packets", win));

        // Throughput per tag (RNR pauses show as gaps) and of resends.
        const int bins = 60;
        const double width_ms = std::max(end_ms, 1e-3) / bins;
        std::map<std::string, std::vector<double>> bytes;
        for (const auto& e : sv.tx) {
            const auto b = static_cast<std::size_t>(std::min<double>(bins - 1, us(e.t) / 1000 / width_ms));
            std::string name = e.kind == assertions::tx_kind::first
                                   ? (wire::is_send_opcode(e.opcode) ? "tag " + std::to_string(e.tag) : "WRITEs")
                                   : "resends";
            auto& v = bytes[name];
            v.resize(bins, 0);
            v[b] += e.ip_bytes;
        }
        json thr = json::array();
        for (const auto& [name, v] : bytes) {
            std::vector<std::pair<double, double>> pts;
            for (int b = 0; b < bins; ++b) pts.push_back({(b + 0.5) * width_ms, v[static_cast<std::size_t>(b)] * 8 / (width_ms * 1e6)});
            thr.push_back({{"name", name}, {"points", thin(pts)}});
        }
        out.push_back(plot("DUT throughput by tag (new data) and resends", "time (ms)", "Gb/s", thr));
    } else {
        // The DUT as receiver: data reaching it, and its ACKs.
        const int bins = 60;
        const double width_ms = std::max(end_ms, 1e-3) / bins;
        std::vector<double> in(bins, 0), acks(bins, 0);
        for (const auto& f : tr.frames) {
            const auto b = static_cast<std::size_t>(std::min<double>(bins - 1, us(f.t) / 1000 / width_ms));
            if (f.reached_dut() && f.data()) in[b] += static_cast<double>(f.bytes.size());
            if (f.d == trace::dir::from_dut && f.is(wire::opcode::ack)) acks[b] += 1;
        }
        std::vector<std::pair<double, double>> a, c;
        for (int b = 0; b < bins; ++b) {
            a.push_back({(b + 0.5) * width_ms, in[static_cast<std::size_t>(b)] * 8 / (width_ms * 1e6)});
            c.push_back({(b + 0.5) * width_ms, acks[static_cast<std::size_t>(b)] / (width_ms * 1e3)});
        }
        out.push_back(plot("Data reaching the DUT", "time (ms)", "Gb/s", json::array({{{"name", "data"}, {"points", thin(a)}}})));
        out.push_back(plot("ACKs from the DUT", "time (ms)", "ACKs per us", json::array({{{"name", "ACKs"}, {"points", thin(c)}}})));
    }
    return out;
}

}  // namespace

json case_json(const run::case_result& r, std::size_t order) {
    json c;
    c["id"] = r.id;
    c["order"] = order;
    c["title"] = r.title;
    c["area"] = r.area;
    c["level"] = r.level;
    c["role"] = r.role;
    c["clauses"] = r.clauses;
    c["verdict"] = assertions::verdict_name(r.v);
    c["reason"] = r.reason;
    c["seed"] = r.seed;
    c["sim_time_us"] = core::to_micros(r.sim_time);
    c["frames"] = r.frames;
    c["wall_s"] = r.wall_s;
    if (r.time_scale > 1) c["time_scale"] = r.time_scale;  // run slowed down (docs/timing.md, coarse time)
    if (r.interrupted) c["interrupted"] = true;            // cut short by a run stopped twice: not judged (D143)
    if (r.attempts > 1) {  // real time: earlier attempts doubted for timing (D66)
        c["attempts"] = r.attempts;
        c["doubted_before"] = r.doubted_before;
    }
    if (r.tr && r.tr->timing.realtime) {
        // Real time: how well the engine kept time (docs/timing.md).
        const auto& tm = r.tr->timing;
        auto us = [](core::nanos d) { return core::to_micros(d); };
        c["timing"] = {{"engine_late_us", us(tm.engine_late())},   {"event_late_max_us", us(tm.event_late_max)},
                       {"event_late_p99_us", us(tm.event_late_p99)}, {"events", tm.events},
                       {"step_late_max_us", us(tm.step_late_max)}, {"rx_delay_max_us", us(tm.rx_delay_max)},
                       {"rx_stamped", tm.rx_stamped},              {"agent_calls", tm.agent_calls},
                       {"agent_call_max_us", us(tm.agent_call_max)}, {"agent_call_median_us", us(tm.agent_call_median)},
                       {"poll_rtt_max_us", us(tm.poll_rtt_max)},   {"turn_max_us", us(tm.turn_max)},
                       // A string: nanoseconds since 1970 lose their last digits in a JSON double.
                       {"wall_zero_unix_ns", std::to_string(tm.wall_zero_unix_ns)}};
        if (tm.frames_lost) c["timing"]["frames_lost"] = tm.frames_lost;
        if (tm.if_rx_dropped || tm.if_tx_dropped) {  // D144
            c["timing"]["if_rx_dropped"] = tm.if_rx_dropped;
            c["timing"]["if_tx_dropped"] = tm.if_tx_dropped;
            c["timing"]["ifaces"] = tm.if_names;
        }
        // D148: the DUT's own frame counts against the trace, where the
        // agent reports them, and what the lab lost as they show it.
        if (tm.dut_frames_in || tm.dut_frames_out) {
            auto& l = c["timing"]["lab_frames"];
            if (tm.dut_frames_in) l["dut_frames_in"] = *tm.dut_frames_in;
            if (tm.dut_frames_out) l["dut_frames_out"] = *tm.dut_frames_out;
            l["sent_before_read"] = tm.sent_before_read;
            l["recorded_from_dut"] = tm.recorded_from_dut;
            l["received_for_sure"] = tm.received_for_sure;
            l["lost_to_dut"] = tm.lab_lost_to_dut;
            l["lost_from_dut"] = tm.lab_lost_from_dut;
            if (tm.dut_frames_out_end) l["dut_frames_out_end"] = *tm.dut_frames_out_end;
            l["copies_from_dut"] = tm.copies_from_dut;
            l["dup_to_dut"] = tm.lab_dup_to_dut;
            l["dup_from_dut"] = tm.lab_dup_from_dut;
            if (tm.data_copies_from_dut) l["data_copies_from_dut"] = tm.data_copies_from_dut;  // D151
            if (tm.resent_unseen_from_dut) l["resent_unseen_from_dut"] = tm.resent_unseen_from_dut;
            if (tm.lab_netted_from_dut) l["netted_from_dut"] = tm.lab_netted_from_dut;
            if (tm.dut_frames_in_contradicted) l["frames_in_contradicted"] = true;
        }
        if (tm.reordered_from_dut) c["timing"]["reordered_from_dut"] = tm.reordered_from_dut;  // D150
        if (tm.reordered_to_dut) c["timing"]["reordered_to_dut"] = tm.reordered_to_dut;
        // D146: a fabric's declared round trip, and the DUT's quickest answer
        // on the wire (this case's, the run's so far).
        if (tm.wire_rtt_declared > core::nanos{0}) c["timing"]["wire_rtt_declared_us"] = us(tm.wire_rtt_declared);
        if (tm.answer_min > core::nanos{0}) c["timing"]["answer_min_us"] = us(tm.answer_min);
        if (tm.answer_min_run > core::nanos{0}) c["timing"]["answer_min_run_us"] = us(tm.answer_min_run);
        if (tm.host_probed) {
            c["timing"]["host_hold_max_us"] = us(tm.host_hold_max);
            c["timing"]["host_wakeups"] = tm.host_wakeups;
            c["timing"]["host_cpus"] = tm.host_cpus;
            if (tm.dut_waits_read) c["timing"]["dut_wait_max_us"] = us(tm.dut_wait_max);
            if (tm.host_pressure_read) c["timing"]["pressure_wait_max_us"] = us(tm.pressure_wait_max);
        }
        // The worst moments, for the report: when the engine fell behind and by how much.
        auto spans = tm.late;
        std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.late > b.late; });
        if (spans.size() > 10) spans.resize(10);
        auto& w = c["timing"]["worst"] = json::array();
        for (const auto& l : spans) w.push_back({{"at_us", us(l.due)}, {"late_us", us(l.late)}});
    }
    auto& as = c["assertions"] = json::array();
    for (const auto& a : r.asserts) {
        json aj;
        aj["name"] = a.name;
        aj["clauses"] = a.clauses;
        aj["at"] = a.at.str();
        aj["verdict"] = assertions::verdict_name(a.o.v);
        aj["message"] = a.o.message;
        if (!a.o.expected.empty()) aj["expected"] = a.o.expected;
        if (!a.o.actual.empty()) aj["actual"] = a.o.actual;
        if (!a.o.frames.empty()) aj["frames"] = a.o.frames;
        if (!a.o.measured.empty()) aj["measured"] = a.o.measured;
        as.push_back(aj);
    }
    if (r.tr) c["evidence"] = {{"timeline", timeline(*r.tr, r)}, {"plots", plots(*r.tr)}};
    return c;
}

}  // namespace mrct::reports
