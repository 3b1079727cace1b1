// Status and Result<T>: hase's one error path inside the library.
//
// Modelled on leveldb::Status. Success is the cheap default; each failure kind has a named
// factory and an IsX() check. A Status carries the message (what went wrong), where it went
// wrong (file:line, node name, YAML line, …) and what to do about it. Exceptions thrown by
// third-party libraries (yaml-cpp, nlohmann-json, ONNX shape inference) are converted to a
// Status by the one adapter that calls each library; only main() in src/cli/ and the daemon's
// handlers turn a Status into a message plus a non-zero exit code or an HTTP status.
//
// Result<T> holds either a T or a non-OK Status; it can be swapped for std::expected (C++23).
// Thread-safety: values; safe to copy between threads.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hase {

class [[nodiscard]] Status {
 public:
  // Never renumber: codes reach exit statuses and the daemon's JSON.
  enum class Code {
    kOk = 0,
    kInvalidArgument = 1,  // the caller's input is wrong (flag, file content, request body)
    kNotFound = 2,         // a named thing does not exist (file, GPU type, task id)
    kUnsupported = 3,      // valid input hase cannot handle (op, opset, dtype)
    kParse = 4,            // a file or message could not be parsed (protobuf, YAML, CSV, JSON)
    kIO = 5,               // the operating system or network failed
    kInternal = 6,         // a bug or an unexpected library failure
    kConflict = 7,         // valid input that contradicts what is stored (an idempotency key
                           // reused for another request)
  };

  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kInvalidArgument, std::move(msg), std::move(where), std::move(hint));
  }
  static Status NotFound(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kNotFound, std::move(msg), std::move(where), std::move(hint));
  }
  static Status Unsupported(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kUnsupported, std::move(msg), std::move(where), std::move(hint));
  }
  static Status Parse(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kParse, std::move(msg), std::move(where), std::move(hint));
  }
  static Status IO(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kIO, std::move(msg), std::move(where), std::move(hint));
  }
  static Status Internal(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kInternal, std::move(msg), std::move(where), std::move(hint));
  }
  static Status Conflict(std::string msg, std::string where = "", std::string hint = "") {
    return Status(Code::kConflict, std::move(msg), std::move(where), std::move(hint));
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsUnsupported() const { return code_ == Code::kUnsupported; }
  bool IsParse() const { return code_ == Code::kParse; }
  bool IsIO() const { return code_ == Code::kIO; }
  bool IsInternal() const { return code_ == Code::kInternal; }
  bool IsConflict() const { return code_ == Code::kConflict; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& where() const { return where_; }
  const std::string& hint() const { return hint_; }

  // Returns a copy whose `where` is prefixed by `outer` ("model.onnx: node Conv_3").
  Status WithContext(const std::string& outer) const {
    Status s = *this;
    s.where_ = where_.empty() ? outer : outer + ": " + where_;
    return s;
  }

  // For people: "<code name>: <where>: <message> (<hint>)"; "OK" on success.
  std::string ToString() const;

  // The process exit status a CLI uses for this code: 0 for OK, else 2..8 (1 is left to
  // uncaught failures). Stable.
  int ExitCode() const { return ok() ? 0 : 1 + static_cast<int>(code_); }

 private:
  Status(Code code, std::string msg, std::string where, std::string hint)
      : code_(code), message_(std::move(msg)), where_(std::move(where)), hint_(std::move(hint)) {}

  Code code_ = Code::kOk;
  std::string message_;
  std::string where_;
  std::string hint_;
};

const char* CodeName(Status::Code code);

// A T on success, a non-OK Status on failure. Accessing value() of a failed Result aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {           // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) std::abort();  // a Result never holds an OK Status
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { Check(); return std::get<T>(v_); }
  const T& value() const& { Check(); return std::get<T>(v_); }
  T&& value() && { Check(); return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!ok()) std::abort();
  }
  std::variant<T, Status> v_;
};

}  // namespace hase

// Propagates a non-OK Status from an expression returning Status.
#define HASE_RETURN_IF_ERROR(expr)        \
  do {                                    \
    ::hase::Status _st = (expr);          \
    if (!_st.ok()) return _st;            \
  } while (0)

#define HASE_CONCAT_INNER_(a, b) a##b
#define HASE_CONCAT_(a, b) HASE_CONCAT_INNER_(a, b)
// HASE_ASSIGN_OR_RETURN(auto x, FunctionReturningResult());
#define HASE_ASSIGN_OR_RETURN(lhs, expr) \
  HASE_ASSIGN_OR_RETURN_IMPL_(HASE_CONCAT_(_res_, __LINE__), lhs, expr)
#define HASE_ASSIGN_OR_RETURN_IMPL_(res, lhs, expr) \
  auto res = (expr);                                \
  if (!res.ok()) return res.status();               \
  lhs = std::move(res).value()
