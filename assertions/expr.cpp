#include "assertions/expr.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace mrct::assertions {

namespace {

class parser {
public:
    parser(std::string_view s, const name_resolver& n) : s_(s), names_(n) {}

    core::result<double> parse() {
        auto v = expr();
        if (!v) return v;
        skip();
        if (i_ != s_.size()) return fail("unexpected '" + std::string(s_.substr(i_, 1)) + "'");
        return v;
    }

private:
    core::error fail(const std::string& what) const {
        return core::error{"in expression '" + std::string(s_) + "' at column " + std::to_string(i_ + 1) + ": " + what};
    }
    void skip() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool eat(char c) {
        skip();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }

    core::result<double> expr() {
        auto acc = term();
        if (!acc) return acc;
        double v = *acc;
        for (;;) {
            int sign = 0;
            if (eat('+')) sign = 1;
            else if (eat('-')) sign = -1;
            else return v;
            // "x + 10%": a percentage of what came before.
            skip();
            const std::size_t save = i_;
            if (auto num = number(); num) {
                skip();
                if (i_ < s_.size() && s_[i_] == '%') {
                    ++i_;
                    v += sign * v * *num / 100.0;
                    continue;
                }
            }
            i_ = save;
            auto t = term();
            if (!t) return t;
            v += sign * *t;
        }
    }

    core::result<double> term() {
        auto f = factor();
        if (!f) return f;
        double v = *f;
        for (;;) {
            if (eat('*')) {
                auto g = factor();
                if (!g) return g;
                v *= *g;
            } else if (eat('/')) {
                auto g = factor();
                if (!g) return g;
                if (*g == 0) return fail("division by zero");
                v /= *g;
            } else {
                return v;
            }
        }
    }

    std::optional<double> number() {
        skip();
        std::size_t j = i_;
        while (j < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[j])) || s_[j] == '.')) ++j;
        if (j == i_) return std::nullopt;
        double v = 0;
        auto [p, ec] = std::from_chars(s_.data() + i_, s_.data() + j, v);
        if (ec != std::errc{} || p != s_.data() + j) return std::nullopt;
        i_ = j;
        return v;
    }

    core::result<double> factor() {
        skip();
        if (eat('(')) {
            auto v = expr();
            if (!v) return v;
            if (!eat(')')) return fail("expected ')'");
            return v;
        }
        if (auto n = number()) {
            // Optional unit, directly after the number.
            static const std::pair<std::string_view, double> k_units[] = {
                {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
            for (auto [u, mul] : k_units) {
                if (s_.substr(i_, u.size()) == u &&
                    (i_ + u.size() == s_.size() || !std::isalnum(static_cast<unsigned char>(s_[i_ + u.size()])))) {
                    i_ += u.size();
                    return *n * mul;
                }
            }
            return *n;
        }
        std::size_t j = i_;
        while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) ++j;
        if (j == i_) return fail(i_ < s_.size() ? "unexpected '" + std::string(s_.substr(i_, 1)) + "'" : "expression ends early");
        const std::string_view name = s_.substr(i_, j - i_);
        i_ = j;
        std::string_view arg;
        if (eat('(')) {
            skip();
            std::size_t k = i_;
            while (k < s_.size() && s_[k] != ')') ++k;
            if (k == s_.size()) return fail("expected ')'");
            arg = s_.substr(i_, k - i_);
            while (!arg.empty() && std::isspace(static_cast<unsigned char>(arg.back()))) arg.remove_suffix(1);
            i_ = k + 1;
        }
        auto v = names_(name, arg);
        if (!v) return fail("unknown term '" + std::string(name) + (arg.empty() ? "" : "(" + std::string(arg) + ")") + "'");
        if (std::isnan(*v)) return fail("'" + std::string(name) + "' has no value in this run");
        return *v;
    }

    std::string_view s_;
    const name_resolver& names_;
    std::size_t i_ = 0;
};

}  // namespace

core::result<double> eval_expr(std::string_view text, const name_resolver& names) {
    return parser(text, names).parse();
}

core::status check_expr(std::string_view text, const std::function<bool(std::string_view)>& known) {
    name_resolver r = [&](std::string_view name, std::string_view) -> std::optional<double> {
        if (!known(name)) return std::nullopt;
        return 1.0;
    };
    auto v = eval_expr(text, r);
    if (!v) return v.err();
    return core::ok_status();
}

}  // namespace mrct::assertions
