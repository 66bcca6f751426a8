// Status and Result<T>: operating errors as values (bad input, a failed operation).
// Programmer errors (broken invariants) are asserts, not Statuses.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace racesim::kernel {

// An error message, or ok. Cheap to copy when ok.
class Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !message_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  // REQUIRES: !is_ok().
  const std::string& message() const {
    assert(message_.has_value());
    return *message_;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

// A value or an error message.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).is_ok()); }
  static Result error(std::string message) { return Result(Status::error(std::move(message))); }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  // REQUIRES: is_ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  // REQUIRES: !is_ok().
  const std::string& message() const { return std::get<Status>(v_).message(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace racesim::kernel
