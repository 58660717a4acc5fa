// A FIFO on one growable power-of-two array: push_back, pop_front and
// indexing, without std::deque's block allocations as it slides (transport
// windows and fabric queues slide by one element per packet).
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace mrct::core {

template <typename T>
class ring {
public:
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](std::size_t i) {
        assert(i < size_);
        return buf_[(head_ + i) & mask_];
    }
    const T& operator[](std::size_t i) const {
        assert(i < size_);
        return buf_[(head_ + i) & mask_];
    }
    T& front() { return (*this)[0]; }
    const T& front() const { return (*this)[0]; }
    T& back() { return (*this)[size_ - 1]; }
    void push_back(T v) {
        if (size_ == buf_.size()) grow();
        buf_[(head_ + size_) & mask_] = std::move(v);
        ++size_;
    }
    void pop_front() {
        assert(size_ > 0);
        buf_[head_] = T{};  // drops what it held now, as std::deque would
        head_ = (head_ + 1) & mask_;
        --size_;
    }
    void clear() {
        while (!empty()) pop_front();
        head_ = 0;
    }

    template <typename R, typename E>
    class iter {
    public:
        iter(R* r, std::size_t i) : r_(r), i_(i) {}
        E& operator*() const { return (*r_)[i_]; }
        E* operator->() const { return &(*r_)[i_]; }
        iter& operator++() {
            ++i_;
            return *this;
        }
        bool operator==(const iter& o) const { return i_ == o.i_; }

    private:
        R* r_;
        std::size_t i_;
    };
    using iterator = iter<ring, T>;
    using const_iterator = iter<const ring, const T>;
    iterator begin() { return {this, 0}; }
    iterator end() { return {this, size_}; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size_}; }

private:
    void grow() {
        std::vector<T> bigger(buf_.empty() ? 8 : buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
        buf_ = std::move(bigger);
        head_ = 0;
        mask_ = buf_.size() - 1;
    }
    std::vector<T> buf_;
    std::size_t head_ = 0, size_ = 0, mask_ = 0;
};

}  // namespace mrct::core
