// KernelSample: one measured kernel latency, the in-memory form of one row of the canonical
// training CSV (docs/training-data.md). Converters (predict/datasets/) produce them, `probe/`
// writes the same rows, the learned model trains and is scored on them.
//
// Shape fields that do not apply are 0 (written as empty cells). Units: latency ms, FLOP, bytes,
// load fractions 0–1 (LoadSnapshot).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hase/kernels/kernel.h"
#include "hase/telemetry/load_snapshot.h"

namespace hase::predict {

struct KernelSample {
  std::string source;  // "neusight", "deepbench", "tophub", "bencyq_hase", "probe", …
  std::string gpu;     // GPU type as written (a catalog name after ResolveGpus())
  KernelFamily family = KernelFamily::kOther;
  std::string op;      // "conv2d", "linear", "add", … (lower case)
  DType dtype = DType::kFloat;

  // Conv / pooling: input [n, c, h, w], k output channels, r x s window.
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  // GEMM: C[b, m, n] = A[b, m, k] · B[b, k, n]; gemm_k is the reduction dimension.
  int64_t gemm_batch = 0, gemm_m = 0, gemm_n = 0, gemm_k = 0;
  // Elementwise / normalisation / data movement.
  int64_t elements = 0;
  int64_t inner = 0;  // reduced axis length (softmax / layernorm)

  double flops = 0;  // FLOP (direct algorithm); 0 = compute from shape
  double bytes = 0;  // minimum DRAM bytes; 0 = compute from shape

  LoadSnapshot load;  // background load; fields unset when the source did not record it

  bool includes_transfer = false;  // latency includes host<->device copies + dispatch
  double h2d_bytes = 0;
  double d2h_bytes = 0;

  double latency_ms = 0;
  std::vector<std::string> flags;  // converter quality flags (docs/training-data.md)
  std::string where;               // "file:line" it was read from, for messages

  // Output spatial size of a conv / pool: floor((h + 2 pad - dilation (r-1) - 1) / stride) + 1.
  int64_t out_h() const;
  int64_t out_w() const;
  bool HasFlag(const std::string& f) const;
  // True when a flag starting with "suspect_" is set (excluded from training by default).
  bool Suspect() const;
};

// Fills `flops` and `bytes` from the shape where they are 0, per family:
//   conv/grouped_conv: flops = 2 n k oh ow (c/groups) r s; bytes = 4·(n c h w + k (c/groups) r s
//     + n k oh ow) (× dtype size instead of 4);
//   gemm: flops = 2 b m n k; bytes = size·b (m k + k n + m n);
//   pooling: flops = n c oh ow r s; bytes = size (n c h w + n c oh ow);
//   elementwise: flops = elements; bytes = size · elements · (inputs + 1) where binary ops
//     ("add", "mul", "div", "pow", "sub") read 2 tensors, everything else 1;
//   normalization: flops = 5 · elements; bytes = 2 · size · elements;
//   data movement: flops 0; bytes = 2 · size · elements.
void FillDerived(KernelSample& s);

// Shape identity independent of GPU, source, load and measurement (docs/training-data.md,
// "Identity of a shape"), used by --split by-shape.
std::string ShapeKey(const KernelSample& s);

// Parses a family name written by KernelFamilyName(); nullopt-like: returns false when unknown.
bool ParseKernelFamily(const std::string& name, KernelFamily* out);
// Parses an ONNX dtype spelling ("float", "float16", "fp16", "float32", empty = float).
bool ParseDType(const std::string& name, DType* out);

}  // namespace hase::predict
