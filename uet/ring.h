// A FIFO on a power-of-two ring that keeps its storage: push_back and
// pop_front allocate nothing once it has held its peak size (std::deque
// frees and allocates a block every few elements; issue 20). Forward
// iteration, front to back, for the few callers that walk it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace uet {

template <typename T>
class Ring {
 public:
  template <typename R, typename V>
  class Iter {
   public:
    Iter(R* ring, size_t i) : ring_(ring), i_(i) {}
    V& operator*() const { return ring_->at(i_); }
    V* operator->() const { return &ring_->at(i_); }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    R* ring_;
    size_t i_;
  };
  using iterator = Iter<Ring, T>;
  using const_iterator = Iter<const Ring, const T>;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return at(0); }
  const T& front() const { return at(0); }

  void push_back(T v) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(v);
    ++size_;
  }
  void pop_front() {
    slots_[head_] = T{};
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  void clear() {
    while (!empty()) pop_front();
  }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  // The i-th element from the front (i < size()).
  T& at(size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& at(size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }

 private:
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(at(i));
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace uet
