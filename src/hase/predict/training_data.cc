#include "hase/predict/training_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "hase/predict/datasets/converters.h"
#include "hase/predict/features.h"
#include "hase/predict/learned_model.h"
#include "hase/predict/training_set.h"

namespace hase::predict {

namespace {
constexpr double kLowThroughputRatio = 0.25;
constexpr double kSlowOpRatio = 0.75;
constexpr double kSlowOpMinFlops = 1e9;
constexpr size_t kSlowOpMinRows = 10;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}
}  // namespace

// Copies, dispatch and background load legitimately lower a row's throughput: such rows are
// neither flagged nor used as a reference by the throughput rules.
bool ThroughputComparable(const KernelSample& s) {
  if (s.includes_transfer) return false;
  for (const auto& f : {s.load.sm_active, s.load.sm_occupancy, s.load.dram_active,
                        s.load.pipe_tensor_active, s.load.gr_engine_active, s.load.gpu_util}) {
    if (f.has_value() && *f > 0) return false;
  }
  return true;
}

size_t FlagLowThroughput(std::vector<KernelSample>& rows, const std::vector<const GpuSpec*>& gpus) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto f = rows[i].family;
    if (f != KernelFamily::kConv && f != KernelFamily::kGemm) continue;
    if (!ThroughputComparable(rows[i])) continue;
    groups[rows[i].source + "#" + ShapeKey(rows[i])].push_back(i);
  }
  size_t flagged = 0;
  for (const auto& [key, idx] : groups) {
    if (idx.size() < 3) continue;
    std::vector<double> eff(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
      eff[j] = FixedRoofline(rows[idx[j]], *gpus[idx[j]]).compute_ms / rows[idx[j]].latency_ms;
    }
    for (size_t j = 0; j < idx.size(); ++j) {
      std::vector<double> others;
      for (size_t o = 0; o < idx.size(); ++o) {
        if (o != j) others.push_back(eff[o]);
      }
      std::sort(others.begin(), others.end());
      const double med = others[(others.size() - 1) / 2];
      KernelSample& s = rows[idx[j]];
      if (eff[j] < kLowThroughputRatio * med && !s.HasFlag("suspect_low_flops")) {
        s.flags.push_back("suspect_low_flops");
        ++flagged;
      }
    }
  }
  return flagged;
}

size_t FlagSlowOp(std::vector<KernelSample>& rows) {
  // (source, quarter decade of FLOP) -> op -> gpu -> row indices
  using ByGpu = std::map<std::string, std::vector<size_t>>;
  std::map<std::pair<std::string, int>, std::map<std::string, ByGpu>> bins;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KernelSample& s = rows[i];
    if (s.family != KernelFamily::kGemm || s.flops < kSlowOpMinFlops || s.latency_ms <= 0) continue;
    if (!ThroughputComparable(s)) continue;
    const int bin = static_cast<int>(std::floor(4.0 * std::log10(s.flops)));
    bins[{s.source, bin}][s.op][s.gpu].push_back(i);
  }
  size_t flagged = 0;
  auto flag_all = [&](const std::vector<size_t>& idx) {
    for (size_t i : idx) {
      if (rows[i].HasFlag("suspect_slow_op")) continue;
      rows[i].flags.push_back("suspect_slow_op");
      ++flagged;
    }
  };
  // (source, op, gpu) -> (highest bin where it was compared, flagged there); bins ascend.
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, bool>> last;
  for (auto& [key, ops] : bins) {
    // Median FLOP/ms per (op, gpu) where the group has enough rows.
    std::map<std::string, std::map<std::string, double>> med;
    for (const auto& [op, by_gpu] : ops) {
      for (const auto& [gpu, idx] : by_gpu) {
        if (idx.size() < kSlowOpMinRows) continue;
        std::vector<double> t;
        for (size_t i : idx) t.push_back(rows[i].flops / rows[i].latency_ms);
        med[op][gpu] = Median(std::move(t));
      }
    }
    for (const auto& [op, by_op_gpu] : med) {
      for (const auto& [other, by_other_gpu] : med) {
        if (other == op) continue;
        std::map<std::string, double> rel;  // gpu -> median(op) / median(other)
        for (const auto& [gpu, m] : by_op_gpu) {
          auto it = by_other_gpu.find(gpu);
          if (it != by_other_gpu.end()) rel[gpu] = m / it->second;
        }
        for (const auto& [gpu, r] : rel) {
          std::vector<double> rest;
          for (const auto& [g, v] : rel) {
            if (g != gpu) rest.push_back(v);
          }
          if (rest.size() < 2) continue;
          const bool slow = r < kSlowOpRatio * Median(std::move(rest));
          auto& l = last[{key.first, op, gpu}];
          if (l.first != key.second) l = {key.second, false};
          l.second = l.second || slow;
          if (slow) flag_all(ops[op][gpu]);
        }
      }
    }
  }
  // Above the highest comparable bin (no other op that large), the verdict of that bin holds.
  for (const auto& [key, ops] : bins) {
    for (const auto& [op, by_gpu] : ops) {
      for (const auto& [gpu, idx] : by_gpu) {
        auto it = last.find({key.first, op, gpu});
        if (it == last.end() || !it->second.second || key.second <= it->second.first) continue;
        flag_all(idx);
      }
    }
  }
  return flagged;
}

Result<TrainingData> LoadTrainingData(const std::vector<std::string>& paths,
                                      const GpuCatalog& catalog, const LoadDataOptions& options) {
  TrainingData data;
  if (paths.empty()) return Status::InvalidArgument("no --data given", "--data");
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      ConvertReport report;
      HASE_ASSIGN_OR_RETURN(auto rows, ConvertSource("auto", p, &report));
      data.notes.push_back(report.ToString());
      for (auto& r : rows) data.rows.push_back(std::move(r));
    } else {
      HASE_ASSIGN_OR_RETURN(auto rows, ReadTrainingCsv(p));
      data.notes.push_back(fmt::format("{}: read {} rows", p, rows.size()));
      for (auto& r : rows) data.rows.push_back(std::move(r));
    }
  }
  HASE_ASSIGN_OR_RETURN(data.gpus, ResolveGpus(data.rows, catalog));
  const size_t low = FlagLowThroughput(data.rows, data.gpus);
  if (low > 0) {
    data.notes.push_back(fmt::format(
        "flagged {} conv/gemm rows suspect_low_flops (< 1/4 of the same shape's throughput "
        "fraction on the other GPUs)", low));
  }
  const size_t slow = FlagSlowOp(data.rows);
  if (slow > 0) {
    data.notes.push_back(fmt::format(
        "flagged {} gemm rows suspect_slow_op (an op >= 1e9 FLOP that is, relative to the other "
        "GEMM op of similar FLOP on the same GPU, < 3/4 as fast as on the other GPUs)", slow));
  }
  if (!options.keep_suspect) {
    std::map<std::string, size_t> dropped;
    std::vector<KernelSample> rows;
    std::vector<const GpuSpec*> gpus;
    for (size_t i = 0; i < data.rows.size(); ++i) {
      if (data.rows[i].Suspect()) {
        for (const auto& f : data.rows[i].flags) {
          if (f.starts_with("suspect_")) ++dropped[f];
        }
        continue;
      }
      rows.push_back(std::move(data.rows[i]));
      gpus.push_back(data.gpus[i]);
    }
    for (const auto& [f, n] : dropped) {
      data.notes.push_back(fmt::format("dropped {} rows flagged {} (--keep-suspect keeps them)", n, f));
    }
    data.rows = std::move(rows);
    data.gpus = std::move(gpus);
  }
  if (data.rows.empty()) return Status::InvalidArgument("no usable rows in --data", "--data");
  return data;
}

}  // namespace hase::predict
