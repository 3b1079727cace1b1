#include "hase/predict/datasets/converters.h"

#include <filesystem>

#include <fmt/format.h>

namespace hase::predict {

namespace fs = std::filesystem;

std::string ConvertReport::ToString() const {
  std::string out = fmt::format("{}: read {} rows, kept {}", source, read, kept);
  for (const auto& [why, n] : dropped) out += fmt::format(", dropped {} ({})", n, why);
  for (const auto& [flag, n] : flagged) out += fmt::format(", flagged {} ({})", n, flag);
  return out;
}

Result<std::string> DetectSource(const std::string& dir) {
  std::error_code ec;
  const fs::path p(dir);
  if (!fs::is_directory(p, ec)) return Status::NotFound("not a directory", dir);
  if (fs::exists(p / "conv", ec) && fs::exists(p / "linear", ec)) return std::string("neusight");
  if (fs::exists(p / "deepbench_train_conv.csv", ec)) return std::string("deepbench");
  if (fs::exists(p / "tophub_cuda_v0.10.csv", ec)) return std::string("tophub");
  if (fs::exists(p / "performance_kernel_times.json", ec)) return std::string("bencyq");
  return Status::NotFound("no known dataset layout (neusight, deepbench, tophub, bencyq)", dir,
                          "pass --source explicitly or point at a dataset folder");
}

Result<std::vector<KernelSample>> ConvertSource(const std::string& source, const std::string& dir,
                                                ConvertReport* report) {
  std::string src = source;
  if (src.empty() || src == "auto") {
    HASE_ASSIGN_OR_RETURN(src, DetectSource(dir));
  }
  if (src == "neusight") return ConvertNeuSight(dir, report);
  if (src == "deepbench") return ConvertDeepBench(dir, report);
  if (src == "tophub") return ConvertTopHub(dir, report);
  if (src == "bencyq" || src == "bencyq_hase") return ConvertBencyq(dir, report);
  return Status::InvalidArgument("unknown source '" + source + "'", "",
                                 "use neusight, deepbench, tophub, bencyq or auto");
}

}  // namespace hase::predict
