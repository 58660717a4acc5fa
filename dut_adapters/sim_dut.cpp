#include "dut_adapters/dut.h"

namespace mrct::dut {

namespace {

class sim_dut final : public dut {
public:
    sim_dut(std::string bug, std::uint32_t variants) : bug_(std::move(bug)), variants_(variants) {}

    info hello() const override {
        return {variants_ ? "mrct-reference (in-process, variant " + endpoint::variants_text(variants_) + ")"
                          : "mrct-reference (in-process)", "metaroce-1.2-model", bug_.empty() ? "none" : bug_,
                {"write", "write_imm", "send", "send_imm", "ipv4", "fine_timing", "virtual_time", "raw_frames", "raw_rx",
                 "wire_headers"}};
    }
    core::status configure(const std::map<std::string, std::string>& params) override {
        for (const auto& [k, v] : params)
            if (auto st = endpoint::config_set(cfg_, k, v); !st) return st;
        return core::ok_status();
    }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        if (!bug_.empty())
            if (auto st = endpoint::config_set(cfg_, "bug", bug_); !st) return st;
        cfg_.variants = variants_;
        ep_ = std::make_unique<endpoint::endpoint>(s, cfg_, self, seed,
                                                   [tx = std::move(tx)](core::bytes_view f) { tx(f, core::nanos{0}); });
        return core::ok_status();
    }
    void receive(core::bytes_view f) override { ep_->receive(f); }
    void listen() override { ep_->listen(); }
    std::uint32_t connect(endpoint::address peer) override { return ep_->connect(peer); }
    bool established(std::uint32_t c) const override { return ep_->established(c); }
    std::vector<std::uint32_t> accepted() const override { return ep_->accepted(); }
    bool in_error(std::uint32_t c) const override { return ep_->in_error(c); }
    core::status close(std::uint32_t c) override { return ep_->close(c); }
    std::uint32_t register_mr(std::size_t len) override { return ep_->register_mr(len); }
    std::uint64_t mr_va(std::uint32_t rkey) const override { return ep_->mr_va(rkey); }
    core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t off, std::uint32_t len,
                           std::uint64_t wr_id) override {
        return ep_->post_recv(conn, tag, rkey, off, len, wr_id);
    }
    core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t va,
                            std::uint32_t rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        return ep_->post_write(conn, stream, data, va, rkey, wr_id, imm);
    }
    core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                           std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        return ep_->post_send(conn, stream, tag, data, wr_id, imm);
    }
    std::vector<endpoint::completion> poll() override { return ep_->poll(); }
    core::result<core::byte_buffer> read_mem(std::uint32_t rkey, std::uint64_t off, std::size_t len) override {
        auto m = ep_->mr_bytes(rkey);
        if (off + len > m.size()) return core::error{"read_mem beyond the region"};
        return core::byte_buffer(m.begin() + static_cast<std::ptrdiff_t>(off), m.begin() + static_cast<std::ptrdiff_t>(off + len));
    }
    std::map<std::string, std::uint64_t> counters() const override { return endpoint_counters(ep_->stats()); }

private:
    std::string bug_;
    std::uint32_t variants_ = 0;
    endpoint::config cfg_;
    std::unique_ptr<endpoint::endpoint> ep_;
};

}  // namespace

std::unique_ptr<dut> make_sim(const std::string& bug, std::uint32_t variants) {
    return std::make_unique<sim_dut>(bug, variants);
}

std::map<std::string, std::uint64_t> endpoint_counters(const endpoint::counters& k) { return endpoint::counter_map(k); }

}  // namespace mrct::dut
