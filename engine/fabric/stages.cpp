// The built-in impairment stages. Each class documents its model; the
// parameter declarations in builtin_stages() are the single source of names,
// defaults and ranges (YAML validation and docs/fabric.md come from them).
#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <sstream>

#include "core/ring.h"
#include "fabric/frame_offsets.h"
#include "fabric/stage.h"
#include "wire/crc32.h"
#include "wire/checksum.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::fabric {

using core::nanos;

namespace {

// ---------------------------------------------------------------- loss
// Drops packets by model: bernoulli (p), gilbert_elliott (two-state Markov
// chain: good->bad with p_gb, bad->good with p_bg, loss probability loss_good /
// loss_bad in each state), every_nth (drops packets offset, offset+nth, ...,
// counting from 0), ppsn_list (data packets whose BTH PSN is listed; once per
// PPSN unless `once` is false).
class loss_stage final : public stage {
public:
    loss_stage(packet_pool& p, core::rng r, const params& v)
        : stage(p, r), model_(v.choice("model")), p_(v.real("p")), p_gb_(v.real("p_gb")), p_bg_(v.real("p_bg")),
          loss_good_(v.real("loss_good")), loss_bad_(v.real("loss_bad")), nth_(v.integer("nth")),
          offset_(v.integer("offset")), once_(v.boolean("once")) {
        for (auto x : v.int_list("ppsns")) ppsns_.push_back({static_cast<std::uint32_t>(x & 0xFFFFFF), false});
    }
    std::string_view kind() const override { return "loss"; }
    void push(nanos, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (lose(h)) drop(h);
            else pass(h, out);
        }
    }

private:
    bool lose(handle h) {
        const std::uint64_t k = seen_++;
        if (model_ == "bernoulli") return rng_.chance(p_);
        if (model_ == "gilbert_elliott") {
            bad_ = bad_ ? !rng_.chance(p_bg_) : rng_.chance(p_gb_);
            return rng_.chance(bad_ ? loss_bad_ : loss_good_);
        }
        if (model_ == "every_nth") return static_cast<std::int64_t>(k) >= offset_ && (static_cast<std::int64_t>(k) - offset_) % nth_ == 0;
        if (model_ == "ppsn_list") {
            auto d = wire::decode_ethernet(pool_.view(h), {.verify_icrc = false});
            if (!d.ok() || !d.f.has(wire::has_mrh)) return false;
            for (auto& [ppsn, used] : ppsns_) {
                if (ppsn == d.f.bth.psn && !(once_ && used)) {
                    used = true;
                    return true;
                }
            }
        }
        return false;
    }
    std::string model_;
    double p_, p_gb_, p_bg_, loss_good_, loss_bad_;
    std::int64_t nth_, offset_;
    bool once_;
    bool bad_ = false;
    std::uint64_t seen_ = 0;
    std::vector<std::pair<std::uint32_t, bool>> ppsns_;
};

// ---------------------------------------------------------------- match_drop
// Drops packets whose decoded fields match a rule: opcode, PPSN, PathID,
// StreamID, Tag (-1 = any); lets the first `skip` matches pass, then drops
// `count` of them (0 = all).
class match_drop_stage final : public stage {
public:
    match_drop_stage(packet_pool& p, core::rng r, const params& v)
        : stage(p, r), opcode_(v.choice("opcode")), ppsn_(v.integer("ppsn")), path_id_(v.integer("path_id")),
          stream_id_(v.integer("stream_id")), tag_(v.integer("tag")), skip_(v.integer("skip")),
          count_(v.integer("count")) {}
    std::string_view kind() const override { return "match_drop"; }
    void push(nanos, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (matches(h) && matched_++ >= skip_ && (count_ == 0 || dropped_ < count_)) {
                ++dropped_;
                drop(h);
            } else {
                pass(h, out);
            }
        }
    }

private:
    bool matches(handle h) {
        auto d = wire::decode_ethernet(pool_.view(h), {.verify_icrc = false});
        if (!d.ok()) return false;
        const auto& f = d.f;
        if (opcode_ != "any" && wire::opcode_name(f.bth.opcode) != opcode_) return false;
        if (ppsn_ >= 0 && f.bth.psn != static_cast<std::uint32_t>(ppsn_)) return false;
        const bool mrh = f.has(wire::has_mrh);
        auto path = mrh ? f.mrh.path_id : f.has(wire::has_ackh) ? f.ackh.path_id : -1;
        if (path_id_ >= 0 && path != path_id_) return false;
        if (stream_id_ >= 0 && (!mrh || f.mrh.stream_id != stream_id_)) return false;
        if (tag_ >= 0 && (!mrh || f.mrh.tag != tag_)) return false;
        return true;
    }
    std::string opcode_;
    std::int64_t ppsn_, path_id_, stream_id_, tag_, skip_, count_;
    std::int64_t matched_ = 0, dropped_ = 0;
};

// ---------------------------------------------------------------- duplicate
class duplicate_stage final : public stage {
public:
    duplicate_stage(packet_pool& p, core::rng r, const params& v) : stage(p, r), p_(v.real("p")) {}
    std::string_view kind() const override { return "duplicate"; }
    void push(nanos, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            pass(h, out);
            if (rng_.chance(p_)) {
                ++c_.duplicated;
                pass(pool_.clone(h), out);
            }
        }
    }

private:
    double p_;
};

// ---------------------------------------------------------------- corrupt
// Flips `bits` random bits in the bytes from the UDP payload on (BTH .. ICRC),
// where the receiver's ICRC check must catch them.
class corrupt_stage final : public stage {
public:
    corrupt_stage(packet_pool& p, core::rng r, const params& v) : stage(p, r), p_(v.real("p")), bits_(v.integer("bits")) {}
    std::string_view kind() const override { return "corrupt"; }
    void push(nanos, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (rng_.chance(p_)) corrupt(h);
            pass(h, out);
        }
    }

private:
    void corrupt(handle h) {
        auto f = pool_.data(h);
        int ip = ip_offset(f);
        if (ip < 0) return;
        const std::size_t ihl = (f[ip] >> 4) == 4 ? std::size_t(f[ip] & 0xF) * 4 : 40;
        const std::size_t start = ip + ihl + 8;
        // Positions on the wire: a described payload (packet_meta::elided)
        // sits just before the last 4 bytes (the ICRC). A flip there changes
        // no byte the frame holds; what it changes is the CRC the receiver
        // computes, by a delta that depends only on the bit's distance from
        // the end of the covered bytes (CRC-32 is linear), so it is applied to
        // the carried ICRC instead: the receiver's check fails exactly when
        // it would over the real bytes.
        const std::size_t elided = pool_.meta(h).elided, wire = f.size() + elided;
        if (start >= wire) return;
        const std::size_t gap = f.size() >= 4 ? f.size() - 4 : f.size();  // where the described bytes begin
        for (std::int64_t i = 0; i < bits_; ++i) {
            const std::size_t at = start + rng_.below(wire - start);
            const auto bit = static_cast<unsigned>(rng_.below(8));
            if (at < gap) {
                f[at] ^= static_cast<std::uint8_t>(1u << bit);
            } else if (at >= gap + elided) {
                f[at - elided] ^= static_cast<std::uint8_t>(1u << bit);
            } else {
                const std::uint32_t delta = wire::crc32_flip_delta(gap + elided - at, bit);
                for (int k = 0; k < 4; ++k) f[gap + k] ^= static_cast<std::uint8_t>(delta >> (8 * k));  // ICRC: LSB first
            }
        }
        ++c_.corrupted;
    }
    double p_;
    std::int64_t bits_;
};

// ---------------------------------------------------------------- ecn_mark
// Sets CE on ECT packets with probability p (switch marking without a queue).
class ecn_mark_stage final : public stage {
public:
    ecn_mark_stage(packet_pool& p, core::rng r, const params& v) : stage(p, r), p_(v.real("p")) {}
    std::string_view kind() const override { return "ecn_mark"; }
    void push(nanos, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (rng_.chance(p_) && mark_ce(pool_.data(h))) ++c_.marked;
            pass(h, out);
        }
    }

private:
    double p_;
};

// ---------------------------------------------------------------- queue
// A FIFO served at `rate` (serialization delay = bytes*8/rate), tail-dropping
// beyond `buffer` bytes. With `ecn`, RED marking at dequeue on the bytes still
// queued: below kmin never, above kmax always, between with probability rising
// linearly to pmax.
class queue_stage final : public stage {
public:
    queue_stage(packet_pool& p, core::rng r, const params& v)
        : stage(p, r), rate_(v.rate_bps("rate")), buffer_(v.integer("buffer")), ecn_(v.boolean("ecn")),
          kmin_(v.integer("kmin")), kmax_(v.integer("kmax")), pmax_(v.real("pmax")) {}
    std::string_view kind() const override { return "queue"; }
    void push(nanos now, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            const std::uint32_t len = pool_.wire_len(h);
            if (rate_ <= 0) {
                pass(h, out);
                continue;
            }
            if (bytes_ + len > static_cast<std::uint64_t>(buffer_)) {
                drop(h);
                continue;
            }
            const nanos start = std::max(now, last_departure_);
            last_departure_ = start + nanos{static_cast<std::int64_t>(std::ceil(len * 8.0 * 1e9 / rate_))};
            q_.push_back({h, last_departure_});
            bytes_ += len;
            max_bytes_ = std::max(max_bytes_, bytes_);
        }
    }
    void poll(nanos now, std::vector<handle>& out) override {
        while (!q_.empty() && q_.front().departs <= now) {
            handle h = q_.front().h;
            q_.pop_front();
            bytes_ -= pool_.wire_len(h);
            if (ecn_ && should_mark() && mark_ce(pool_.data(h))) ++c_.marked;
            pass(h, out);
        }
    }
    nanos next_event() const override { return q_.empty() ? core::k_never : q_.front().departs; }

private:
    bool should_mark() {
        const auto q = static_cast<std::int64_t>(bytes_);
        if (q <= kmin_) return false;
        if (q >= kmax_) return true;
        return rng_.chance(pmax_ * static_cast<double>(q - kmin_) / static_cast<double>(kmax_ - kmin_));
    }
    struct held {
        handle h;
        nanos departs;
    };
    double rate_;
    std::int64_t buffer_;
    bool ecn_;
    std::int64_t kmin_, kmax_;
    double pmax_;
    core::ring<held> q_;
    std::uint64_t bytes_ = 0, max_bytes_ = 0;
    nanos last_departure_{0};
};

// ---------------------------------------------------------------- delay
// Propagation delay plus jitter: none, uniform in [0, jitter], normal with
// sigma = jitter (negative draws clipped to 0), or pareto with scale = jitter
// and shape `pareto_shape`. With keep_order a packet never overtakes an earlier
// one (a single link); without it jitter reorders.
class delay_stage final : public stage {
public:
    delay_stage(packet_pool& p, core::rng r, const params& v)
        : stage(p, r), delay_(v.duration("delay")), jitter_kind_(v.choice("jitter")), jitter_(v.duration("jitter_param")),
          shape_(v.real("pareto_shape")), keep_order_(v.boolean("keep_order")) {}
    std::string_view kind() const override { return "delay"; }
    void set_delay(nanos d) { delay_ = d; }
    void push(nanos now, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            nanos t = now + delay_ + draw_jitter();
            if (keep_order_) t = std::max(t, last_);
            last_ = std::max(last_, t);
            if (t <= now) {
                pass(h, out);
                continue;
            }
            ++c_.delayed;
            line_.push({t, seq_++, h});
        }
    }
    void poll(nanos now, std::vector<handle>& out) override {
        while (!line_.empty() && line_.top().t <= now) {
            pass(line_.top().h, out);
            line_.pop();
        }
    }
    nanos next_event() const override { return line_.empty() ? core::k_never : line_.top().t; }

private:
    nanos draw_jitter() {
        const double j = static_cast<double>(jitter_.count());
        if (jitter_kind_ == "none" || j <= 0) return nanos{0};
        double x = 0;
        if (jitter_kind_ == "uniform") {
            x = static_cast<double>(rng_.below(static_cast<std::uint64_t>(j) + 1));
        } else if (jitter_kind_ == "normal") {
            // Box-Muller from two uniforms in (0, 1].
            double u1 = (static_cast<double>(rng_.next() >> 11) + 1) * 0x1.0p-53;
            double u2 = static_cast<double>(rng_.next() >> 11) * 0x1.0p-53;
            x = std::max(0.0, j * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
        } else {  // pareto: scale * (U^(-1/shape) - 1), 0-based so the median stays small
            double u = (static_cast<double>(rng_.next() >> 11) + 1) * 0x1.0p-53;
            x = j * (std::pow(u, -1.0 / shape_) - 1);
            x = std::min(x, 1e12);
        }
        return nanos{static_cast<std::int64_t>(x)};
    }
    struct held {
        nanos t;
        std::uint64_t seq;
        handle h;
        bool operator>(const held& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };
    nanos delay_;
    std::string jitter_kind_;
    nanos jitter_;
    double shape_;
    bool keep_order_;
    nanos last_{0};
    std::uint64_t seq_ = 0;
    std::priority_queue<held, std::vector<held>, std::greater<held>> line_;
};

// ---------------------------------------------------------------- reorder
// Holds a packet back by `extra` with probability p, so later packets pass it.
class reorder_stage final : public stage {
public:
    reorder_stage(packet_pool& p, core::rng r, const params& v) : stage(p, r), p_(v.real("p")), extra_(v.duration("extra")) {}
    std::string_view kind() const override { return "reorder"; }
    void push(nanos now, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (rng_.chance(p_)) {
                ++c_.delayed;
                held_.push_back({now + extra_, h});
            } else {
                pass(h, out);
            }
        }
    }
    void poll(nanos now, std::vector<handle>& out) override {
        while (!held_.empty() && held_.front().first <= now) {
            pass(held_.front().second, out);
            held_.pop_front();
        }
    }
    nanos next_event() const override { return held_.empty() ? core::k_never : held_.front().first; }

private:
    double p_;
    nanos extra_;
    core::ring<std::pair<nanos, handle>> held_;
};

// ---------------------------------------------------------------- blackhole
// Drops everything while failed: from fail_at until restore_at (both "never"
// by default); a plan can also fail and restore it at any time.
class blackhole_stage final : public stage {
public:
    blackhole_stage(packet_pool& p, core::rng r, const params& v)
        : stage(p, r), fail_at_(v.duration("fail_at")), restore_at_(v.duration("restore_at")) {}
    std::string_view kind() const override { return "blackhole"; }
    void push(nanos now, std::span<const handle> in, std::vector<handle>& out) override {
        for (handle h : in) {
            ++c_.in;
            if (now >= fail_at_ && now < restore_at_) drop(h);
            else pass(h, out);
        }
    }

private:
    nanos fail_at_, restore_at_;
};

template <typename T>
std::unique_ptr<stage> make(packet_pool& p, core::rng r, const params& v) {
    return std::make_unique<T>(p, r, v);
}

param_decl prob(const std::string& name, const std::string& def, const std::string& doc) {
    return {name, param_type::real, def, 0, 1, {}, doc};
}
param_decl any_int(const std::string& name, const std::string& doc) {
    return {name, param_type::integer, "-1", -1, 16777215, {}, doc};
}

}  // namespace

const std::vector<stage_kind>& builtin_stages() {
    static const std::vector<stage_kind> k_stages = {
        {"loss", "Random or deterministic loss.",
         {{"model", param_type::choice, "bernoulli", 0, 0,
           {"bernoulli", "gilbert_elliott", "every_nth", "ppsn_list"}, "loss model"},
          prob("p", "0", "bernoulli: loss probability"),
          prob("p_gb", "0", "gilbert_elliott: probability good -> bad per packet"),
          prob("p_bg", "1", "gilbert_elliott: probability bad -> good per packet"),
          prob("loss_good", "0", "gilbert_elliott: loss probability in the good state"),
          prob("loss_bad", "1", "gilbert_elliott: loss probability in the bad state"),
          {"nth", param_type::integer, "1000000", 1, 1e15, {}, "every_nth: drop every nth packet"},
          {"offset", param_type::integer, "0", 0, 1e15, {}, "every_nth: index (from 0) of the first dropped packet"},
          {"ppsns", param_type::int_list, "", 0, -1, {}, "ppsn_list: data-packet PPSNs to drop"},
          {"once", param_type::boolean, "true", 0, 0, {}, "ppsn_list: drop each listed PPSN only once (retransmissions pass)"}},
         &make<loss_stage>},
        {"match_drop", "Drops packets matching decoded fields.",
         {{"opcode", param_type::choice, "any", 0, 0,
           {"any", "WRITE", "WRITE_IMM", "SEND", "SEND_IMM", "ACK", "NAK", "RNR", "CTRL"}, "BTH opcode"},
          any_int("ppsn", "BTH PSN (-1 any)"), any_int("path_id", "MRH/ACKH PathID (-1 any)"),
          any_int("stream_id", "MRH StreamID (-1 any)"), any_int("tag", "MRH Tag (-1 any)"),
          {"skip", param_type::integer, "0", 0, 1e15, {}, "matches to let pass first"},
          {"count", param_type::integer, "1", 0, 1e15, {}, "matches to drop after that (0 = all)"}},
         &make<match_drop_stage>},
        {"duplicate", "Duplicates packets.", {prob("p", "0", "duplication probability")}, &make<duplicate_stage>},
        {"corrupt", "Flips bits after the UDP header (the ICRC must catch them).",
         {prob("p", "0", "corruption probability"),
          {"bits", param_type::integer, "1", 1, 64, {}, "bits flipped per corrupted packet"}},
         &make<corrupt_stage>},
        {"ecn_mark", "Sets CE on ECT packets at random.", {prob("p", "0", "marking probability")}, &make<ecn_mark_stage>},
        {"queue", "Rate-limited FIFO with tail drop and RED ECN marking at dequeue.",
         {{"rate", param_type::rate, "0", 0, 1.6e12, {}, "service rate, bit/s (0 = no queue)"},
          {"buffer", param_type::integer, "1048576", 0, 1e12, {}, "buffer size, bytes"},
          {"ecn", param_type::boolean, "false", 0, 0, {}, "RED ECN marking"},
          {"kmin", param_type::integer, "65536", 0, 1e12, {}, "RED: no marking at or below, bytes"},
          {"kmax", param_type::integer, "262144", 1, 1e12, {}, "RED: always mark at or above, bytes"},
          prob("pmax", "0.2", "RED: marking probability just below kmax")},
         &make<queue_stage>},
        {"delay", "Propagation delay and jitter.",
         {{"delay", param_type::duration, "1us", 0, 1e12, {}, "fixed one-way delay"},
          {"jitter", param_type::choice, "none", 0, 0, {"none", "uniform", "normal", "pareto"}, "jitter distribution"},
          {"jitter_param", param_type::duration, "0", 0, 1e12, {}, "uniform: max; normal: sigma; pareto: scale"},
          {"pareto_shape", param_type::real, "1.5", 0.1, 100, {}, "pareto: shape"},
          {"keep_order", param_type::boolean, "true", 0, 0, {}, "jitter never reorders"}},
         &make<delay_stage>},
        {"reorder", "Holds packets back so later ones pass them.",
         {prob("p", "0", "probability a packet is held back"),
          {"extra", param_type::duration, "10us", 0, 1e12, {}, "how long it is held"}},
         &make<reorder_stage>},
        {"blackhole", "Drops everything between fail_at and restore_at.",
         {{"fail_at", param_type::duration, "never", 0, -1, {}, "time the path fails"},
          {"restore_at", param_type::duration, "never", 0, -1, {}, "time it is restored"}},
         &make<blackhole_stage>},
    };
    return k_stages;
}

const stage_kind* find_stage_kind(std::string_view kind) {
    for (const auto& k : builtin_stages())
        if (k.kind == kind) return &k;
    return nullptr;
}

core::result<stage_recipe> stage_recipe_of(std::string_view kind, const param_map& given) {
    const stage_kind* k = find_stage_kind(kind);
    if (!k) {
        std::string all;
        for (const auto& s : builtin_stages()) all += (all.empty() ? "" : ", ") + s.kind;
        return core::error{"unknown stage '" + std::string(kind) + "' (expected one of: " + all + ")"};
    }
    auto p = params::parse(k->kind, k->decls, given);
    if (!p) return p.err();
    return stage_recipe{k, std::move(*p)};
}

std::unique_ptr<stage> make_stage(const stage_recipe& recipe, packet_pool& pool, core::rng rng) {
    return recipe.kind->make(pool, rng, recipe.params);
}

core::result<std::unique_ptr<stage>> make_stage(std::string_view kind, const param_map& given, packet_pool& pool,
                                                core::rng rng) {
    auto r = stage_recipe_of(kind, given);
    if (!r) return r.err();
    return make_stage(*r, pool, rng);
}

bool mark_ce(std::span<std::uint8_t> f) {
    int ip = ip_offset(f);
    if (ip < 0 || f.size() < static_cast<std::size_t>(ip) + 20) return false;
    if ((f[ip] >> 4) == 4) {
        if ((f[ip + 1] & 3) == 0) return false;
        f[ip + 1] |= 3;
        f[ip + 10] = f[ip + 11] = 0;
        const std::size_t ihl = std::size_t(f[ip] & 0xF) * 4;
        std::uint16_t ck = wire::internet_checksum(core::bytes_view(f.data() + ip, ihl));
        f[ip + 10] = static_cast<std::uint8_t>(ck >> 8);
        f[ip + 11] = static_cast<std::uint8_t>(ck);
        return true;
    }
    if ((f[ip] >> 4) == 6) {
        // ECN is the low 2 bits of the traffic class: bits 5..4 of byte 1.
        if (((f[ip + 1] >> 4) & 3) == 0) return false;
        f[ip + 1] |= 0x30;
        return true;
    }
    return false;
}

std::string stages_markdown() {
    static const char* k_types[] = {"integer", "number", "duration", "rate", "boolean", "choice", "integer list"};
    std::ostringstream o;
    for (const auto& k : builtin_stages()) {
        o << "### `" << k.kind << "`\n\n" << k.doc << "\n\n| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n";
        for (const auto& p : k.decls) {
            o << "| `" << p.name << "` | " << k_types[static_cast<int>(p.type)] << " | `" << p.default_value << "` | ";
            if (p.type == param_type::choice) {
                for (std::size_t i = 0; i < p.choices.size(); ++i) o << (i ? ", " : "") << p.choices[i];
            } else if (p.max >= p.min && p.type != param_type::boolean) {
                o << p.min << " .. " << p.max;
            }
            o << " | " << p.doc << " |\n";
        }
        o << "\n";
    }
    return o.str();
}

}  // namespace mrct::fabric
