#include "hase/sched/task.h"

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
