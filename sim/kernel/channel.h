// Channel<T>: a FIFO message queue between processes, bounded or unbounded, with close().
//
// Hand-over is direct: a send to a blocked receiver writes into the receiver's slot, and a
// receive that frees space pulls the longest-blocked sender's value in, so a newcomer never
// overtakes a waiter (no retry loops, bounded work per call). Which blocked receiver or sender is
// served is a kWake choice (tape.h): the longest blocked unless the schedule policy decides.
#pragma once

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/kernel/sync.h"

namespace racesim::kernel {

// A FIFO ring buffer that grows by doubling and allocates nothing until the first push (a
// std::deque allocates a 512-byte node per instance up front, and touches more cache lines per
// operation). REQUIRES: T is default-constructible and move-assignable.
template <typename T>
class RingBuffer {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  void push_back(T v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = std::move(v);
    ++size_;
  }
  void pop_front() {
    assert(size_ > 0);
    buf_[head_] = T();  // release what the value holds now, not when overwritten
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<T> next(buf_.empty() ? 2 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) next[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
    buf_ = std::move(next);
    head_ = 0;
  }
  std::vector<T> buf_;  // capacity is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

template <typename T>
class Channel final : public NamedWaitable {
 public:
  static constexpr std::size_t kUnbounded = SIZE_MAX;

  // REQUIRES: capacity >= 1.
  Channel(Simulation& sim, std::string name, std::size_t capacity = kUnbounded)
      : NamedWaitable(sim, "channel", std::move(name)), capacity_(capacity) {
    assert(capacity >= 1);
  }

  // Blocks while the channel is full. kOk: delivered; kClosed: the channel is (or became)
  // closed and the value was dropped; kTimeout: not delivered.
  WaitStatus send(T value, Time timeout = kTimeMax) {
    if (closed_) return WaitStatus::kClosed;
    if (Process* r = sim_.choose_waiter(receivers_)) {  // a kWake choice (tape.h)
      *static_cast<T*>(r->wait_slot()) = std::move(value);
      sim_.wake(r);
      return WaitStatus::kOk;
    }
    if (buffer_.size() < capacity_) {
      buffer_.push_back(std::move(value));
      return WaitStatus::kOk;
    }
    return sim_.wait_on(&senders_, sim_.deadline_after(timeout), &value);
  }
  // Non-blocking send: kOk, kClosed, or kTimeout when full.
  WaitStatus try_send(T value) {
    if (closed_) return WaitStatus::kClosed;
    if (receivers_.empty() && buffer_.size() >= capacity_) return WaitStatus::kTimeout;
    return send(std::move(value), 0);
  }

  // Blocks while the channel is empty. kOk: `out` holds the value; kClosed: closed and
  // drained; kTimeout: nothing arrived.
  WaitStatus recv(T& out, Time timeout = kTimeMax) {
    if (!buffer_.empty()) {
      out = std::move(buffer_.front());
      buffer_.pop_front();
      if (Process* s = sim_.choose_waiter(senders_)) {  // a kWake choice (tape.h)
        buffer_.push_back(std::move(*static_cast<T*>(s->wait_slot())));
        sim_.wake(s);
      }
      return WaitStatus::kOk;
    }
    if (closed_) return WaitStatus::kClosed;
    return sim_.wait_on(&receivers_, sim_.deadline_after(timeout), &out);
  }
  WaitStatus try_recv(T& out) {
    if (buffer_.empty()) return closed_ ? WaitStatus::kClosed : WaitStatus::kTimeout;
    return recv(out, 0);
  }

  // Blocked senders get kClosed; blocked receivers get kClosed (the buffer is empty when any
  // receiver is blocked); buffered values stay receivable.
  void close() {
    if (closed_) return;
    closed_ = true;
    sim_.wake_all(senders_, WaitStatus::kClosed);
    sim_.wake_all(receivers_, WaitStatus::kClosed);
  }

  bool closed() const { return closed_; }
  std::size_t size() const { return buffer_.size(); }
  std::size_t capacity() const { return capacity_; }
  std::size_t blocked_senders() const { return senders_.size(); }
  std::size_t blocked_receivers() const { return receivers_.size(); }

 private:
  std::size_t capacity_;
  bool closed_ = false;
  RingBuffer<T> buffer_;
  WaitQueue senders_{this, "send"};
  WaitQueue receivers_{this, "recv"};
};

}  // namespace racesim::kernel
