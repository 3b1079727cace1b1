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
  ASSERT_EQ(m->kernels.size(), 3u);
  EXPECT_EQ(m->kernels[0].estimator, "fixed");
  EXPECT_DOUBLE_EQ(m->kernels[0].effective_ms, 1.0);
  EXPECT_EQ(m->kernels[1].estimator, "analytic");  // fallback
  EXPECT_DOUBLE_EQ(m->kernels[1].effective_ms, 0.01);  // tiny kernel: dispatch-bound
  EXPECT_DOUBLE_EQ(m->kernels[2].effective_ms, 0.0);   // view: no launch
  EXPECT_EQ(m->fallback_kernels, 2);
  EXPECT_NEAR(m->transfer_ms, 4816896.0 / 1e7, 1e-12);
  EXPECT_NEAR(m->latency_ms, 1.0 + 0.01 + 0.02 + 4816896.0 / 1e7, 1e-12);
  EXPECT_NEAR(m->throughput_samples_per_s, 8 * 1000.0 / m->latency_ms, 1e-9);
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
