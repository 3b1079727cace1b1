#include "hase/graph/model_proto_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

namespace hase::graph {
namespace {

// Wire types (https://protobuf.dev/programming-guides/encoding/).
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
// Field numbers from onnx.proto (ONNX 1.12): ModelProto.graph = 7, GraphProto.initializer = 5,
// TensorProto data fields float_data 4, int32_data 5, string_data 6, int64_data 7, raw_data 9,
// double_data 10, uint64_data 11; data_location 14.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kModelIrVersion = 1;
constexpr uint32_t kGraphInitializer = 5;

bool IsTensorDataField(uint32_t n) {
  return n == 4 || n == 5 || n == 6 || n == 7 || n == 9 || n == 10 || n == 11;
}

struct Field {
  uint32_t number = 0;
  int wire = 0;
  const uint8_t* begin = nullptr;    // first byte of the tag
  const uint8_t* payload = nullptr;  // for length-delimited fields: first payload byte
  size_t payload_len = 0;
  const uint8_t* end = nullptr;      // one past the field
};

// Walks protobuf fields in [p, end). `base` is the file start, for offsets in messages.
class WireScanner {
 public:
  WireScanner(const uint8_t* p, const uint8_t* end, const uint8_t* base)
      : p_(p), end_(end), base_(base) {}
  bool done() const { return p_ >= end_; }

  Status Next(Field* f) {
    f->begin = p_;
    uint64_t tag = 0;
    if (!ReadVarint(&tag)) return Error("truncated field tag");
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire = static_cast<int>(tag & 7);
    if (f->number == 0) return Error("invalid field number 0");
    switch (f->wire) {
      case kVarint: {
        uint64_t v;
        if (!ReadVarint(&v)) return Error("truncated varint");
        break;
      }
      case kFixed64:
        if (end_ - p_ < 8) return Error("truncated fixed64");
        p_ += 8;
        break;
      case kFixed32:
        if (end_ - p_ < 4) return Error("truncated fixed32");
        p_ += 4;
        break;
      case kLengthDelimited: {
        uint64_t len;
        if (!ReadVarint(&len)) return Error("truncated length");
        if (len > static_cast<uint64_t>(end_ - p_)) {
          return Error("field " + std::to_string(f->number) + " needs " + std::to_string(len) +
                       " bytes but only " + std::to_string(end_ - p_) + " remain");
        }
        f->payload = p_;
        f->payload_len = len;
        p_ += len;
        break;
      }
      default:
        return Error("unsupported wire type " + std::to_string(f->wire) + " (field " +
                     std::to_string(f->number) + ")");
    }
    f->end = p_;
    return Status::OK();
  }

 private:
  bool ReadVarint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return false;
      const uint8_t b = *p_++;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  Status Error(const std::string& what) const {
    return Status::Parse("truncated or corrupt protobuf: " + what,
                         "byte " + std::to_string(p_ - base_),
                         "is this a complete .onnx file? re-export or re-download it");
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* base_;
};

// Parses one TensorProto, dropping its data fields when they exceed kMaxInlineDataBytes.
// Byte size of a tensor's data from dims and dtype; nullopt for strings, unknown dtypes, negative
// dims or a size past int64.
std::optional<int64_t> TensorBytes(const onnx::TensorProto& t) {
  using TP = onnx::TensorProto;
  int64_t size = 0;
  switch (t.data_type()) {
    case TP::UINT8: case TP::INT8: case TP::BOOL: size = 1; break;
    case TP::UINT16: case TP::INT16: case TP::FLOAT16: case TP::BFLOAT16: size = 2; break;
    case TP::FLOAT: case TP::INT32: case TP::UINT32: size = 4; break;
    case TP::DOUBLE: case TP::INT64: case TP::UINT64: case TP::COMPLEX64: size = 8; break;
    case TP::COMPLEX128: size = 16; break;
    default: return std::nullopt;
  }
  for (int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(size, d, &size)) return std::nullopt;
  }
  return size;
}

std::string DimsText(const onnx::TensorProto& t) {
  std::string s = "[";
  for (int i = 0; i < t.dims_size(); ++i) s += (i ? "," : "") + std::to_string(t.dims(i));
  return s + "]";
}

Status ReadInitializer(const Field& f, const uint8_t* base, onnx::TensorProto* t,
                       ModelReadStats* stats) {
  WireScanner s(f.payload, f.payload + f.payload_len, base);
  size_t data_bytes = 0;
  Field sub;
  while (!s.done()) {
    HASE_RETURN_IF_ERROR(s.Next(&sub));
    if (IsTensorDataField(sub.number)) data_bytes += sub.end - sub.begin;
  }
  if (data_bytes <= static_cast<size_t>(kMaxInlineDataBytes)) {
    if (!t->ParseFromArray(f.payload, static_cast<int>(f.payload_len))) {
      return Status::Parse("corrupt initializer (TensorProto)",
                           "byte " + std::to_string(f.payload - base));
    }
    return Status::OK();
  }
  std::string kept;
  WireScanner s2(f.payload, f.payload + f.payload_len, base);
  while (!s2.done()) {
    HASE_RETURN_IF_ERROR(s2.Next(&sub));
    if (!IsTensorDataField(sub.number)) kept.append(reinterpret_cast<const char*>(sub.begin),
                                                    sub.end - sub.begin);
  }
  if (!t->ParseFromString(kept)) {
    return Status::Parse("corrupt initializer (TensorProto)",
                         "byte " + std::to_string(f.payload - base));
  }
  stats->skipped_data_bytes += static_cast<int64_t>(data_bytes);
  stats->stripped_initializers += 1;
  return Status::OK();
}

Status ReadGraph(const Field& f, const uint8_t* base, onnx::GraphProto* g, ModelReadStats* stats) {
  WireScanner s(f.payload, f.payload + f.payload_len, base);
  std::string rest;
  std::vector<onnx::TensorProto> inits;
  Field sub;
  while (!s.done()) {
    HASE_RETURN_IF_ERROR(s.Next(&sub));
    if (sub.number == kGraphInitializer && sub.wire == kLengthDelimited) {
      inits.emplace_back();
      HASE_RETURN_IF_ERROR(ReadInitializer(sub, base, &inits.back(), stats));
    } else {
      rest.append(reinterpret_cast<const char*>(sub.begin), sub.end - sub.begin);
    }
  }
  onnx::GraphProto part;
  if (!part.ParseFromString(rest)) {
    return Status::Parse("corrupt graph (GraphProto)", "byte " + std::to_string(f.payload - base),
                         "is this a complete .onnx file?");
  }
  for (auto& t : inits) *part.add_initializer() = std::move(t);
  g->MergeFrom(part);
  return Status::OK();
}

// Memory map of a whole file, unmapped on destruction.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr && data_ != MAP_FAILED) munmap(data_, size_);
  }
  Status Open(const std::string& path, size_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::IO(std::string("cannot open: ") + std::strerror(errno), path);
    size_ = size;
    data_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (data_ == MAP_FAILED) return Status::IO(std::string("cannot map: ") + std::strerror(err), path);
    return Status::OK();
  }
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

Result<onnx::ModelProto> ReadModelProto(const std::string& path, ModelReadStats* stats_out) {
  ModelReadStats stats;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status::NotFound("no such file", path, "check the path to the .onnx model");
    }
    return Status::IO(std::string("cannot stat: ") + std::strerror(errno), path);
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("not a regular file", path);
  stats.file_bytes = st.st_size;
  if (st.st_size == 0) return Status::Parse("not a valid ONNX model: the file is empty", path);
  if (st.st_size > INT_MAX) {
    return Status::Unsupported("file is " + std::to_string(st.st_size) +
                                   " bytes, over protobuf's 2 GB message limit",
                               path, "save the model with ONNX external data for its weights");
  }
  MappedFile file;
  HASE_RETURN_IF_ERROR(file.Open(path, static_cast<size_t>(st.st_size)));

  const uint8_t* base = file.data();
  WireScanner s(base, base + file.size(), base);
  std::string rest;
  onnx::GraphProto graph;
  bool has_graph = false, has_ir_version = false;
  Field f;
  while (!s.done()) {
    Status fs = s.Next(&f);
    if (f.number == kModelGraph && f.wire == kLengthDelimited && fs.ok()) {
      fs = ReadGraph(f, base, &graph, &stats);
      has_graph = true;
    }
    if (!fs.ok()) {
      return Status::Parse("not a valid ONNX model: " + fs.message(), path + ": " + fs.where(),
                           fs.hint());
    }
    if (!(f.number == kModelGraph && f.wire == kLengthDelimited)) {
      if (f.number == kModelIrVersion && f.wire == kVarint) has_ir_version = true;
      rest.append(reinterpret_cast<const char*>(f.begin), f.end - f.begin);
    }
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(rest)) {
    return Status::Parse("not a valid ONNX model: the file is not a ModelProto", path,
                         "pass a binary .onnx file");
  }
  if (!has_graph || !has_ir_version) {
    return Status::Parse(std::string("not a valid ONNX model: no ") +
                             (has_graph ? "ir_version" : "graph") + " in the file",
                         path, "pass a binary .onnx file");
  }
  *model.mutable_graph() = std::move(graph);

  // External data: count and check (stat only) the files. A large tensor's file is never
  // opened; a small one's (at most kMaxInlineDataBytes: shape tensors, scales, bounds whose
  // values shape inference and fusion rules read) is read in, as if embedded. Problems (absent
  // file, a length other than the tensor's size, an entry past the end of its file) are recorded
  // per tensor in stats.external_data_issues, not errors: kernels and latencies need no bytes.
  std::set<std::string> missing;
  std::map<std::string, int64_t> sizes;  // location -> file size, for present files
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    stats.external_initializers += 1;
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset" || e.key() == "length") {
        int64_t v = -1;
        try {
          size_t used = 0;
          v = std::stoll(e.value(), &used);
          if (used != e.value().size()) v = -1;
        } catch (...) {
          v = -1;
        }
        if (v < 0) {
          return Status::Parse("external-data entry '" + e.key() + "' of initializer '" + t.name() +
                                   "' is '" + e.value() + "', not a non-negative integer",
                               path, "re-save the model with onnx.save_model(..., save_as_external_data=True)");
        }
        (e.key() == "offset" ? offset : length) = v;
      }
    }
    if (location.empty()) continue;
    auto issue = [&](ExternalDataIssue::Kind kind, std::string detail) {
      stats.external_data_issues.push_back({kind, t.name(), location, std::move(detail)});
    };
    // The entry must describe this tensor: `length`, when given, is its byte size (ONNX
    // Runtime refuses a mismatch: "TensorProto external data size mismatch").
    const std::optional<int64_t> bytes = TensorBytes(t);
    if (length >= 0 && bytes && length != *bytes) {
      issue(ExternalDataIssue::kWrongLength,
            "initializer '" + t.name() + "' (" + DimsText(t) + ", " +
                onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t.data_type())) +
                ") is " + std::to_string(*bytes) + " bytes, but its external-data entry gives length " +
                std::to_string(length) + " in '" + location + "'");
      continue;
    }
    auto it = sizes.find(location);
    if (it == sizes.end()) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(dir / location, ec);
      if (ec) {
        missing.insert(location);
        issue(ExternalDataIssue::kMissingFile, "'" + location + "' is missing");
        continue;
      }
      it = sizes.emplace(location, static_cast<int64_t>(size)).first;
    }
    // No `length`: the tensor's own byte size from `offset` (ONNX reads that much).
    if (length < 0) {
      if (!bytes) continue;  // strings: nothing to check
      length = *bytes;
    }
    if (offset > it->second || length > it->second - offset) {
      issue(ExternalDataIssue::kPastTheEnd,
            "initializer '" + t.name() + "' points at bytes " + std::to_string(offset) + ".." +
                std::to_string(offset + length) + " of '" + location + "', which has only " +
                std::to_string(it->second) + " bytes");
      continue;
    }
    if (bytes && *bytes <= kMaxInlineDataBytes) {
      std::ifstream in(dir / location, std::ios::binary);
      std::string raw(static_cast<size_t>(*bytes), '\0');
      if (in.seekg(offset) && in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) {
        t.set_data_location(onnx::TensorProto::DEFAULT);
        t.clear_external_data();
        t.set_raw_data(std::move(raw));
        stats.external_initializers -= 1;
        stats.read_external_initializers += 1;
      } else {
        issue(ExternalDataIssue::kPastTheEnd, "cannot read initializer '" + t.name() + "' from '" +
                                                  location + "'");
      }
    }
  }
  stats.missing_external_files = static_cast<int>(missing.size());
  if (stats_out != nullptr) *stats_out = stats;
  return model;
}

std::vector<std::string> ExternalDataWarnings(const ModelReadStats& stats, const std::string& model_path) {
  std::vector<std::string> out;
  std::vector<std::string> order;  // locations in file order
  std::map<std::string, std::vector<const ExternalDataIssue*>> by_location;
  for (const auto& i : stats.external_data_issues) {
    auto& v = by_location[i.location];
    if (v.empty()) order.push_back(i.location);
    v.push_back(&i);
  }
  const std::string dir = std::filesystem::path(model_path).parent_path().string();
  for (const auto& location : order) {
    const auto& issues = by_location[location];
    const ExternalDataIssue& first = *issues.front();
    const size_t n = issues.size();
    const std::string file = (std::filesystem::path(dir.empty() ? "." : dir) / location).string();
    std::string line;
    if (first.kind == ExternalDataIssue::kMissingFile) {
      line = "external data file '" + file + "' is missing: " + std::to_string(n) + " initializer" +
             (n == 1 ? " has" : "s have") + " no weight bytes (first '" + first.tensor + "')";
    } else {
      line = "external data file '" + file + "' does not match the model: " + first.detail;
      if (n > 1) line += " (and " + std::to_string(n - 1) + " more initializers)";
    }
    line += "; kernels and latencies do not need the bytes, running the model does (ONNX Runtime "
            "refuses it)";
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace hase::graph
