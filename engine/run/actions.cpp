#include "run/actions.h"

#include <algorithm>

#include "trace/match.h"

namespace mrct::run {

void filter_set::add(const filter_op& op, int step, const plan::loc& at) {
    filter f{op.k, op.d, op.match, op.count};
    f.skip = op.skip;
    f.by = op.by;
    if (op.for_) f.until = s_.now() + *op.for_;
    f.step = step;
    f.wanted = op.count;
    f.what = describe(op);
    f.at = at;
    f_.push_back(std::move(f));
}

void filter_set::add(const skew_op& op, int step) {
    filter f{filter_op::kind::delay, trace::dir::from_dut, {{"path", std::to_string(op.path)}}, 0};
    f.by = op.add;
    f.step = step;
    for (auto d : {trace::dir::from_dut, trace::dir::to_dut}) {
        f.d = d;
        f_.push_back(f);
    }
}

void filter_set::lift(int step) {
    for (auto& f : f_)
        if (f.step == step) f.used_up = f.lifted = true;  // apply() passes it by
}

std::vector<filter_set::shortfall> filter_set::shortfalls() const {
    std::vector<shortfall> out;
    for (const auto& f : f_)
        if (f.wanted > 0 && f.acted < f.wanted && !f.lifted) out.push_back({f.step, f.at, f.what, f.acted, f.wanted});
    return out;
}

bool filter_set::may_act(trace::dir d) const {
    return std::any_of(f_.begin(), f_.end(), [&](const filter& f) { return live(f, d); });
}

filter_set::fate filter_set::apply(const trace::record& r) {
    fate out;
    for (auto& f : f_) {
        if (!live(f, r.d)) continue;
        if (!trace::matches(f.match, r)) continue;
        if (f.skip > 0) {
            --f.skip;
            continue;
        }
        if (f.remaining > 0 && --f.remaining == 0) f.used_up = true;  // count 0: unlimited
        ++f.acted;
        // Steps by number; -1 the setup's filters, -2 the handshake's.
        const std::string by = f.step >= 0 ? "step " + std::to_string(f.step) : f.step == -2 ? "handshake" : "setup";
        const std::string kind(filter_name(f.k));
        if (f.k == filter_op::kind::drop) {
            out.dropped = true;
            out.action = "dropped by " + by;
            out.step = f.step;
            return out;
        }
        if (f.k == filter_op::kind::duplicate) out.duplicate = true;
        if (f.k == filter_op::kind::mark_ce) out.mark_ce = true;
        if (f.k == filter_op::kind::delay) out.delay += f.by;
        out.action += (out.action.empty() ? "" : "; ") + kind + " by " + by;
        out.step = f.step;
    }
    return out;
}

}  // namespace mrct::run
