#include "hase/hw/gpu_catalog.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <utility>
#include <sstream>

namespace hase {

// Defined in the build-generated gpus_embedded.cc (CMake, from data/gpus.yaml).
extern const char* const kEmbeddedGpuCatalogYaml;

namespace {

// Words that carry no identity in GPU names (brand / product-line prefixes).
bool IsNoiseWord(const std::string& w) {
  return w == "nvidia" || w == "tesla" || w == "geforce" || w == "quadro" || w == "gtx" ||
         w == "rtx";
}

std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      words.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  std::erase_if(words, IsNoiseWord);
  return words;
}

// Word-order-free key: sorted words joined by '|'. Prefixed so it never equals a plain key.
std::string SortedKey(std::string_view name) {
  std::vector<std::string> w = Words(name);
  if (w.size() < 2) return "";
  std::sort(w.begin(), w.end());
  std::string key = "~";
  for (const auto& s : w) key += s + "|";
  return key;
}

size_t Levenshtein(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "a100_3g.20gb", "nvidia_h100_80gb_hbm3_3g.40gb", "A100-SXM4-40GB 1g.5gb" → (parent spelling,
// profile): a trailing MIG profile "<N>g.<M>gb" after '_', '-' or ' ' (Slurm's MIG GRES types
// under AutoDetect=nvml, GPU feature labels). std::nullopt when there is none.
std::optional<std::pair<std::string_view, std::string_view>> SplitMigSuffix(std::string_view name) {
  const size_t sep = name.find_last_of("_- ");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  const std::string_view prof = name.substr(sep + 1);
  size_t i = 0;
  auto digits = [&] {
    const size_t b = i;
    while (i < prof.size() && std::isdigit(static_cast<unsigned char>(prof[i]))) ++i;
    return i > b;
  };
  auto lit = [&](std::string_view t) {
    for (char c : t) {
      if (i >= prof.size() || std::tolower(static_cast<unsigned char>(prof[i])) != c) return false;
      ++i;
    }
    return true;
  };
  if (!(digits() && lit("g.") && digits() && lit("gb") && i == prof.size())) return std::nullopt;
  std::string_view parent = name.substr(0, sep);
  while (!parent.empty() && (parent.back() == '_' || parent.back() == '-' || parent.back() == ' ')) {
    parent.remove_suffix(1);
  }
  return std::make_pair(parent, prof);
}

std::vector<std::string> Spellings(const GpuSpec& g) {
  std::vector<std::string> s = {g.id, g.name};
  s.insert(s.end(), g.aliases.begin(), g.aliases.end());
  return s;
}

}  // namespace

std::string GpuCatalog::NormalizeName(std::string_view name) {
  std::string key;
  for (const auto& w : Words(name)) key += w;
  return key;
}

Status GpuCatalog::BuildIndex(const std::string& where) {
  keys_.clear();
  mig_gpus_.clear();
  for (const GpuSpec& g : gpus_) {
    for (const MigProfile& p : g.mig.profiles) {
      Result<GpuSpec> d = DeriveMigSpec(g, p.name);
      if (!d.ok()) return d.status().WithContext(where);
      mig_gpus_.push_back(std::move(d).value());
    }
  }
  for (size_t i = 0; i < gpus_.size() + mig_gpus_.size(); ++i) {
    for (const std::string& spelling : Spellings(Entry(i))) {
      for (std::string key : {NormalizeName(spelling), SortedKey(spelling)}) {
        if (key.empty()) continue;
        auto it = std::find_if(keys_.begin(), keys_.end(),
                               [&](const Key& k) { return k.key == key; });
        if (it == keys_.end()) {
          keys_.push_back({key, i});
        } else if (it->index != i) {
          return Status::InvalidArgument(
              "GPU name '" + spelling + "' of '" + Entry(i).id + "' also names '" +
                  Entry(it->index).id + "'",
              where, "make ids, names and aliases unambiguous");
        }
      }
    }
  }
  return Status::OK();
}

Result<const GpuSpec*> GpuCatalog::Find(std::string_view name) const {
  for (const std::string& key : {NormalizeName(name), SortedKey(name)}) {
    if (key.empty()) continue;
    for (const Key& k : keys_) {
      if (k.key == key) return &Entry(k.index);
    }
  }
  if (auto mig = SplitMigSuffix(name)) {  // a MIG instance named "<parent>_<profile>"
    Result<const GpuSpec*> parent = Find(mig->first);
    if (parent.ok() && (*parent)->mig.supported()) return FindMig((*parent)->id, mig->second);
  }
  std::string near;
  for (const auto& n : Nearest(name)) near += (near.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown GPU type '" + std::string(name) + "'" +
                              (near.empty() ? "" : "; nearest: " + near),
                          "GPU catalog", "run `hase gpus` to list the known GPU types");
}

Result<const GpuSpec*> GpuCatalog::FindMig(std::string_view parent,
                                           std::string_view profile) const {
  HASE_ASSIGN_OR_RETURN(const GpuSpec* p, Find(parent));
  const MigProfile* prof = p->mig.Find(profile);
  if (prof == nullptr) return DeriveMigSpec(*p, profile).status();  // the NotFound with hints
  return Find(MigTypeId(p->id, prof->name));
}

std::vector<std::string> GpuCatalog::Nearest(std::string_view name, int k) const {
  const std::string q = NormalizeName(name);
  std::vector<std::pair<size_t, size_t>> best;  // (distance, entry index)
  for (size_t i = 0; i < gpus_.size(); ++i) {
    size_t d = SIZE_MAX;
    for (const std::string& s : Spellings(gpus_[i])) d = std::min(d, Levenshtein(q, NormalizeName(s)));
    best.push_back({d, i});
  }
  std::stable_sort(best.begin(), best.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < best.size() && static_cast<int>(out.size()) < k; ++i) {
    out.push_back(gpus_[best[i].second].id);
  }
  return out;
}

Result<GpuCatalog> GpuCatalog::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::IO("cannot read GPU catalog", path, "check the path given to --catalog");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return FromYaml(ss.str(), path);
}

Result<GpuCatalog> GpuCatalog::Builtin() {
  auto cat = FromYaml(kEmbeddedGpuCatalogYaml, "built-in data/gpus.yaml");
  if (!cat.ok()) {
    return Status::Internal("embedded GPU catalog is invalid: " + cat.status().ToString());
  }
  return cat;
}

Result<GpuCatalog> GpuCatalog::Load(const std::string& path) {
  return path.empty() ? Builtin() : FromFile(path);
}

}  // namespace hase
