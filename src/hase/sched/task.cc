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

std::string ProfileKey(const Task& task) {
  if (!task.runtime.empty()) {
    return fmt::format("{}|{}|{}|{}", task.model, task.batch_size, task.input_size, task.runtime);
  }
  return fmt::format("{}|{}|{}", task.model, task.batch_size, task.input_size);
}

}  // namespace hase::sched
