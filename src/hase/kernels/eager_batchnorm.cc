#include "hase/kernels/eager_batchnorm.h"

#include <string_view>
#include <utility>
#include <vector>

namespace hase {

bool HasFoldedBatchNorm(const Kernel& k) {
  if (k.op_type != "Conv" && k.op_type != "FusedConv") return false;
  if (k.outputs.empty() || k.weights.empty()) return false;
  return std::string_view(k.weights.front().name).starts_with("onnx::Conv_");
}

Kernel EagerBatchNormAfter(const Kernel& conv) {
  const TensorInfo& y = conv.outputs.front();
  Kernel bn;
  bn.type = "BatchNormalization(eager)";
  bn.op_type = "BatchNormalization";
  bn.family = KernelFamily::kNormalization;
  bn.source_nodes = conv.source_nodes;
  bn.inputs = {y};
  bn.outputs = {y};
  bn.activation_bytes_read = y.bytes();
  bn.bytes_written = y.bytes();
  bn.flops = 2.0 * static_cast<double>(y.elements());
  return bn;
}

int InsertEagerBatchNorm(KernelList& kl) {
  std::vector<Kernel> out;
  out.reserve(kl.kernels.size() * 2);
  int inserted = 0;
  for (Kernel& k : kl.kernels) {
    const bool fold = HasFoldedBatchNorm(k);
    out.push_back(std::move(k));
    if (!fold) continue;
    out.push_back(EagerBatchNormAfter(out.back()));
    ++inserted;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
  kl.kernels = std::move(out);
  return inserted;
}

}  // namespace hase
