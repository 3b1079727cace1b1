#include "hase/sched/task.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace hase::sched {

std::string ModelFamily(const std::string& model) {
  std::string stem = model;
  if (auto slash = stem.find_last_of('/'); slash != std::string::npos) stem = stem.substr(slash + 1);
  std::string family;
  for (char c : stem) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    family.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // "yolov5s" → "yolov" → "yolo": a trailing 'v' before a version digit is not the family.
  if (family.size() > 1 && family.back() == 'v' && stem.size() > family.size() &&
      std::isdigit(static_cast<unsigned char>(stem[family.size()]))) {
    family.pop_back();
  }
  return family.empty() ? "other" : family;
}

std::vector<int64_t> InputDims(const Task& task) {
  if (!task.input_shape.empty()) return task.input_shape;
  if (task.input_size <= 0) return {};
  return {3, task.input_size, task.input_size};
}

std::string InputShapeText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

Result<std::vector<int64_t>> ParseInputShapeText(const std::string& text) {
  std::vector<int64_t> dims;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Status::InvalidArgument("\"" + text + "\" is not dims joined by 'x', such as \"3x640x640\"");
    }
    const int64_t d = std::stoll(part);
    if (d < 1 || d > (1 << 16)) return Status::InvalidArgument("dims must be 1-65536, not " + part);
    dims.push_back(d);
    if (x == std::string::npos) break;
    at = x + 1;
  }
  if (dims.size() > 4) {
    return Status::InvalidArgument("has " + std::to_string(dims.size()) + " dims; give the 1-4 after the batch");
  }
  return dims;
}

std::string ProfileKey(const Task& task) {
  const std::vector<int64_t> dims = InputDims(task);
  // {3, N, N} keeps the key latency tables were written with ("resnet50|8|224").
  const std::string input = dims.empty() ? "0"
                            : (dims.size() == 3 && dims[0] == 3 && dims[1] == dims[2]) ? std::to_string(dims[1])
                                                                                        : InputShapeText(dims);
  if (!task.runtime.empty()) {
    return fmt::format("{}|{}|{}|{}", task.model, task.batch_size, input, task.runtime);
  }
  return fmt::format("{}|{}|{}", task.model, task.batch_size, input);
}

}  // namespace hase::sched
