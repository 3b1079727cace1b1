#include "hase/graph/attribute_proto.h"

namespace hase::graph {

Attribute AttributeFromProto(const onnx::AttributeProto& a) {
  Attribute out;
  using AP = onnx::AttributeProto;
  switch (a.type()) {
    case AP::INT: out.kind = Attribute::Kind::kInt; out.ints = {a.i()}; break;
    case AP::INTS: out.kind = Attribute::Kind::kInts; out.ints.assign(a.ints().begin(), a.ints().end()); break;
    case AP::FLOAT: out.kind = Attribute::Kind::kFloat; out.floats = {a.f()}; break;
    case AP::FLOATS: out.kind = Attribute::Kind::kFloats; out.floats.assign(a.floats().begin(), a.floats().end()); break;
    case AP::STRING: out.kind = Attribute::Kind::kString; out.s = a.s(); break;
    case AP::STRINGS: out.kind = Attribute::Kind::kStrings; out.strings.assign(a.strings().begin(), a.strings().end()); break;
    case AP::TENSOR:
      out.kind = Attribute::Kind::kTensor;
      out.tensor_elem_type = a.t().data_type();
      out.ints.assign(a.t().dims().begin(), a.t().dims().end());
      out.tensor_raw = a.t().has_raw_data();
      if (out.tensor_raw) out.s = a.t().raw_data();
      break;
    default: out.kind = Attribute::Kind::kOther; break;
  }
  return out;
}

std::optional<onnx::AttributeProto> AttributeToProto(const std::string& name, const Attribute& a) {
  using AP = onnx::AttributeProto;
  AP p;
  p.set_name(name);
  switch (a.kind) {
    case Attribute::Kind::kInt: p.set_type(AP::INT); p.set_i(a.ints.empty() ? 0 : a.ints[0]); break;
    case Attribute::Kind::kInts:
      p.set_type(AP::INTS);
      for (int64_t v : a.ints) p.add_ints(v);
      break;
    case Attribute::Kind::kFloat: p.set_type(AP::FLOAT); p.set_f(a.floats.empty() ? 0 : a.floats[0]); break;
    case Attribute::Kind::kFloats:
      p.set_type(AP::FLOATS);
      for (float v : a.floats) p.add_floats(v);
      break;
    case Attribute::Kind::kString: p.set_type(AP::STRING); p.set_s(a.s); break;
    case Attribute::Kind::kStrings:
      p.set_type(AP::STRINGS);
      for (const auto& v : a.strings) p.add_strings(v);
      break;
    case Attribute::Kind::kTensor: {
      p.set_type(AP::TENSOR);
      onnx::TensorProto* t = p.mutable_t();
      t->set_data_type(a.tensor_elem_type);
      for (int64_t d : a.ints) t->add_dims(d);
      if (a.tensor_raw) t->set_raw_data(a.s);
      break;
    }
    case Attribute::Kind::kOther: return std::nullopt;
  }
  return p;
}

}  // namespace hase::graph
