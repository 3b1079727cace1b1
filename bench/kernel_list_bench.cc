// BuildKernelList speed: load (without weight bytes) + shape inference + fusion + costing.
//   build/bench/kernel_list_bench                       zoo models (weight-free)
//   HASE_BENCH_MODEL=build/bench/vgg16.full.onnx build/bench/kernel_list_bench
//                                                       any file, e.g. a full-weight VGG-16
// bench/kernels_vs_ort.sh makes the full-weight files and compares with onnxruntime-node.
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "hase/kernels/kernel_list_builder.h"

namespace {

void BM_BuildKernelList(benchmark::State& state, std::string path, std::string profile) {
  for (auto _ : state) {
    auto l = hase::BuildKernelList(path, {.profile = profile});
    if (!l.ok()) {
      state.SkipWithError(l.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(l->kernels.data());
  }
}

std::string Zoo(const char* name) { return std::string(HASE_BENCH_SOURCE_DIR) + "/models/" + name + ".onnx"; }

BENCHMARK_CAPTURE(BM_BuildKernelList, resnet50_ort_cuda, Zoo("resnet50"), "ort-cuda")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildKernelList, vgg16_ort_cuda, Zoo("vgg16"), "ort-cuda")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildKernelList, yolov8m_ort_cpu, Zoo("yolov8m"), "ort-cpu")->Unit(benchmark::kMillisecond);

// HASE_BENCH_MODEL=<file>: one more benchmark on that file (e.g. a full-weight export).
const bool kRegistered = [] {
  if (const char* m = std::getenv("HASE_BENCH_MODEL")) {
    benchmark::RegisterBenchmark("BM_BuildKernelList/HASE_BENCH_MODEL", BM_BuildKernelList,
                                 std::string(m), std::string("ort-cuda"))
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
