// A move-only callable stored in place (no heap allocation), for scheduler
// events on the hot path. A callable that does not fit is a compile error.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace mrct::sim {

template <std::size_t Capacity = 48>
class inplace_callback {
public:
    inplace_callback() = default;
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, inplace_callback>>>
    inplace_callback(F&& f) {  // NOLINT: implicit by design, like std::function
        using T = std::decay_t<F>;
        static_assert(sizeof(T) <= Capacity, "callback too large for inplace_callback: capture less");
        static_assert(alignof(T) <= alignof(std::max_align_t));
        new (buf_) T(std::forward<F>(f));
        ops_ = &ops_for<T>;
        trivial_ = std::is_trivially_copyable_v<T>;
    }
    inplace_callback(inplace_callback&& o) noexcept { take(o); }
    inplace_callback& operator=(inplace_callback&& o) noexcept {
        if (this != &o) {
            reset();
            take(o);
        }
        return *this;
    }
    inplace_callback(const inplace_callback&) = delete;
    inplace_callback& operator=(const inplace_callback&) = delete;
    ~inplace_callback() { reset(); }

    explicit operator bool() const { return ops_ != nullptr; }
    void operator()() { ops_->call(buf_); }
    void reset() {
        if (ops_ && !trivial_) ops_->destroy(buf_);
        ops_ = nullptr;
    }

private:
    struct ops {
        void (*call)(void*);
        void (*move)(void* dst, void* src);
        void (*destroy)(void*);
    };
    template <typename T>
    static constexpr ops ops_for = {
        [](void* p) { (*static_cast<T*>(p))(); },
        [](void* d, void* s) {
            new (d) T(std::move(*static_cast<T*>(s)));
            static_cast<T*>(s)->~T();
        },
        [](void* p) { static_cast<T*>(p)->~T(); },
    };
    // Most events capture a few pointers and integers: those move as bytes,
    // without an indirect call, and need no destructor.
    void take(inplace_callback& o) {
        if (!o.ops_) return;
        if (o.trivial_) std::memcpy(buf_, o.buf_, Capacity);
        else o.ops_->move(buf_, o.buf_);
        ops_ = o.ops_;
        trivial_ = o.trivial_;
        o.ops_ = nullptr;
    }
    alignas(std::max_align_t) unsigned char buf_[Capacity];
    const ops* ops_ = nullptr;
    bool trivial_ = false;
};

}  // namespace mrct::sim
