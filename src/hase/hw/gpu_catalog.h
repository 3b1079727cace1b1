// GpuCatalog: the GPU types hase knows, and name resolution from any spelling to one entry.
//
// Built from data/gpus.yaml (embedded into the binary at build time; docs/gpu-catalog.md), or
// from another YAML file (`--catalog FILE`). Immutable after construction; thread-safe to read.
//
// Name resolution (Find): a query matches an entry when, after normalisation, it equals the
// entry's id, CUDA/DCGM name or one of its aliases. Normalisation: lower case; the words
// "nvidia", "tesla", "geforce", "quadro", "gtx", "rtx" dropped; every other non-alphanumeric
// character dropped. A second, word-order-free key (sorted words) lets "NVIDIA A100 80GB PCIe"
// match "A100-PCIE-80GB". So "NVIDIA A100-SXM4-40GB" (DCGM modelName), "Tesla T4",
// "A100-PCIE-40GB" (NeuSight), "TitanX_Pascal" (DeepBench) and "a100" (users) all resolve.
//
// Defaults for short, ambiguous names are aliases in data/gpus.yaml, chosen as the most common
// data-centre part (documented in docs/gpu-catalog.md):
//   a100 → A100-SXM4-40GB, a100-80gb → A100-SXM4-80GB, v100 → V100-SXM2-16GB,
//   p100 → P100-PCIE-16GB, h100 → H100-SXM5-80GB, titanx → GTX-TITAN-X (Maxwell, as DeepBench).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hase/base/status.h"
#include "hase/hw/gpu_spec.h"

namespace hase {

class GpuCatalog {
 public:
  // Parses a catalog in the data/gpus.yaml schema. `where` names the source in errors.
  // Errors: Parse (not YAML, line given), InvalidArgument (missing/ill-typed field, duplicate id,
  // a name that resolves to two entries, non-positive peak/bandwidth/SM count).
  static Result<GpuCatalog> FromYaml(std::string_view yaml_text, const std::string& where);
  // Reads and parses FILE. Errors: IO (unreadable), then as FromYaml.
  static Result<GpuCatalog> FromFile(const std::string& path);
  // The catalog compiled into the binary from data/gpus.yaml. Errors: Internal (the embedded
  // copy failed to parse — a build bug).
  static Result<GpuCatalog> Builtin();
  // Builtin() when `path` is empty, else FromFile(path): what `--catalog FILE` does.
  static Result<GpuCatalog> Load(const std::string& path);

  // The entry `name` resolves to (see the class comment); also a MIG instance type spelled
  // "<parent>_<profile>" ("a100_3g.20gb", "nvidia_h100_80gb_hbm3_3g.40gb": Slurm's MIG GRES
  // types) when the parent resolves and has that profile. The pointer lives as long as this
  // catalog. Errors: NotFound with the three nearest names (edit distance on normalised names)
  // in the message and a hint to run `hase gpus`.
  Result<const GpuSpec*> Find(std::string_view name) const;
  // The spec of a `profile` MIG instance of the GPU type `parent` (any spelling Find takes),
  // from the derived entries the catalog builds for every profile in data/gpus.yaml `mig:`
  // (DeriveMigSpec, mig_profile.h). Find also resolves these entries by id
  // ("A100-SXM4-40GB-MIG-1g.5gb") and name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb"). The pointer
  // lives as long as this catalog. Errors: NotFound (unknown parent, as Find; a parent without
  // MIG; a profile the parent lacks, with its valid profiles in the hint).
  Result<const GpuSpec*> FindMig(std::string_view parent, std::string_view profile) const;

  // Up to `k` entry ids nearest to `name`, nearest first (Levenshtein distance between
  // normalised names, over ids, names and aliases; ties by catalog order).
  std::vector<std::string> Nearest(std::string_view name, int k = 3) const;

  // Entries in file order (whole GPUs only).
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  // The derived MIG instance types, parent by parent in file order, profiles in `mig:` order.
  const std::vector<GpuSpec>& mig_gpus() const { return mig_gpus_; }
  size_t size() const { return gpus_.size(); }

  // The normalised key Find uses (exposed for tests and tools).
  static std::string NormalizeName(std::string_view name);

 private:
  struct Key {
    std::string key;
    size_t index;  // into gpus_, then (index - gpus_.size()) into mig_gpus_
  };
  explicit GpuCatalog(std::vector<GpuSpec> gpus) : gpus_(std::move(gpus)) {}
  Status BuildIndex(const std::string& where);
  const GpuSpec& Entry(size_t index) const {
    return index < gpus_.size() ? gpus_[index] : mig_gpus_[index - gpus_.size()];
  }

  std::vector<GpuSpec> gpus_;
  std::vector<GpuSpec> mig_gpus_;  // derived in BuildIndex
  std::vector<Key> keys_;  // every normalised spelling (both key kinds) → entry
};

}  // namespace hase
