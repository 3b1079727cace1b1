// ONNX LSTM / GRU / RNN get a cost formula (they were "1 FLOP per output element", ~770x low
// for a 10-step LSTM): MACs = seq x batch x (elements(W) + elements(R)), the figure of the ONNX
// operator equations (4 gates x H x (I + H) per step and batch row for an LSTM).
#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "hase/kernels/kernel_list_builder.h"

namespace hase {
namespace {

using testing::ModelBuilder;

std::string Recurrent(const std::string& op, int gates, int64_t dirs, bool batch_first) {
  ModelBuilder b(14);
  // 10 steps, 64 rows, 64 features (torch exports seq-first: the batch is dim 1).
  b.Input("x", batch_first ? std::vector<std::string>{"64", "10", "64"} : std::vector<std::string>{"10", "64", "64"});
  b.Weight("w", {dirs, gates * 32, 64});
  b.Weight("r", {dirs, gates * 32, 32});
  b.Weight("b", {dirs, 2 * gates * 32});
  auto* n = b.Node(op, {"x", "w", "r", "b"}, {"y"});
  ModelBuilder::Int(n, "hidden_size", 32);
  if (dirs == 2) ModelBuilder::Str(n, "direction", "bidirectional");
  if (batch_first) ModelBuilder::Int(n, "layout", 1);
  b.Output("y");
  return b.Write(op + std::to_string(dirs) + (batch_first ? "bf" : "") + ".onnx");
}

TEST(RecurrentCost, LstmGruRnnMacsFromTheOperatorEquations) {
  struct Case {
    const char* op;
    int gates;
    int64_t dirs;
    bool batch_first;
    double per_unit;  // bias + activation + cell FLOP per hidden unit and step
  };
  for (const Case& c : {Case{"LSTM", 4, 1, false, 32}, Case{"LSTM", 4, 2, true, 32}, Case{"GRU", 3, 1, false, 22},
                        Case{"RNN", 1, 2, false, 6}}) {
    SCOPED_TRACE(std::string(c.op) + " dirs " + std::to_string(c.dirs));
    // hase binds the first dim of the input as the batch: of a seq-first export that is the
    // sequence length (10 here), so --batch must name it (or --input-shape all dims).
    auto kl = BuildKernelList(Recurrent(c.op, c.gates, c.dirs, c.batch_first), {.batch = c.batch_first ? 64 : 10, .profile = "none"});
    ASSERT_TRUE(kl.ok()) << kl.status().ToString();
    ASSERT_EQ(kl->kernels.size(), 1u);
    const Kernel& k = kl->kernels[0];
    // 10 steps x 64 rows x dirs x gates·32 x (64 + 32).
    const double macs = 10.0 * 64 * c.dirs * c.gates * 32 * (64 + 32);
    EXPECT_DOUBLE_EQ(k.macs, macs);
    EXPECT_DOUBLE_EQ(k.flops, 2 * macs + 10.0 * 64 * c.dirs * 32 * c.per_unit);
    for (const std::string& w : kl->warnings) EXPECT_EQ(w.find("no cost formula"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace hase
