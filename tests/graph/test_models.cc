#include "graph/test_models.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace hase::testing {

ModelBuilder::ModelBuilder(int64_t opset) {
  m_.set_ir_version(7);
  m_.set_producer_name("hase tests");
  auto* o = m_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::Input(const std::string& name, const std::vector<std::string>& dims,
                                  int32_t elem_type) {
  auto* vi = m_.mutable_graph()->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name, int32_t elem_type) {
  auto* vi = m_.mutable_graph()->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return *this;
}

ModelBuilder& ModelBuilder::Weight(const std::string& name, const std::vector<int64_t>& dims,
                                   bool external, int32_t elem_type) {
  auto* t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  const int64_t width = elem_type == onnx::TensorProto::FLOAT16 ? 2 : 4;
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  if (external) {
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("absent_weights.bin");
    e = t->add_external_data();
    e->set_key("length");
    e->set_value(std::to_string(n * width));
  } else {
    t->set_raw_data(std::string(static_cast<size_t>(n * width), '\0'));
  }
  return *this;
}

ModelBuilder& ModelBuilder::FloatConst(const std::string& name, const std::vector<int64_t>& dims,
                                       const std::vector<float>& values) {
  auto* t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::Float16Const(const std::string& name,
                                         const std::vector<int64_t>& dims,
                                         const std::vector<float>& values) {
  auto* t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT16);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) {
    uint16_t h = 0;
    if (v != 0.0f) {
      int e = 0;
      const float m = std::frexp(std::fabs(v), &e);  // |v| = m · 2^e, m in [0.5, 1)
      if (e - 1 < -14 || e - 1 > 15) std::abort();   // not a normal float16
      const int mant = static_cast<int>(std::lround((m * 2.0f - 1.0f) * 1024.0f));
      h = static_cast<uint16_t>(((e - 1 + 15) << 10) + mant);  // a carry bumps the exponent
      if (v < 0) h |= 0x8000;
    }
    t->add_int32_data(h);
  }
  return *this;
}

ModelBuilder& ModelBuilder::Int64Const(const std::string& name, const std::vector<int64_t>& values) {
  auto* t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::Int64Scalar(const std::string& name, int64_t value) {
  auto* t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
  return *this;
}

onnx::NodeProto* ModelBuilder::Node(const std::string& op, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    const std::string& domain) {
  auto* n = m_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(m_.graph().node_size()));
  if (!domain.empty()) {
    n->set_domain(domain);
    bool have = false;
    for (const auto& o : m_.opset_import()) have = have || o.domain() == domain;
    if (!have) {
      auto* o = m_.add_opset_import();
      o->set_domain(domain);
      o->set_version(1);
    }
  }
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void ModelBuilder::Ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void ModelBuilder::Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ModelBuilder::Str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::string ModelBuilder::Write(const std::string& file_name) const {
  return WriteFile(file_name, m_.SerializeAsString());
}

std::string TestTempDir() {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() /
                     ("hase_test_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path = TestTempDir() + "/" + name;
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace hase::testing
