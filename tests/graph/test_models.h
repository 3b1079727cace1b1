// Tiny ONNX models built in code for graph/kernels tests (no Python, no files in the repo).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace hase::testing {

// Builds a ModelProto step by step. Dims are strings: "8" is a fixed dim, "N" a symbolic one.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13);

  ModelBuilder& Input(const std::string& name, const std::vector<std::string>& dims,
                      int32_t elem_type = 1);
  ModelBuilder& Output(const std::string& name, int32_t elem_type = 1);
  // Float initializer of `dims`, data embedded (zeros) unless `external` (then an external-data
  // reference to a file that does not exist).
  // `elem_type`: 1 float (4 bytes) or 10 float16 (2 bytes); zeros either way.
  ModelBuilder& Weight(const std::string& name, const std::vector<int64_t>& dims,
                       bool external = false, int32_t elem_type = 1);
  ModelBuilder& FloatConst(const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<float>& values);
  // Float16 initializer of `dims` holding `values`, each rounded to the nearest float16 (normal
  // numbers and zero only: a value outside [2^-14, 65504] in magnitude aborts the test).
  ModelBuilder& Float16Const(const std::string& name, const std::vector<int64_t>& dims,
                             const std::vector<float>& values);
  ModelBuilder& Int64Const(const std::string& name, const std::vector<int64_t>& values);
  // A rank-0 int64 initializer (Gather indices that drop the axis).
  ModelBuilder& Int64Scalar(const std::string& name, int64_t value);
  // Adds a node; returns it for attributes (valid until the next Node call).
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "");

  static void Ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v);
  static void Str(onnx::NodeProto* n, const std::string& name, const std::string& v);

  const onnx::ModelProto& model() const { return m_; }
  // Writes the model to a fresh file in a per-process temp dir and returns its path.
  std::string Write(const std::string& file_name) const;

 private:
  onnx::ModelProto m_;
};

// A per-process temporary directory (created on first use).
std::string TestTempDir();
// Writes `bytes` to TestTempDir()/name and returns the path.
std::string WriteFile(const std::string& name, const std::string& bytes);

}  // namespace hase::testing
