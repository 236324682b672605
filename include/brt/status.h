// Status and Expected<T>: how every brt API reports failure.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace brt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed something wrong
  kNotFound,            // a name, file or symbol does not exist
  kInvalidExecutable,   // the .brtx bytes are malformed or inconsistent
  kUnsupported,         // valid, but nothing here can run it
  kFailedPrecondition,  // called in the wrong state (e.g. output before run)
  kResourceExhausted,   // an allocation failed
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}
  Expected(Status status) : data_(std::move(status)) { assert(!std::get<Status>(data_).ok()); }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace brt

#define BRT_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::brt::Status brt_status_ = (expr);        \
    if (!brt_status_.ok()) return brt_status_; \
  } while (0)
