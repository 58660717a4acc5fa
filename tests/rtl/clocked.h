// A Verilated unit driven as the RTL shell drives it (docs/rtl.md, "Clock
// model"): reset once, `now` set to the virtual time, one clock edge per
// command, nothing in between.
#pragma once

#include <cstdint>
#include <memory>

#include "verilated.h"

namespace mrct::test {

template <class V>
struct clocked {
    VerilatedContext ctx;
    std::unique_ptr<V> m{new V(&ctx)};
    // `configure` sets the unit's static inputs before reset.
    template <class F>
    explicit clocked(F&& configure) {
        configure(*m);
        m->rst_n = 0;
        m->clk = 0;
        m->eval();
        m->rst_n = 1;
        m->eval();
    }
    clocked() : clocked([](V&) {}) {}
    void at(std::int64_t t) {
        m->now = static_cast<std::uint64_t>(t);
        m->eval();
    }
    // One command: the caller has set its inputs; cmd_valid for one edge.
    void pulse() {
        m->cmd_valid = 1;
        m->eval();
        m->clk = 1;
        m->eval();
        m->clk = 0;
        m->cmd_valid = 0;
        m->eval();
    }
};

}  // namespace mrct::test
