// result<T>: a value or an error a user can act on.
//
// The error model of the layers above the codec (files, CLI, plans): an error is
// a value carrying a message, never an exception crossing a module boundary.
// Wire input that cannot be decoded is not an error but a drop (see wire/drop.h);
// a broken invariant is an assert.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace mrct::core {

struct error {
    std::string message;
};

template <typename T>
class [[nodiscard]] result {
public:
    result(T value) : v_(std::move(value)) {}
    result(error e) : v_(std::move(e)) {}

    bool ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<T>(v_); }
    const T& value() const& { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() { return value(); }
    const error& err() const { return std::get<error>(v_); }

private:
    std::variant<T, error> v_;
};

struct ok_t {};
using status = result<ok_t>;
inline status ok_status() { return ok_t{}; }

}  // namespace mrct::core
