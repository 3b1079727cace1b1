#include "hase/graph/shape_inference.h"

#include <exception>
#include <map>
#include <tuple>
#include <utility>

#include "hase/base/isolated_call.h"

namespace hase::graph {
namespace {

// Highest opset whose schemas are looked up for patching (ONNX 1.12 knows up to 17; asking
// higher returns the latest).
constexpr int kMaxOpsetAsked = 18;

// OpSchemaRegistry with each data-propagation function wrapped: it runs only when the node's
// input 0 (the data input of every op ONNX 1.12 propagates: Shape, Size, Cast, Squeeze,
// Unsqueeze, Concat, Gather, Slice, Add, Sub, Mul, …) has a type. A scan of every ai.onnx
// schema of ONNX 1.12 with one input missing at a time found Shape-15's propagator the only one
// that crashes; the wrapper covers them all, as an absent input 0 has no data to propagate.
class NullSafeRegistry final : public onnx::ISchemaRegistry {
 public:
  NullSafeRegistry() {
    // Every version of each op with a propagator (kOpsWithDataPropagation), found by asking for
    // it at each opset: copying 20-odd schemas, not all 444 of get_all_schemas_with_history().
    for (const char* op : kOpsWithDataPropagation) {
      for (int opset = 1; opset <= kMaxOpsetAsked; ++opset) {
        const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, opset, "");
        if (s == nullptr || !s->has_data_propagation_function()) continue;
        const auto key = std::make_tuple(s->domain(), s->Name(), s->SinceVersion());
        if (patched_.count(key)) continue;
        onnx::OpSchema copy = *s;
        copy.PartialDataPropagationFunction(
            [inner = s->GetDataPropagationFunction()](onnx::DataPropagationContext& ctx) {
              if (ctx.getNumInputs() == 0) return;
              const onnx::TypeProto* t = ctx.getInputType(0);
              if (t == nullptr || t->value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
              inner(ctx);
            });
        patched_.emplace(key, std::move(copy));
      }
    }
  }

  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* s =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain);
    if (s == nullptr || !s->has_data_propagation_function()) return s;
    auto it = patched_.find(std::make_tuple(s->domain(), s->Name(), s->SinceVersion()));
    return it == patched_.end() ? s : &it->second;
  }

 private:
  // (domain, op, since_version) → the schema with its propagator wrapped. Fixed at construction.
  std::map<std::tuple<std::string, std::string, int>, onnx::OpSchema> patched_;
};

IsolatedCallOptions CallOptions() {
  IsolatedCallOptions o;
  o.what = "ONNX shape inference (libonnx)";
  o.timeout_s = kShapeInferenceTimeoutS;
  return o;
}

// The inferred message replaces the caller's contents; the caller's GraphProto object stays
// where it is (callers hold pointers to it).
void TakeInferred(onnx::ModelProto* into, onnx::ModelProto&& from) {
  *into->mutable_graph() = std::move(*from.mutable_graph());
}
void TakeInferred(onnx::GraphProto* into, onnx::GraphProto&& from) { *into = std::move(from); }

// Runs `infer` on a copy-on-write copy of *msg in a child and takes the inferred message back.
template <typename Message, typename Infer>
Status InferIsolated(Message* msg, Infer&& infer) {
  Result<std::string> bytes = RunIsolated(
      [&]() -> Result<std::string> {
        infer(msg);
        return msg->SerializeAsString();
      },
      CallOptions());
  if (!bytes.ok()) {
    const Status& st = bytes.status();
    if (!st.IsInternal() || !st.hint().empty()) return st;
    return Status::Internal(st.message(), st.where(),
                            "libonnx cannot infer this model: it is malformed or hits a bug in "
                            "libonnx; check it with onnx.checker.check_model(path, full_check=True) "
                            "and re-export it");
  }
  Message inferred;
  if (!inferred.ParseFromString(*bytes)) {
    return Status::Internal(CallOptions().what + ": the inferred model did not parse back");
  }
  TakeInferred(msg, std::move(inferred));
  return Status::OK();
}

}  // namespace

const onnx::ISchemaRegistry& NullSafeSchemaRegistry() {
  static const NullSafeRegistry registry;  // immutable once built; C++11 thread-safe init
  return registry;
}

Status InferModelShapesUnisolated(onnx::ModelProto* model,
                                  const onnx::ShapeInferenceOptions& options) {
  try {
    onnx::shape_inference::InferShapes(*model, &NullSafeSchemaRegistry(), options);
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
}

Status InferModelShapes(onnx::ModelProto* model, const onnx::ShapeInferenceOptions& options) {
  const onnx::ISchemaRegistry* registry = &NullSafeSchemaRegistry();  // built before the fork
  return InferIsolated(model, [&](onnx::ModelProto* m) {
    onnx::shape_inference::InferShapes(*m, registry, options);
  });
}

Status InferGraphShapes(onnx::GraphProto* graph,
                        const std::unordered_map<std::string, int>& opset_imports,
                        const onnx::ShapeInferenceOptions& options) {
  const onnx::ISchemaRegistry* registry = &NullSafeSchemaRegistry();
  return InferIsolated(graph, [&](onnx::GraphProto* g) {
    onnx::shape_inference::InferShapes(g, opset_imports, registry, options);
  });
}

}  // namespace hase::graph
