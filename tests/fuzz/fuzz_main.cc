// libFuzzer entry point of one fuzz target (fuzz_targets.h), chosen at build time by
// HASE_FUZZ_TARGET_<name>. Built with -DHASE_FUZZ=ON under clang: a Status is fine, a crash,
// sanitizer report, exception or Internal status is a finding.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  hase::Status st;
#if defined(HASE_FUZZ_TARGET_onnx_model)
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("hase-libfuzzer-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  st = hase::fuzz::FuzzOnnxModel(bytes, dir);
#elif defined(HASE_FUZZ_TARGET_prom_text)
  st = hase::fuzz::FuzzPromText(bytes);
#elif defined(HASE_FUZZ_TARGET_cluster_yaml)
  st = hase::fuzz::FuzzClusterYaml(bytes);
#elif defined(HASE_FUZZ_TARGET_workload)
  st = hase::fuzz::FuzzWorkload(bytes);
#elif defined(HASE_FUZZ_TARGET_task_json)
  st = hase::fuzz::FuzzTaskJson(bytes);
#else
#error "define one HASE_FUZZ_TARGET_<name>"
#endif
  if (st.IsInternal()) std::abort();
  return 0;
}
