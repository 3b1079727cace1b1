// InferModelShapes / NullSafeSchemaRegistry (shape_inference.h).
#include "hase/graph/shape_inference.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "graph/test_models.h"
#include "testing.h"

namespace hase::graph {
namespace {

using hase::testing::ModelBuilder;

// The ops whose propagators are wrapped are exactly those libonnx gives one.
TEST(ShapeInference, WrapsEveryDataPropagatorOfLibonnx) {
  std::set<std::string> libonnx;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (s.has_data_propagation_function() && (s.domain().empty() || s.domain() == "ai.onnx")) {
      libonnx.insert(s.Name());
    }
  }
  std::set<std::string> ours(std::begin(kOpsWithDataPropagation), std::end(kOpsWithDataPropagation));
  EXPECT_EQ(ours, libonnx);
}

// Shape-15 of an untyped input under data propagation: SIGSEGV with OpSchemaRegistry (shown in
// a child here), nothing with the null-safe registry.
TEST(ShapeInference, NullSafeRegistrySkipsPropagationOfAnUntypedInput) {
  ModelBuilder b(17);
  b.Node("Shape", {"nowhere"}, {"shape"});
  b.Output("shape", onnx::TensorProto::INT64);
  onnx::ModelProto m = b.model();
  onnx::ShapeInferenceOptions opts(false, 1, true);
  EXPECT_TRUE(InferModelShapes(&m, opts).ok());
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::INT64);

  onnx::ModelProto raw = b.model();
  EXPECT_EXIT(
      {
        onnx::shape_inference::InferShapes(raw, onnx::OpSchemaRegistry::Instance(), opts);
        std::exit(0);
      },
      ::testing::KilledBySignal(hase::testing::CrashSignal(SIGSEGV)), "");
}

TEST(ShapeInference, ErrorsComeBackAsInvalidArgumentAndLeaveTheModel) {
  ModelBuilder b(13);
  b.Input("x", {"2", "3"}).Input("z", {"4", "5"});
  b.Node("Add", {"x", "z"}, {"y"});
  b.Output("y");
  onnx::ModelProto m = b.model();
  const onnx::GraphProto* g = &m.graph();
  Status st = InferModelShapes(&m, onnx::ShapeInferenceOptions(false, 1, false));
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("Incompatible dimensions"), std::string::npos) << st.ToString();
  EXPECT_EQ(&m.graph(), g);  // the GraphProto object stays where it was
}

TEST(ShapeInference, CrashBecomesInternal) {
  ModelBuilder b(17);
  b.Input("x", {"4", "4"});
  ModelBuilder::Int(b.Node("Split", {"x"}, {}), "axis", 0);
  onnx::ModelProto m = b.model();
  const std::string before = m.SerializeAsString();
  Status st = InferModelShapes(&m, onnx::ShapeInferenceOptions(false, 1, false));
  EXPECT_TRUE(st.IsInternal()) << st.ToString();
  EXPECT_EQ(st.message(), "ONNX shape inference (libonnx) crashed (" + hase::testing::CrashSignalName("SIGFPE") + ")");
  EXPECT_FALSE(st.hint().empty());
  EXPECT_EQ(m.SerializeAsString(), before);
}

}  // namespace
}  // namespace hase::graph
