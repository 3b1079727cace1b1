#include "stress_level.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace hase::probe {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<double> ParseDouble(std::string_view key, std::string_view value) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(v)) {
    return Status::InvalidArgument(fmt::format("'{}' is not a number", value),
                                   fmt::format("load key '{}'", key));
  }
  return v;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

}  // namespace

std::string StressLevel::Name() const {
  if (idle()) return "idle";
  const StressLevel d;
  std::vector<std::string> parts;
  if (sm != 0) parts.push_back(fmt::format("sm={}", sm));
  if (sm != 0 && occupancy != d.occupancy) parts.push_back(fmt::format("occ={}", occupancy));
  if (dram != 0) parts.push_back(fmt::format("dram={}", dram));
  if (tensor != 0) parts.push_back(fmt::format("tensor={}", tensor));
  if (period_ms != d.period_ms) parts.push_back(fmt::format("period_ms={}", period_ms));
  return fmt::format("{}", fmt::join(parts, ","));
}

Result<StressLevel> ParseStressLevel(std::string_view text) {
  text = Trim(text);
  const std::string hint = "write idle or key=value pairs: sm, occ, dram, tensor (0-1), period_ms";
  if (text.empty()) return Status::InvalidArgument("empty load level", "", hint);
  StressLevel level;
  if (text == "idle") return level;
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(fmt::format("'{}' is not key=value", part), "", hint);
    }
    const std::string_view key = Trim(part.substr(0, eq));
    HASE_ASSIGN_OR_RETURN(double v, ParseDouble(key, Trim(part.substr(eq + 1))));
    double* field = nullptr;
    if (key == "sm") field = &level.sm;
    else if (key == "occ") field = &level.occupancy;
    else if (key == "dram") field = &level.dram;
    else if (key == "tensor") field = &level.tensor;
    else if (key == "period_ms") field = &level.period_ms;
    else return Status::InvalidArgument(fmt::format("unknown load key '{}'", key), "", hint);
    if (key == "period_ms" ? !(v > 0) : (v < 0 || v > 1) || (key == "occ" && v == 0)) {
      return Status::InvalidArgument(
          fmt::format("value {} out of range", v), fmt::format("load key '{}'", key),
          key == "period_ms" ? "period_ms must be > 0" : "fractions are in [0, 1] (occ > 0)");
    }
    *field = v;
  }
  return level;
}

Result<std::vector<StressLevel>> ParseStressSchedule(std::string_view text) {
  std::vector<StressLevel> levels;
  int i = 0;
  for (std::string_view part : Split(text, ';')) {
    ++i;
    auto level = ParseStressLevel(part);
    if (!level.ok()) return level.status().WithContext(fmt::format("load level {}", i));
    levels.push_back(*level);
  }
  return levels;
}

Result<PersistentGrid> PersistentGridFor(const StressLevel& level, int num_sms,
                                         int max_threads_per_sm, int max_threads_per_block) {
  if (num_sms <= 0 || max_threads_per_sm <= 0 || max_threads_per_block < 32) {
    return Status::InvalidArgument("device limits must be positive", "PersistentGridFor");
  }
  PersistentGrid g;
  g.blocks = static_cast<int>(std::lround(level.sm * num_sms));
  if (g.blocks == 0) return g;
  const int warps = std::max(1, static_cast<int>(std::lround(level.occupancy *
                                                             max_threads_per_sm / 32.0)));
  g.threads_per_block = std::min(warps * 32, max_threads_per_block / 32 * 32);
  g.achieved_sm = static_cast<double>(g.blocks) / num_sms;
  g.achieved_occupancy = static_cast<double>(g.threads_per_block) / max_threads_per_sm;
  return g;
}

}  // namespace hase::probe
