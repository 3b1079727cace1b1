// What a model argument names: a file, or a zoo model by name (`resnet50`).
#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "cli/command.h"

namespace hase::cli {

std::vector<std::string> ZooNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".onnx" && e.is_regular_file(ec)) {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ZooNamesHint(const std::string& dir) {
  const std::vector<std::string> names = ZooNames(dir);
  if (names.empty()) return "give the path to an .onnx file (no zoo models found in " + dir + ")";
  return fmt::format("give the path to an .onnx file or a zoo model: {}", fmt::join(names, ", "));
}

Result<std::string> ResolveModelArg(const std::string& arg, const std::string& models_dir) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return arg;
  const bool looks_like_path = arg.find('/') != std::string::npos ||
                               (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".onnx") == 0);
  if (looks_like_path) return arg;  // the loader says it is missing, with the path
  const std::string dir = models_dir.empty() ? DefaultModelsDir() : models_dir;
  const std::string zoo =
      (std::filesystem::path(dir) / (arg + ".onnx")).lexically_normal().string();
  if (std::filesystem::is_regular_file(zoo, ec)) return zoo;
  return Status::NotFound("unknown model '" + arg + "': no such file and no zoo model of that name",
                          "", ZooNamesHint(dir));
}

}  // namespace hase::cli
