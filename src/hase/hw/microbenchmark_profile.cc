// Derived profiles, and the one adapter between yaml-cpp and profile files.
#include "hase/hw/microbenchmark_profile.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "hase/hw/gpu_catalog.h"

namespace hase {

double SustainedClockFraction(const GpuSpec& spec) {
  if (spec.tdp_w <= 0 || spec.sms <= 0) return 1.0;
  const double w_per_sm = spec.tdp_w / spec.sms;
  const double power_rule = std::cbrt(w_per_sm / ProfileEfficiency::kWattsPerSmAtBoost);
  const double floor = spec.base_clock_mhz > 0 && spec.boost_clock_mhz > 0
                           ? spec.base_clock_mhz / spec.boost_clock_mhz
                           : 0.0;
  return std::clamp(power_rule, std::min(floor, 1.0), 1.0);
}

double Fp32SustainedClockFraction(const GpuSpec& spec) {
  if (spec.fp32_sustained_clock_mhz > 0 && spec.boost_clock_mhz > 0) {
    return std::min(1.0, spec.fp32_sustained_clock_mhz / spec.boost_clock_mhz);
  }
  return SustainedClockFraction(spec);
}

double Fp32IssueFraction(const GpuSpec& spec) {
  const std::string& cc = spec.compute_capability;
  return cc == "8.6" || cc == "8.7" || cc == "8.9" ? ProfileEfficiency::kFp32DualIssue : 1.0;
}

MicrobenchmarkProfile DerivedProfile(const GpuSpec& spec) {
  using E = ProfileEfficiency;
  const double clock = SustainedClockFraction(spec);
  MicrobenchmarkProfile p;
  p.gpu = spec.id;
  p.source = "derived from datasheet (ProfileEfficiency factors)";
  p.measured = false;
  p.dram_bandwidth_gbps = E::kDram * spec.memory_bandwidth_gbps;
  p.l2_bandwidth_gbps = E::kL2OverDram * spec.memory_bandwidth_gbps;
  p.fp32_tflops =
      E::kFp32 * Fp32SustainedClockFraction(spec) * Fp32IssueFraction(spec) * spec.fp32_tflops;
  p.fp16_tflops = E::kFp16 * clock * spec.fp16_tflops;
  p.tensor_fp16_tflops = E::kTensor * clock * spec.tensor_fp16_tflops;
  p.tensor_tf32_tflops = E::kTensor * clock * spec.tensor_tf32_tflops();
  p.launch_overhead_us = E::kLaunchOverheadUs;
  p.h2d_gbps = E::kPcie * spec.pcie_peak_gbps();
  p.d2h_gbps = E::kPcie * spec.pcie_peak_gbps();
  return p;
}

namespace {

constexpr const char* kFormat = "hase-microbenchmark-profile/1";

struct Field {
  const char* key;
  double MicrobenchmarkProfile::*member;
};
constexpr Field kFields[] = {
    {"dram_bandwidth_gbps", &MicrobenchmarkProfile::dram_bandwidth_gbps},
    {"l2_bandwidth_gbps", &MicrobenchmarkProfile::l2_bandwidth_gbps},
    {"fp32_tflops", &MicrobenchmarkProfile::fp32_tflops},
    {"fp16_tflops", &MicrobenchmarkProfile::fp16_tflops},
    {"tensor_fp16_tflops", &MicrobenchmarkProfile::tensor_fp16_tflops},
    {"tensor_tf32_tflops", &MicrobenchmarkProfile::tensor_tf32_tflops},
    {"launch_overhead_us", &MicrobenchmarkProfile::launch_overhead_us},
    {"h2d_gbps", &MicrobenchmarkProfile::h2d_gbps},
    {"d2h_gbps", &MicrobenchmarkProfile::d2h_gbps},
};

std::string Line(const std::string& where, const YAML::Node& n) {
  return n.Mark().line >= 0 ? where + ":" + std::to_string(n.Mark().line + 1) : where;
}

}  // namespace

Result<MicrobenchmarkProfile> ParseMicrobenchmarkProfile(std::string_view text,
                                                         const std::string& where,
                                                         const GpuCatalog& catalog) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    return Status::Parse(e.msg, where + ":" + std::to_string(e.mark.line + 1),
                         "a profile is YAML or JSON; see docs/microbenchmark-profile.md");
  } catch (const YAML::Exception& e) {
    return Status::Parse(e.what(), where);
  }
  if (!root.IsMap()) {
    return Status::InvalidArgument("a microbenchmark profile must be a map", where,
                                   "see docs/microbenchmark-profile.md");
  }
  try {
    const std::string format = root["format"] ? root["format"].as<std::string>() : "";
    if (format != kFormat) {
      return Status::InvalidArgument("profile format is '" + format + "'", where,
                                     std::string("expected 'format: ") + kFormat + "'");
    }
    if (!root["gpu"]) {
      return Status::InvalidArgument("profile has no 'gpu:' field", where,
                                     "name the GPU type, e.g. gpu: NVIDIA A100-SXM4-40GB");
    }
    auto spec = catalog.Find(root["gpu"].as<std::string>());
    if (!spec.ok()) return spec.status().WithContext(Line(where, root["gpu"]));
    MicrobenchmarkProfile p = DerivedProfile(**spec);
    p.measured = true;
    std::string src = "measured";
    if (root["tool"]) src += ": " + root["tool"].as<std::string>();
    if (root["measured_at"]) src += ", " + root["measured_at"].as<std::string>();
    if (root["host"]) src += ", " + root["host"].as<std::string>();
    p.source = src;
    for (const Field& f : kFields) {
      const YAML::Node v = root[f.key];
      if (!v || v.IsNull()) continue;
      double x = 0;
      try {
        x = v.as<double>();
      } catch (const YAML::Exception&) {
        return Status::InvalidArgument(std::string("'") + f.key + "' is not a number",
                                       Line(where, v));
      }
      if (x < 0) {
        return Status::InvalidArgument(std::string("'") + f.key + "' is negative",
                                       Line(where, v));
      }
      if (x > 0) p.*f.member = x;  // 0 = not measured: keep the derived figure
    }
    return p;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("malformed profile: ") + e.what(), where);
  }
}

Result<MicrobenchmarkProfile> LoadMicrobenchmarkProfile(const std::string& path,
                                                        const GpuCatalog& catalog) {
  std::ifstream in(path);
  if (!in) return Status::IO("cannot read microbenchmark profile", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMicrobenchmarkProfile(ss.str(), path, catalog);
}

std::string MicrobenchmarkProfileToYaml(const MicrobenchmarkProfile& p) {
  std::ostringstream out;
  out << "format: " << kFormat << "\n";
  out << "gpu: " << p.gpu << "\n";
  for (const Field& f : kFields) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", p.*f.member);
    out << f.key << ": " << buf << "\n";
  }
  return out.str();
}

}  // namespace hase
