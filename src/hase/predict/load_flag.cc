#include "hase/predict/load_flag.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

namespace hase {
namespace {

constexpr const char* kKeys =
    "sm_active, sm_occupancy, dram_active, pipe_tensor_active, gr_engine_active, gpu_util "
    "(fractions 0-1), fb_used_mib, fb_free_mib, sm_clock_mhz, age_s";

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

}  // namespace

Result<LoadSnapshot> ParseLoadFlag(std::string_view text) {
  const std::string all = Trim(text);
  if (all.empty() || all == "idle") return LoadSnapshot::Idle();
  LoadSnapshot s;
  std::set<std::string> seen;
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t comma = all.find(',', pos);
    if (comma == std::string::npos) comma = all.size();
    const std::string item = Trim(std::string_view(all).substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) {
      return Status::InvalidArgument("empty item in --load '" + all + "'", "--load",
                                     "write key=value pairs separated by commas");
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument("'" + item + "' is not key=value", "--load",
                                     std::string("keys: ") + kKeys);
    }
    const std::string key = Trim(std::string_view(item).substr(0, eq));
    const std::string val = Trim(std::string_view(item).substr(eq + 1));
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(val.c_str(), &end);
    if (val.empty() || end != val.c_str() + val.size() || errno != 0 || !std::isfinite(x)) {
      return Status::InvalidArgument("value of '" + key + "' is not a number: '" + val + "'",
                                     "--load");
    }
    if (!seen.insert(key).second) {
      return Status::InvalidArgument("'" + key + "' given twice", "--load");
    }
    std::optional<double>* frac = nullptr;
    if (key == "sm_active") frac = &s.sm_active;
    else if (key == "sm_occupancy") frac = &s.sm_occupancy;
    else if (key == "dram_active") frac = &s.dram_active;
    else if (key == "pipe_tensor_active") frac = &s.pipe_tensor_active;
    else if (key == "gr_engine_active") frac = &s.gr_engine_active;
    else if (key == "gpu_util") frac = &s.gpu_util;
    if (frac != nullptr) {
      if (x < 0 || x > 1) {
        return Status::InvalidArgument("'" + key + "' = " + val + " is outside 0-1", "--load",
                                       "DCGM activity fields are fractions (0.6, not 60)");
      }
      *frac = x;
      continue;
    }
    if (x < 0) return Status::InvalidArgument("'" + key + "' is negative", "--load");
    if (key == "fb_used_mib") s.fb_used_mib = x;
    else if (key == "fb_free_mib") s.fb_free_mib = x;
    else if (key == "sm_clock_mhz") s.sm_clock_mhz = x;
    else if (key == "age_s") s.age_s = x;
    else {
      return Status::InvalidArgument("unknown load key '" + key + "'", "--load",
                                     std::string("keys: ") + kKeys);
    }
  }
  return s;
}

}  // namespace hase
