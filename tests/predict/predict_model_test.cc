#include "hase/predict/predict_model.h"

#include <gtest/gtest.h>

#include "hase/hw/gpu_catalog.h"
#include "hase/predict/analytic_estimator.h"

namespace hase {
namespace {

Kernel K(int index, KernelFamily f, double flops, int64_t bytes) {
  Kernel k;
  k.index = index;
  k.family = f;
  k.type = KernelFamilyName(f);
  k.flops = flops;
  k.activation_bytes_read = bytes;
  k.outputs.push_back({"y", {1 << 20}, DType::kFloat});
  return k;
}

// An estimator with fixed answers, standing in for a learned model.
class FixedEstimator : public KernelLatencyEstimator {
 public:
  std::string Name() const override { return "fixed"; }
  Result<KernelEstimate> Estimate(const Kernel& k, const ExecutionContext&) const override {
    if (k.family != KernelFamily::kConv) return Status::Unsupported("conv only");
    return KernelEstimate{1.0, Name()};
  }
};

TEST(PredictModel, SumsKernelsDispatchSyncAndTransfer) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const GpuSpec& t4 = **cat->Find("t4");
  KernelList kl;
  kl.model = "m";
  kl.batch = 8;
  kl.graph_inputs.push_back({"x", {8, 3, 224, 224}, DType::kFloat});  // 4,816,896 B
  kl.kernels = {K(0, KernelFamily::kConv, 1e9, 1000), K(1, KernelFamily::kElementwise, 10, 10)};
  Kernel view = K(2, KernelFamily::kDataMovement, 0, 0);
  view.view_only = true;
  kl.kernels.push_back(view);
  Kernel shape = K(3, KernelFamily::kDataMovement, 0, 64);  // host-placed shape arithmetic
  shape.cpu_placed = true;
  kl.kernels.push_back(shape);

  FixedEstimator fixed;
  PredictOptions opt;
  opt.estimator = &fixed;
  opt.dispatch_us = 10;  // 0.01 ms per kernel
  opt.sync_us = 20;
  opt.include_input_transfer = true;
  MicrobenchmarkProfile prof = DerivedProfile(t4);
  prof.h2d_gbps = 10;  // 1e7 B/ms
  opt.profile = prof;
  auto m = PredictModel(kl, t4, LoadSnapshot::Idle(), opt);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->kernels.size(), 4u);
  const double h2d = 4816896.0 / 1e7;
  EXPECT_EQ(m->kernels[0].estimator, "fixed");
  // The GPU waits 0.01 ms for the first launch, then runs the 1 ms conv; the host issues the
  // second kernel long before the conv ends, so that one adds only its device time.
  EXPECT_NEAR(m->kernels[0].effective_ms, 1.01, 1e-12);
  EXPECT_EQ(m->kernels[1].estimator, "analytic");  // fallback
  EXPECT_NEAR(m->kernels[1].effective_ms, m->kernels[1].device_ms, 1e-12);
  EXPECT_DOUBLE_EQ(m->kernels[2].effective_ms, 0.0);   // view: no launch, not estimated
  EXPECT_EQ(m->kernels[2].estimator, "none (view)");
  EXPECT_DOUBLE_EQ(m->kernels[3].effective_ms, 0.0);   // cpu_placed: on the host, no GPU time
  EXPECT_EQ(m->kernels[3].estimator, "none (cpu)");
  EXPECT_EQ(m->fallback_kernels, 1);
  EXPECT_NEAR(m->transfer_ms, h2d, 1e-12);
  EXPECT_NEAR(m->host_ms, 0.02, 1e-12);
  EXPECT_NEAR(m->idle_ms, 0.01, 1e-12);
  EXPECT_NEAR(m->device_ms, 1.0 + m->kernels[1].device_ms, 1e-12);
  EXPECT_NEAR(m->latency_ms, h2d + 0.01 + 1.0 + m->kernels[1].device_ms + 0.02, 1e-12);
  EXPECT_NEAR(m->demand, m->device_ms / m->latency_ms, 1e-12);
  EXPECT_NEAR(m->throughput_samples_per_s, 8 * 1000.0 / m->latency_ms, 1e-9);
}

// 100 tiny kernels behind a 10 µs host issue cost each: the host timeline sets the latency
// (1 ms + the last kernel + sync) and the GPU is busy a small fraction of it.
TEST(PredictModel, TinyKernelsAreHostBound) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  const GpuSpec& a100 = **cat->Find("A100-SXM4-40GB");
  KernelList kl;
  kl.model = "tiny";
  for (int i = 0; i < 100; ++i) kl.kernels.push_back(K(i, KernelFamily::kElementwise, 10, 10));
  PredictOptions opt;
  opt.dispatch_us = 10;
  opt.sync_us = 0;
  auto m = PredictModel(kl, a100, LoadSnapshot::Idle(), opt);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const double dev = m->kernels.back().device_ms;
  EXPECT_LT(dev, 0.01);  // each kernel is shorter than its issue cost
  EXPECT_NEAR(m->latency_ms, 1.0 + dev, 1e-9);
  EXPECT_NEAR(m->host_ms, 1.0, 1e-12);
  EXPECT_NEAR(m->demand, 100 * dev / (1.0 + dev), 1e-9);
  EXPECT_LT(m->demand, 0.5);
}

TEST(PredictModel, EmptyListIsAnError) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  KernelList kl;
  EXPECT_TRUE(PredictModel(kl, **cat->Find("t4"), LoadSnapshot::Idle(), {})
                  .status()
                  .IsInvalidArgument());
}

TEST(PredictModel, LoadMakesItSlower) {
  auto cat = GpuCatalog::Builtin();
  ASSERT_TRUE(cat.ok());
  KernelList kl;
  kl.batch = 1;
  kl.kernels = {K(0, KernelFamily::kConv, 1e10, 1 << 24)};
  const GpuSpec& a100 = **cat->Find("a100");
  auto idle = PredictModel(kl, a100, LoadSnapshot::Idle(), {});
  LoadSnapshot busy;
  busy.sm_active = 0.8;
  busy.dram_active = 0.5;
  auto loaded = PredictModel(kl, a100, busy, {});
  ASSERT_TRUE(idle.ok() && loaded.ok());
  EXPECT_GT(loaded->latency_ms, idle->latency_ms * 1.3);
}

}  // namespace
}  // namespace hase
