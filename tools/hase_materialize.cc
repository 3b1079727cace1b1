// hase_materialize: turns a weight-free ONNX model into a runnable full-weight one.
//
//   hase_materialize IN.onnx OUT.onnx [--seed N] [--external]
//
// models/*.onnx keep every large initializer's name, dims and dtype but store its bytes as ONNX
// external data (data_location = EXTERNAL) in a file that is never committed. ONNX Runtime cannot
// load such a model. This tool replaces every initializer that has no data of its own (external,
// or empty although its dims say otherwise) by deterministic pseudo-random values of the right
// dtype and element count:
//   float / float16 / bfloat16 / double: uniform in [-0.1, 0.1)
//   integer and bool types: 0 (a safe index, axis and shape entry)
// Values depend only on --seed (default 0) and the initializer's name, not on file order.
// Initializers that already hold data (small shape tensors, Clip bounds, Resize scales) are kept.
//
// Output: embedded weights (one self-contained file) unless --external is given or the weights
// would exceed protobuf's 2 GB message limit; then they go to OUT.data next to OUT (the ONNX
// external-data layout, 4 KiB-aligned offsets), as onnx.save_model(save_as_external_data) does.
//
// Exit status: 0 on success, 1 on any error (one message on stderr: what, where, what to do).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

namespace {

constexpr int64_t kAlign = 4096;
// Embedded weights above this total go external: protobuf messages cannot exceed 2 GiB, and the
// graph itself needs some room.
constexpr int64_t kMaxEmbeddedBytes = int64_t{2000} * 1000 * 1000;

struct Options {
  std::string in_path;
  std::string out_path;
  uint64_t seed = 0;
  bool external = false;
};

[[noreturn]] void Die(const std::string& msg) {
  std::cerr << "hase_materialize: " << msg << "\n";
  std::exit(1);
}

void Usage(std::ostream& os) {
  os << "usage: hase_materialize IN.onnx OUT.onnx [--seed N] [--external]\n"
        "  Fills every initializer whose data is stripped (external or absent) with deterministic\n"
        "  pseudo-random values so that ONNX Runtime can load the model.\n";
}

// splitmix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed 64-bit generator.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a 64-bit hash of the tensor name: a per-tensor stream independent of file order.
uint64_t HashName(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Bytes per element of an ONNX TensorProto data type; 0 when not a fixed-size numeric type.
int64_t ElementSize(int32_t dtype) {
  using T = onnx::TensorProto;
  switch (dtype) {
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::DOUBLE: case T::INT64: case T::UINT64: case T::COMPLEX64: return 8;
    case T::FLOAT16: case T::BFLOAT16: case T::INT16: case T::UINT16: return 2;
    case T::INT8: case T::UINT8: case T::BOOL: return 1;
    case T::COMPLEX128: return 16;
    default: return 0;
  }
}

bool HasOwnData(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return false;
  return !t.raw_data().empty() || t.float_data_size() > 0 || t.int32_data_size() > 0 ||
         t.int64_data_size() > 0 || t.double_data_size() > 0 || t.uint64_data_size() > 0 ||
         t.string_data_size() > 0;
}

// Element count, or -1 when a dim is negative or the product overflows.
int64_t ElementCount(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d)) return -1;
    n *= d;
  }
  return n;
}

uint16_t FloatToHalf(float f) {
  // Values are in [-0.1, 0.1): normal or subnormal halves, truncating rounding is fine here.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    return static_cast<uint16_t>(sign | (mant >> (14 - exp)));
  }
  return static_cast<uint16_t>(sign | (exp << 10) | (mant >> 13));
}

// Writes `count` values of `dtype` into `out` (count * ElementSize bytes, little-endian).
void Fill(int32_t dtype, int64_t count, uint64_t stream, char* out) {
  using T = onnx::TensorProto;
  uint64_t state = stream;
  auto uniform = [&state]() {  // [-0.1, 0.1) from the top 24 bits
    return (static_cast<float>(SplitMix64(state) >> 40) / 16777216.0f - 0.5f) * 0.2f;
  };
  switch (dtype) {
    case T::FLOAT:
      for (int64_t i = 0; i < count; ++i) {
        float v = uniform();
        std::memcpy(out + 4 * i, &v, 4);
      }
      return;
    case T::DOUBLE:
      for (int64_t i = 0; i < count; ++i) {
        double v = uniform();
        std::memcpy(out + 8 * i, &v, 8);
      }
      return;
    case T::FLOAT16:
      for (int64_t i = 0; i < count; ++i) {
        uint16_t v = FloatToHalf(uniform());
        std::memcpy(out + 2 * i, &v, 2);
      }
      return;
    case T::BFLOAT16:
      for (int64_t i = 0; i < count; ++i) {
        float f = uniform();
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint16_t v = static_cast<uint16_t>(x >> 16);
        std::memcpy(out + 2 * i, &v, 2);
      }
      return;
    default:  // integers, bool, complex: zeros
      std::memset(out, 0, static_cast<size_t>(count * ElementSize(dtype)));
  }
}

struct Stats {
  int64_t filled = 0;
  int64_t bytes = 0;
};

// Collects every initializer in the graph and its subgraphs (If/Loop/Scan bodies).
void CollectInitializers(onnx::GraphProto* g, std::vector<onnx::TensorProto*>& out) {
  for (auto& t : *g->mutable_initializer()) out.push_back(&t);
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) CollectInitializers(a.mutable_g(), out);
      for (auto& sg : *a.mutable_graphs()) CollectInitializers(&sg, out);
    }
  }
}

std::string BaseName(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      Usage(std::cout);
      std::exit(0);
    } else if (a == "--external") {
      o.external = true;
    } else if (a == "--seed") {
      if (i + 1 >= argc) Die("--seed needs a value (an unsigned integer)");
      try {
        o.seed = std::stoull(argv[++i]);
      } catch (...) {
        Die(std::string("--seed: '") + argv[i] + "' is not an unsigned integer");
      }
    } else if (!a.empty() && a[0] == '-') {
      Usage(std::cerr);
      Die("unknown option '" + a + "'");
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    Usage(std::cerr);
    Die("expected IN.onnx and OUT.onnx");
  }
  o.in_path = pos[0];
  o.out_path = pos[1];
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);

  std::ifstream in(opt.in_path, std::ios::binary);
  if (!in) Die(opt.in_path + ": cannot open (check the path)");
  onnx::ModelProto model;
  {
    google::protobuf::io::IstreamInputStream zin(&in);
    google::protobuf::io::CodedInputStream coded(&zin);
    coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage() || !model.has_graph())
      Die(opt.in_path + ": not a valid ONNX model (protobuf parse failed or no graph)");
  }

  std::vector<onnx::TensorProto*> inits;
  CollectInitializers(model.mutable_graph(), inits);

  // Decide the layout first: total bytes of the tensors to fill plus what is already embedded.
  int64_t fill_bytes = 0;
  int64_t embedded_bytes = 0;
  for (const onnx::TensorProto* t : inits) {
    if (HasOwnData(*t)) {
      embedded_bytes += static_cast<int64_t>(t->ByteSizeLong());
      continue;
    }
    int64_t esize = ElementSize(t->data_type());
    int64_t count = ElementCount(*t);
    if (esize == 0 || count < 0)
      Die(opt.in_path + ": initializer '" + t->name() + "' has data type " +
          std::to_string(t->data_type()) + " or dims that cannot be filled");
    fill_bytes += esize * count;
  }
  const bool external = opt.external || fill_bytes + embedded_bytes > kMaxEmbeddedBytes;
  const std::string data_path = opt.out_path + ".data";
  std::ofstream data;
  if (external) {
    data.open(data_path, std::ios::binary | std::ios::trunc);
    if (!data) Die(data_path + ": cannot create (check the folder exists and is writable)");
  }

  Stats stats;
  int64_t offset = 0;
  std::vector<char> buf;
  for (onnx::TensorProto* t : inits) {
    if (HasOwnData(*t)) continue;
    const int64_t nbytes = ElementSize(t->data_type()) * ElementCount(*t);
    const uint64_t stream = HashName(t->name()) ^ (opt.seed * 0x9e3779b97f4a7c15ULL);
    t->clear_external_data();
    t->clear_raw_data();
    if (external) {
      buf.resize(static_cast<size_t>(nbytes));
      Fill(t->data_type(), ElementCount(*t), stream, buf.data());
      const int64_t aligned = (offset + kAlign - 1) / kAlign * kAlign;
      for (int64_t pad = offset; pad < aligned; ++pad) data.put('\0');
      data.write(buf.data(), nbytes);
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [t](const std::string& k, const std::string& v) {
        auto* e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", BaseName(data_path));
      add("offset", std::to_string(aligned));
      add("length", std::to_string(nbytes));
      offset = aligned + nbytes;
    } else {
      t->set_data_location(onnx::TensorProto::DEFAULT);
      std::string* raw = t->mutable_raw_data();
      raw->resize(static_cast<size_t>(nbytes));
      Fill(t->data_type(), ElementCount(*t), stream, raw->data());
    }
    ++stats.filled;
    stats.bytes += nbytes;
  }
  if (external) {
    data.close();
    if (!data) Die(data_path + ": write failed (disk full?)");
  }

  std::ofstream out(opt.out_path, std::ios::binary | std::ios::trunc);
  if (!out) Die(opt.out_path + ": cannot create (check the folder exists and is writable)");
  if (!model.SerializeToOstream(&out)) Die(opt.out_path + ": serialisation failed");
  out.close();
  if (!out) Die(opt.out_path + ": write failed (disk full?)");

  std::cerr << "hase_materialize: " << opt.out_path << ": filled " << stats.filled
            << " initializers, " << stats.bytes << " bytes"
            << (external ? " (external data in " + data_path + ")" : " (embedded)") << "\n";
  return 0;
}
