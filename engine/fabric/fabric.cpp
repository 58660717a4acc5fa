#include "fabric/fabric.h"

#include <algorithm>

#include "fabric/frame_offsets.h"

#include "wire/protocol.h"

namespace mrct::fabric {

path::path(sim::scheduler& s, packet_pool& pool, std::vector<std::unique_ptr<stage>> stages,
           std::function<void(handle)> deliver)
    : s_(s), pool_(pool), stages_(std::move(stages)), deliver_(std::move(deliver)), timer_(s) {
    a_.reserve(64);
    b_.reserve(64);
}

stage* path::find(std::string_view kind) const {
    for (const auto& st : stages_)
        if (st->kind() == kind) return st.get();
    return nullptr;
}

void path::send(handle h) {
    if (failed_) {
        ++dropped_failed_;
        pool_.release(h);
        return;
    }
    a_.clear();
    a_.push_back(h);
    run_from(0);
    rearm();
}

// Pushes the burst in a_ through stages first..end and delivers what comes
// out. The two burst buffers are members, so forwarding allocates nothing
// once they have grown to the largest burst.
void path::run_from(std::size_t first) {
    for (std::size_t i = first; i < stages_.size() && !a_.empty(); ++i) {
        b_.clear();
        stages_[i]->push(s_.now(), a_, b_);
        a_.swap(b_);
    }
    for (handle h : a_) {
        ++delivered_;
        deliver_(h);
    }
    a_.clear();
}

void path::wake() {
    const core::nanos now = s_.now();
    for (std::size_t i = 0; i < stages_.size(); ++i) {
        a_.clear();
        stages_[i]->poll(now, a_);
        if (!a_.empty()) run_from(i + 1);
    }
    rearm();
}

void path::rearm() {
    core::nanos next = core::k_never;
    for (const auto& st : stages_) next = std::min(next, st->next_event());
    if (next == core::k_never) {
        timer_.cancel();
    } else if (!timer_.armed() || timer_.deadline() != next) {
        timer_.arm_at(next, [this] { wake(); });
    }
}

void fabric::deliver(direction d, handle h) {
    if (delivering_ >= k_max_nesting) {  // too deep: delivered by the scheduler, same instant
        deferred_.push_back({d, h});
        if (!deferred_timer_.armed()) deferred_timer_.arm_at(s_.now(), [this] { deliver_deferred(); });
        return;
    }
    hand_over(d, h);
}

void fabric::hand_over(direction d, handle h) {
    ++delivering_;
    auto& r = receivers_[static_cast<int>(d)];
    if (r) r(pool_.view(h), pool_.meta(h));
    pool_.release(h);
    --delivering_;
}

void fabric::deliver_deferred() {
    // In order; what these deliveries send too deep is deferred again, behind them.
    for (std::size_t i = 0; i < deferred_.size(); ++i) {
        const auto [d, h] = deferred_[i];
        hand_over(d, h);
    }
    deferred_.clear();
}

core::result<std::unique_ptr<fabric>> fabric::create(sim::scheduler& s, const fabric_config& cfg, packet_pool* pool) {
    if (cfg.paths < 1 || cfg.paths > 256) return core::error{"fabric: paths must be 1..256"};
    std::unique_ptr<fabric> f(new fabric(s, cfg, pool));
    // Each distinct stage list is validated once, however many paths use it
    // (a simulation gives every path its own equal list); an error names the
    // first path (in A->B, then B->A order) that uses the list.
    std::map<std::vector<stage_spec>, std::vector<stage_recipe>> recipes;
    for (int d = 0; d < 2; ++d) {
        const auto& per = d == 0 ? cfg.path_stages_ab : cfg.path_stages_ba;
        for (unsigned p = 0; p < cfg.paths; ++p) {
            auto it = per.find(p);
            const auto& specs = it == per.end() ? cfg.default_stages : it->second;
            auto [rit, fresh] = recipes.try_emplace(specs);
            if (fresh) {
                for (const auto& spec : specs) {
                    auto r = stage_recipe_of(spec.kind, spec.params);
                    if (!r) return core::error{std::string(d == 0 ? "A->B" : "B->A") + " path " + std::to_string(p) +
                                               ": " + r.err().message};
                    rit->second.push_back(std::move(*r));
                }
            }
            std::vector<std::unique_ptr<stage>> stages;
            for (std::size_t i = 0; i < specs.size(); ++i) {
                const std::string stream = std::string(d == 0 ? "ab" : "ba") + "/path" + std::to_string(p) + "/" +
                                           std::to_string(i) + "/" + specs[i].kind;
                stages.push_back(make_stage(rit->second[i], f->pool_, core::rng(cfg.seed, stream)));
            }
            fabric* self = f.get();
            const auto dir = static_cast<direction>(d);
            f->paths_[d].push_back(std::make_unique<path>(s, f->pool_, std::move(stages),
                                                          [self, dir](handle h) { self->deliver(dir, h); }));
        }
    }
    return f;
}

fabric::fabric(sim::scheduler& s, const fabric_config& cfg, packet_pool* pool)
    : s_(s),
      cfg_(cfg),
      own_pool_(pool ? nullptr : std::make_unique<packet_pool>()),
      pool_(pool ? *pool : *own_pool_),
      ecmp_seed_(core::rng::fnv1a("ecmp") ^ cfg.seed) {}

// Where `sport` is, or would go, in the sorted pin list.
std::size_t fabric::pin_slot(std::uint16_t sport) const {
    auto it = std::lower_bound(pins_.begin(), pins_.end(), sport, [](const auto& e, std::uint16_t v) { return e.first < v; });
    return static_cast<std::size_t>(it - pins_.begin());
}

void fabric::pin(std::uint16_t sport, unsigned path_index) {
    const std::size_t i = pin_slot(sport);
    if (i < pins_.size() && pins_[i].first == sport) pins_[i].second = path_index;
    else pins_.insert(pins_.begin() + static_cast<std::ptrdiff_t>(i), {sport, path_index});
}

unsigned fabric::path_of(std::uint16_t sport) const {
    const std::size_t i = pin_slot(sport);
    if (i < pins_.size() && pins_[i].first == sport) return pins_[i].second % cfg_.paths;
    std::uint64_t h = ecmp_seed_;
    h = (h ^ sport) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return static_cast<unsigned>(h % cfg_.paths);
}

void fabric::send(direction d, core::bytes_view frame, std::int64_t stamp) {
    inject(d, frame_sport(frame), pool_.alloc(frame), stamp);
}

void fabric::send_owned(direction d, core::byte_buffer& frame) {
    const std::uint16_t sport = frame_sport(frame);  // read before adopt() takes the bytes
    inject(d, sport, pool_.adopt(frame));
}

void fabric::inject(direction d, std::uint16_t sport, handle h, std::int64_t stamp) {
    const unsigned p = path_of(sport);
    auto& m = pool_.meta(h);
    m.path = static_cast<std::uint16_t>(p);
    m.direction = static_cast<std::uint8_t>(d);
    m.sent = s_.now();
    m.id = ++sent_;
    m.stamp = stamp;
    paths_[static_cast<int>(d)][p]->send(h);
}

std::uint16_t frame_sport(core::bytes_view f) {
    const int ip = ip_offset(f);
    if (ip < 0 || f.size() <= static_cast<std::size_t>(ip)) return 0;
    const std::size_t udp = static_cast<std::size_t>(ip) + ((f[ip] >> 4) == 4 ? std::size_t(f[ip] & 0xF) * 4 : wire::k_ipv6_len);
    if (f.size() < udp + 2) return 0;
    return static_cast<std::uint16_t>((f[udp] << 8) | f[udp + 1]);
}

}  // namespace mrct::fabric
