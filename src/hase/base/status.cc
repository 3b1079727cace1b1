#include "hase/base/status.h"

namespace hase {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kUnsupported: return "unsupported";
    case Status::Code::kParse: return "parse error";
    case Status::Code::kIO: return "I/O error";
    case Status::Code::kInternal: return "internal error";
    case Status::Code::kConflict: return "conflict";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = CodeName(code_);
  s += ": ";
  if (!where_.empty()) s += where_ + ": ";
  s += message_;
  if (!hint_.empty()) s += " (" + hint_ + ")";
  return s;
}

}  // namespace hase
