// Every ai.onnx op of opset 17 wired the ways a broken exporter wires it (issue 24): inputs
// typed as the op may not accept, inputs nothing produces, no outputs, no attributes. Each
// model must come back from LoadOnnxGraph as OK or a Status with a message — never kill the
// test with a signal. libonnx crashes that no check foresees come back as Internal
// ("… crashed (SIGxxx)", the loader's child process) and are listed, to become checks.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "graph/test_models.h"
#include "hase/graph/onnx_loader.h"

namespace hase::graph {
namespace {

using hase::testing::ModelBuilder;

TEST(OnnxWiring, EveryOpOfOpset17EndsInAStatusNeverASignal) {
  std::map<std::string, const onnx::OpSchema*> latest;  // op → its schema at opset 17
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!s.domain().empty() || s.Deprecated()) continue;
    if (const auto* at17 = onnx::OpSchemaRegistry::Schema(s.Name(), 17, "")) latest[s.Name()] = at17;
  }
  ASSERT_GT(latest.size(), 150u);
  enum Wiring { kTypedInputs, kUndeclaredInputs, kNoOutputs };
  std::map<Status::Code, int> codes;
  std::vector<std::string> crashes;
  int loads = 0;
  for (const auto& [op, schema] : latest) {
    for (Wiring w : {kTypedInputs, kUndeclaredInputs, kNoOutputs}) {
      ModelBuilder b(17);
      b.Input("x", {"N", "3", "4", "4"});
      std::vector<std::string> ins;
      for (int i = 0; i < std::max(schema->min_input(), 1) && i < 6; ++i) {
        ins.push_back(w == kUndeclaredInputs ? "nowhere" + std::to_string(i) : "x");
      }
      std::vector<std::string> outs;
      if (w != kNoOutputs) {
        for (int i = 0; i < std::max(schema->min_output(), 1) && i < 4; ++i) outs.push_back("o" + std::to_string(i));
      }
      b.Node(op, ins, outs);
      b.Node("Relu", {"x"}, {"y"});
      b.Output("y");
      for (const std::string& o : outs) b.Output(o);
      auto g = LoadOnnxGraph(b.Write("wiring.onnx"), {});
      ++loads;
      if (g.ok()) continue;
      const Status& st = g.status();
      ++codes[st.code()];
      EXPECT_FALSE(st.message().empty()) << op;
      if (st.IsInternal()) {
        EXPECT_NE(st.message().find("ONNX shape inference (libonnx) crashed"), std::string::npos)
            << op << ": " << st.ToString();
        crashes.push_back(op + " (wiring " + std::to_string(w) + "): " + st.message());
      }
    }
  }
  std::printf("%d models over %zu ops; errors by code:", loads, latest.size());
  for (const auto& [code, n] : codes) std::printf(" %s %d", CodeName(code), n);
  std::printf("\nlibonnx crashes caught: %zu\n", crashes.size());
  for (const std::string& c : crashes) std::printf("  %s\n", c.c_str());
}

}  // namespace
}  // namespace hase::graph
