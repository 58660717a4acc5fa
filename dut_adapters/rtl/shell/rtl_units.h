// The endpoint's units (engine/endpoint/units.h) as the Verilated RTL core
// (dut_adapters/rtl/hdl/mr_core.sv): every decision the units make is the
// RTL's, clocked as docs/rtl.md's clock model says. `V` is one Verilated
// build of mr_core (clean, or with one planted define).
//
// Clock model: `now` carries the virtual time in nanoseconds; a command is
// one rising edge with the unit's cmd_valid high, and nothing is clocked in
// between. Timers are deadlines inside the RTL: the shell keeps one
// scheduler timer at the core's next_deadline and, when it comes, serves what
// is due, lowest path (or slot) first: ACK timers, then RTO expiries, then
// RNR resumptions.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "endpoint/config.h"
#include "endpoint/units.h"
#include "sim/scheduler.h"
// Verilator's runtime headers are not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "verilated.h"
#include "verilated_fst_c.h"
#pragma GCC diagnostic pop

namespace mrct::rtl {

using core::nanos;

inline constexpr std::uint64_t k_time_mask = (std::uint64_t{1} << 48) - 1;  // TW = 48

// What the cores of one DUT instance did, for bench/rtl_dut.sh: rising clock
// edges (one per command), model evaluations, and the wall time spent in
// them (measured only with `file` set). With `file` set, a line
// "EDGES EVALS CORES EVAL_NS" is appended to it when the instance goes.
struct core_stats {
    std::string file;
    std::uint64_t edges = 0, evals = 0, cores = 0, eval_ns = 0;
    ~core_stats() {
        if (file.empty()) return;
        if (std::FILE* f = std::fopen(file.c_str(), "a")) {
            std::fprintf(f, "%llu %llu %llu %llu\n", static_cast<unsigned long long>(edges),
                         static_cast<unsigned long long>(evals), static_cast<unsigned long long>(cores),
                         static_cast<unsigned long long>(eval_ns));
            std::fclose(f);
        }
    }
};

template <class V>
class rtl_units final : public endpoint::units {
public:
    // `fst`: a waveform file to write (empty: none).
    rtl_units(sim::scheduler& s, const endpoint::config& cfg, endpoint::unit_events ev, const std::string& fst,
              std::shared_ptr<core_stats> stats)
        : s_(s), ev_(std::move(ev)), stats_(std::move(stats)), timed_(!stats_->file.empty()), timer_(s) {
        ++stats_->cores;
        if (!fst.empty()) ctx_.traceEverOn(true);
        m_ = std::make_unique<V>(&ctx_);
        if (!fst.empty()) {
            trace_ = std::make_unique<VerilatedFstC>();
            m_->trace(trace_.get(), 99);
            trace_->open(fst.c_str());
        }
        m_->cfg_ack_every = std::clamp(cfg.ack_every, 1u, 256u);
        m_->cfg_ack_delay = ns(cfg.ack_delay);
        m_->cfg_rto_initial = ns(cfg.rto_initial);
        m_->cfg_rto_min = ns(cfg.rto_min);
        m_->cfg_rto_max = ns(cfg.rto_max);
        m_->now = ns(s_.now());
        m_->rst_n = 0;
        m_->clk = 0;
        eval();
        m_->rst_n = 1;
        eval();
    }
    ~rtl_units() override {
        if (trace_) trace_->close();
        m_->final();
    }

    // ---- receive path
    rx_class rx_classify(unsigned path, std::uint32_t ppsn) override {
        at(s_.now());
        m_->rx_cmd_path = path;
        m_->rx_cmd_ppsn = ppsn & 0xFFFFFF;
        eval();
        return m_->rx_cls_duplicate ? rx_class::duplicate : m_->rx_cls_out_of_window ? rx_class::out_of_window
                                                                                    : rx_class::fresh;
    }
    void rx_restart(unsigned path, std::uint32_t ppsn) override { rx_cmd(k_rx_restart, path, ppsn); }
    bool rx_packet(unsigned path, std::uint32_t ppsn, bool ce, bool ack_req, bool mark) override {
        m_->rx_cmd_ce = ce;
        m_->rx_cmd_ack_req = ack_req;
        m_->rx_cmd_mark = mark;
        rx_cmd(k_rx_packet, path, ppsn);
        return m_->rx_ack_now;
    }
    ack_fields rx_ack(unsigned path) override {
        m_->rx_rd_path = path;
        eval();
        ack_fields a;
        a.cum_ack = m_->rx_rd_cum_ack;
        for (unsigned w = 0; w < 4; ++w)
            a.sack.set_word(w, static_cast<std::uint64_t>(m_->rx_rd_sack[2 * w]) |
                                   static_cast<std::uint64_t>(m_->rx_rd_sack[2 * w + 1]) << 32);
        a.ce_count = m_->rx_rd_ce_count;
        return a;
    }
    void rx_acked(unsigned path) override { rx_cmd(k_rx_acked, path, 0); }

    // ---- retransmission timers
    void rto_sample(unsigned path, nanos first, nanos last, bool retransmitted, nanos arrived) override {
        m_->rto_cmd_sent_first = ns(first);
        m_->rto_cmd_sent_last = ns(last);
        m_->rto_cmd_retransmitted = retransmitted;
        rto_cmd(k_rto_sample, path, arrived);  // R measured to the ACK's arrival (D80)
    }
    nanos rto_arm(unsigned path) override {
        const auto rto = rto_read(path).rto;
        rto_cmd(k_rto_arm, path);
        return rto;
    }
    void rto_cancel(unsigned path) override { rto_cmd(k_rto_cancel, path); }
    bool rto_armed(unsigned path) override {
        m_->rto_rd_path = path;
        eval();
        return m_->rto_rd_armed;
    }
    void rto_acked(unsigned path) override { rto_cmd(k_rto_acked, path); }
    void rto_reset(unsigned path) override { rto_cmd(k_rto_reset, path); }
    void rto_expire(unsigned path) override { rto_cmd(k_rto_expire, path); }
    estimate rto_read(unsigned path) override {
        m_->rto_rd_path = path;
        eval();
        estimate e;
        e.has_rtt = m_->rto_rd_has_rtt;
        e.srtt = nanos{static_cast<std::int64_t>(m_->rto_rd_srtt)};
        e.rttvar = nanos{static_cast<std::int64_t>(m_->rto_rd_rttvar)};
        e.rto = nanos{static_cast<std::int64_t>(m_->rto_rd_rto)};
        e.backoff = m_->rto_rd_backoff;
        return e;
    }

    // ---- RNR pauses
    bool rnr_pause(std::uint16_t tag, std::uint8_t code, std::uint8_t rnr_attempt, std::uint8_t msg_attempt,
                   nanos arrived) override {
        m_->rnr_cmd_tag = tag;
        m_->rnr_cmd_code = code & 0x1F;
        m_->rnr_cmd_rnr_attempt = rnr_attempt & 0xF;
        m_->rnr_cmd_msg_attempt = msg_attempt & 0xF;
        pulse(unit::rnr, k_rnr_pause, arrived);  // paused from the RNR's arrival (D80)
        return m_->rnr_accepted;
    }
    bool rnr_paused(std::uint16_t tag) override {
        m_->rnr_rd_tag = tag;
        eval();
        return m_->rnr_rd_paused;
    }
    std::uint8_t next_attempt(std::uint8_t attempt) override {
        m_->rnr_attempt = attempt & 0xF;
        eval();
        return m_->rnr_next_attempt;
    }

private:
    static constexpr std::uint8_t k_rx_restart = 1, k_rx_packet = 2, k_rx_acked = 3;
    static constexpr std::uint8_t k_rto_sample = 1, k_rto_arm = 2, k_rto_cancel = 3, k_rto_acked = 4,
                                  k_rto_reset = 5, k_rto_expire = 6;
    static constexpr std::uint8_t k_rnr_pause = 1, k_rnr_resumed = 2;

    static std::uint64_t ns(nanos t) { return static_cast<std::uint64_t>(std::max<std::int64_t>(t.count(), 0)) & k_time_mask; }

    void eval() {
        if (timed_) {
            const auto t0 = std::chrono::steady_clock::now();
            m_->eval();
            stats_->eval_ns += static_cast<std::uint64_t>((std::chrono::steady_clock::now() - t0).count());
        } else {
            m_->eval();
        }
        ++stats_->evals;
        if (trace_) {
            // Picoseconds, with a sub-step per evaluation inside one
            // nanosecond, so every edge shows in order.
            const std::uint64_t t = static_cast<std::uint64_t>(m_->now) * 1000;
            step_ = t > last_dump_ ? t : last_dump_ + 1;
            last_dump_ = step_;
            trace_->dump(step_);
        }
    }
    void at(nanos t) {
        m_->now = ns(t);
    }
    enum class unit : std::uint8_t { rx, rto, rnr };
    void command(unit u, std::uint8_t op, bool valid) {
        switch (u) {
        case unit::rx: m_->rx_cmd_op = op, m_->rx_cmd_valid = valid; break;
        case unit::rto: m_->rto_cmd_op = op, m_->rto_cmd_valid = valid; break;
        case unit::rnr: m_->rnr_cmd_op = op, m_->rnr_cmd_valid = valid; break;
        }
    }
    // One command: the inputs are set; the unit's cmd_valid for one rising
    // edge at `t`, then `now` back at the scheduler's time.
    void pulse(unit u, std::uint8_t op, nanos t) {
        at(t);
        command(u, op, true);
        eval();
        m_->clk = 1;
        eval();
        ++stats_->edges;
        m_->clk = 0;
        command(u, 0, false);
        at(s_.now());
        eval();
        rearm();
    }
    void rx_cmd(std::uint8_t op, unsigned path, std::uint32_t ppsn) {
        m_->rx_cmd_path = path;
        m_->rx_cmd_ppsn = ppsn & 0xFFFFFF;
        pulse(unit::rx, op, s_.now());
    }
    void rto_cmd(std::uint8_t op, unsigned path, std::optional<nanos> t = std::nullopt) {
        m_->rto_cmd_path = path;
        pulse(unit::rto, op, t.value_or(s_.now()));
    }

    // The one scheduler timer: at the core's earliest deadline.
    void rearm() {
        if (serving_) return;  // serve() re-arms when it is done
        const std::uint64_t next = m_->next_deadline;
        if (next == k_time_mask) {
            timer_.cancel();
            return;
        }
        const nanos when{static_cast<std::int64_t>(next)};
        if (timer_.armed() && timer_.deadline() == when) return;
        timer_.arm_at(std::max(when, s_.now()), [this] { serve(); });
    }
    // Everything due now, one at a time: ACK timers, RTO expiries, RNR
    // resumptions (lowest path or slot first, as the core offers them). An
    // event the endpoint leaves unanswered is closed here, so nothing is
    // served twice.
    void serve() {
        serving_ = true;
        for (int guard = 0; guard < 100000; ++guard) {
            at(s_.now());
            eval();
            if (m_->rx_tmo_valid) {
                const unsigned p = m_->rx_tmo_path;
                ev_.ack_due(p);
                eval();
                if (m_->rx_tmo_valid && m_->rx_tmo_path == p) rx_cmd(k_rx_acked, p, 0);
            } else if (m_->rto_exp_valid) {
                const unsigned p = m_->rto_exp_path;
                ev_.rto_due(p);
                eval();
                if (m_->rto_exp_valid && m_->rto_exp_path == p) rto_cmd(k_rto_cancel, p);
            } else if (m_->rnr_res_valid) {
                const unsigned slot = m_->rnr_res_slot;
                const std::uint16_t tag = m_->rnr_res_tag;
                m_->rnr_cmd_slot = slot;
                pulse(unit::rnr, k_rnr_resumed, s_.now());
                ev_.resumed(tag);
            } else {
                break;
            }
        }
        serving_ = false;
        rearm();
    }

    sim::scheduler& s_;
    endpoint::unit_events ev_;
    std::shared_ptr<core_stats> stats_;
    bool timed_;
    VerilatedContext ctx_;
    std::unique_ptr<V> m_;
    std::unique_ptr<VerilatedFstC> trace_;
    std::uint64_t last_dump_ = 0, step_ = 0;
    sim::timer timer_;
    bool serving_ = false;
};

}  // namespace mrct::rtl
