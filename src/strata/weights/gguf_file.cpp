#include "strata/weights/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/core/error.h"

namespace strata {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr int kMaxDims = 4;                   // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 2;             // arrays of arrays of scalars at most

// Bounds-checked little-endian reads over the mapped bytes; every read names what it
// was reading so a truncated file says where it ended.
class Reader {
 public:
  Reader(const std::string& path, const uint8_t* base, int64_t size)
      : path_(path), base_(base), size_(size) {}

  int64_t pos() const { return pos_; }
  int64_t remaining() const { return size_ - pos_; }

  void need(int64_t n, std::string_view what) const {
    if (n < 0 || n > remaining()) {
      fail("{}: truncated while reading {} at byte {} (needs {} bytes, file has {})", path_, what,
           pos_, n, size_);
    }
  }
  template <typename T> T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(std::string_view what) {
    const uint64_t len = read<uint64_t>(what);
    if (len > static_cast<uint64_t>(remaining())) {
      fail("{}: string length {} for {} at byte {} runs past the end of the file ({} bytes)",
           path_, len, what, pos_ - 8, size_);
    }
    std::string s(reinterpret_cast<const char*>(base_ + pos_), len);
    pos_ += static_cast<int64_t>(len);
    return s;
  }

 private:
  const std::string& path_;
  const uint8_t* base_;
  int64_t size_;
  int64_t pos_ = 0;
};

// Smallest encoding of one value of `type`, to bound array counts by the bytes left.
int64_t min_value_bytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8: case GgufType::kInt8: case GgufType::kBool: return 1;
    case GgufType::kUint16: case GgufType::kInt16: return 2;
    case GgufType::kUint32: case GgufType::kInt32: case GgufType::kFloat32: return 4;
    case GgufType::kString: case GgufType::kUint64: case GgufType::kInt64:
    case GgufType::kFloat64: return 8;
    case GgufType::kArray: return 12;  // element type + count
  }
  return 1;
}

bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

// Reads one scalar into `v` (int_value / float_value / string_value by type).
void read_scalar(Reader& r, GgufType type, const std::string& key, GgufValue& v) {
  switch (type) {
    case GgufType::kUint8: v.int_value = r.read<uint8_t>(key); break;
    case GgufType::kInt8: v.int_value = r.read<int8_t>(key); break;
    case GgufType::kUint16: v.int_value = r.read<uint16_t>(key); break;
    case GgufType::kInt16: v.int_value = r.read<int16_t>(key); break;
    case GgufType::kUint32: v.int_value = r.read<uint32_t>(key); break;
    case GgufType::kInt32: v.int_value = r.read<int32_t>(key); break;
    case GgufType::kUint64: v.int_value = static_cast<int64_t>(r.read<uint64_t>(key)); break;
    case GgufType::kInt64: v.int_value = r.read<int64_t>(key); break;
    case GgufType::kFloat32: v.float_value = r.read<float>(key); break;
    case GgufType::kFloat64: v.float_value = r.read<double>(key); break;
    case GgufType::kBool: v.int_value = r.read<uint8_t>(key) != 0; break;
    case GgufType::kString: v.string_value = r.read_string(key); break;
    case GgufType::kArray: STRATA_CHECK_MSG(false, "array passed to read_scalar"); break;
  }
}

GgufType read_type(Reader& r, const std::string& path, const std::string& key) {
  const int64_t at = r.pos();
  const uint32_t t = r.read<uint32_t>("value type of " + key);
  if (!valid_type(t)) fail("{}: key '{}' has unknown value type {} at byte {}", path, key, t, at);
  return static_cast<GgufType>(t);
}

void read_array(Reader& r, const std::string& path, const std::string& key, int depth,
                GgufValue& v);

GgufValue read_value(Reader& r, const std::string& path, const std::string& key, GgufType type,
                     int depth) {
  GgufValue v;
  v.type = type;
  if (type == GgufType::kArray) {
    read_array(r, path, key, depth + 1, v);
  } else {
    read_scalar(r, type, key, v);
  }
  return v;
}

void read_array(Reader& r, const std::string& path, const std::string& key, int depth,
                GgufValue& v) {
  if (depth > kMaxArrayDepth) fail("{}: key '{}' nests arrays deeper than {}", path, key, kMaxArrayDepth);
  v.element_type = read_type(r, path, key);
  v.num_elements = r.read<uint64_t>("array length of " + key);
  const uint64_t max_elements = static_cast<uint64_t>(r.remaining() / min_value_bytes(v.element_type));
  if (v.num_elements > max_elements) {
    fail("{}: array '{}' claims {} elements of {} but only {} bytes remain", path, key,
         v.num_elements, gguf_type_name(v.element_type), r.remaining());
  }
  for (uint64_t i = 0; i < v.num_elements; ++i) {
    GgufValue e = read_value(r, path, key, v.element_type, depth);
    switch (v.element_type) {
      case GgufType::kString: v.strings.push_back(std::move(e.string_value)); break;
      case GgufType::kFloat32: case GgufType::kFloat64: v.floats.push_back(e.float_value); break;
      case GgufType::kArray: break;  // nested contents are not kept
      default: v.ints.push_back(e.int_value); break;
    }
  }
}

bool is_integer(GgufType t) {
  return t != GgufType::kFloat32 && t != GgufType::kFloat64 && t != GgufType::kString &&
         t != GgufType::kArray && t != GgufType::kBool;
}

int64_t align_up(int64_t v, int64_t alignment) { return (v + alignment - 1) / alignment * alignment; }

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  static constexpr std::string_view kNames[] = {"uint8", "int8", "uint16", "int16", "uint32",
                                                "int32", "float32", "bool", "string", "array",
                                                "uint64", "int64", "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool ggml_type_to_dtype(uint32_t ggml_type, DType* dtype) {
  switch (ggml_type) {
    case 0: *dtype = DType::kF32; return true;
    case 1: *dtype = DType::kF16; return true;
    case 2: *dtype = DType::kQ4_0; return true;
    case 3: *dtype = DType::kQ4_1; return true;
    case 6: *dtype = DType::kQ5_0; return true;
    case 7: *dtype = DType::kQ5_1; return true;
    case 8: *dtype = DType::kQ8_0; return true;
    case 12: *dtype = DType::kQ4_K; return true;
    case 13: *dtype = DType::kQ5_K; return true;
    case 14: *dtype = DType::kQ6_K; return true;
    case 15: *dtype = DType::kQ8_K; return true;
    case 24: *dtype = DType::kI8; return true;
    case 26: *dtype = DType::kI32; return true;
    case 27: *dtype = DType::kI64; return true;
    case 30: *dtype = DType::kBF16; return true;
    default: return false;
  }
}

std::string ggml_type_name(uint32_t ggml_type) {
  static constexpr std::string_view kNames[] = {
      "f32", "f16", "q4_0", "q4_1", "q4_2 (removed)", "q4_3 (removed)", "q5_0", "q5_1", "q8_0",
      "q8_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_K", "iq2_xxs", "iq2_xs", "iq3_xxs",
      "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs", "i8", "i16", "i32", "i64", "f64", "iq1_m",
      "bf16"};
  if (ggml_type < std::size(kNames)) return std::string(kNames[ggml_type]);
  return fmt::format("type {}", ggml_type);
}

struct GgufFile::Mapping {
  int fd = -1;
  void* base = nullptr;
  int64_t size = 0;
  ~Mapping() {
    if (base) munmap(base, static_cast<size_t>(size));
    if (fd >= 0) close(fd);
  }
};

namespace {

// The tensor-info table: name, dims, type and offset of each tensor, checked one by one.
GgufTensorInfo read_tensor_info(Reader& r, const std::string& path, int64_t index) {
  GgufTensorInfo t;
  t.name = r.read_string(fmt::format("name of tensor {}", index));
  const uint32_t n_dims = r.read<uint32_t>("n_dims of " + t.name);
  if (n_dims < 1 || n_dims > kMaxDims) {
    fail("{}: tensor '{}' has {} dims; GGUF tensors have 1 to {}", path, t.name, n_dims, kMaxDims);
  }
  int64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const int64_t ne = r.read<int64_t>("dims of " + t.name);
    if (ne < 1 || __builtin_mul_overflow(numel, ne, &numel)) {
      fail("{}: tensor '{}' has dim {} = {}, which is not a sane size", path, t.name, d, ne);
    }
    t.ne.push_back(ne);
  }
  t.ggml_type = r.read<uint32_t>("type of " + t.name);
  if (!ggml_type_to_dtype(t.ggml_type, &t.dtype)) {
    fail("{}: tensor '{}' has ggml type {} ({}), which strata does not support", path, t.name,
         t.ggml_type, ggml_type_name(t.ggml_type));
  }
  const uint64_t offset = r.read<uint64_t>("offset of " + t.name);
  if (offset > static_cast<uint64_t>(INT64_MAX)) fail("{}: tensor '{}' offset {} is absurd", path, t.name, offset);
  t.offset = static_cast<int64_t>(offset);
  const int64_t block = dtype_block_elems(t.dtype);
  if (t.ne[0] % block != 0) {
    fail("{}: tensor '{}' rows hold {} elements, not a multiple of the {} block size {}", path,
         t.name, t.ne[0], dtype_name(t.dtype), block);
  }
  if (numel / block > INT64_MAX / dtype_block_bytes(t.dtype)) fail("{}: tensor '{}' is too large", path, t.name);
  t.nbytes = numel / block * dtype_block_bytes(t.dtype);
  t.shape.rank = static_cast<int>(n_dims);
  for (uint32_t d = 0; d < n_dims; ++d) t.shape.dims[d] = t.ne[n_dims - 1 - d];
  return t;
}

}  // namespace

namespace {

void read_metadata(Reader& r, const std::string& path, uint64_t num_kv,
                   std::map<std::string, GgufValue, std::less<>>& metadata) {
  for (uint64_t i = 0; i < num_kv; ++i) {
    std::string key = r.read_string(fmt::format("key of metadata entry {}", i));
    const GgufType type = read_type(r, path, key);
    GgufValue value = read_value(r, path, key, type, 0);
    if (!metadata.emplace(key, std::move(value)).second) fail("{}: duplicate metadata key '{}'", path, key);
  }
}

int64_t read_alignment(const std::string& path, const GgufValue* a) {
  if (!a) return 32;
  if (a->type != GgufType::kUint32 || a->int_value == 0 || (a->int_value & (a->int_value - 1)) != 0) {
    fail("{}: general.alignment must be a power-of-two uint32, got {} ({})", path, a->int_value,
         gguf_type_name(a->type));
  }
  return a->int_value;
}

// Points each tensor into the mapped data section after checking its range.
void place_tensors(const std::string& path, const uint8_t* base, int64_t file_bytes,
                   int64_t data_offset, int64_t alignment, std::vector<GgufTensorInfo>& tensors) {
  const int64_t data_bytes = file_bytes - std::min(data_offset, file_bytes);
  for (GgufTensorInfo& t : tensors) {
    if (t.offset % alignment != 0) {
      fail("{}: tensor '{}' offset {} is not a multiple of the alignment {}", path, t.name, t.offset, alignment);
    }
    if (t.offset > data_bytes || t.nbytes > data_bytes - t.offset) {
      fail("{}: tensor '{}' data [{}, {}) lies outside the {}-byte data section (file truncated?)",
           path, t.name, t.offset, t.offset + t.nbytes, data_bytes);
    }
    t.data = base + data_offset + t.offset;
  }
}

}  // namespace

GgufFile::GgufFile(const std::string& path) : path_(path), mapping_(std::make_unique<Mapping>()) {
  mapping_->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (mapping_->fd < 0) fail("{}: cannot open GGUF file: {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(mapping_->fd, &st) != 0) fail("{}: cannot stat: {}", path, std::strerror(errno));
  file_bytes_ = st.st_size;
  if (file_bytes_ < 24) fail("{}: truncated: {} bytes is shorter than a GGUF header (24)", path, file_bytes_);
  void* base = mmap(nullptr, static_cast<size_t>(file_bytes_), PROT_READ, MAP_PRIVATE, mapping_->fd, 0);
  if (base == MAP_FAILED) fail("{}: mmap failed: {}", path, std::strerror(errno));
  mapping_->base = base;
  mapping_->size = file_bytes_;
  Reader r(path_, static_cast<const uint8_t*>(base), file_bytes_);

  const uint32_t magic = r.read<uint32_t>("magic");
  if (magic != kGgufMagic) fail("{}: not a GGUF file (magic 0x{:08x}, expected 0x{:08x} 'GGUF')", path, magic, kGgufMagic);
  version_ = r.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) fail("{}: GGUF version {} is not supported (2 or 3)", path, version_);
  const uint64_t num_tensors = r.read<uint64_t>("tensor count");
  const uint64_t num_kv = r.read<uint64_t>("metadata count");
  // Each kv takes at least 13 bytes and each tensor info at least 32: bound both.
  if (num_kv > static_cast<uint64_t>(r.remaining() / 13)) {
    fail("{}: metadata count {} is absurd for a {}-byte file", path, num_kv, file_bytes_);
  }
  if (num_tensors > static_cast<uint64_t>(r.remaining() / 32)) {
    fail("{}: tensor count {} is absurd for a {}-byte file", path, num_tensors, file_bytes_);
  }
  read_metadata(r, path_, num_kv, metadata_);
  alignment_ = read_alignment(path_, find("general.alignment"));
  tensors_.reserve(num_tensors);
  for (uint64_t i = 0; i < num_tensors; ++i) {
    tensors_.push_back(read_tensor_info(r, path_, static_cast<int64_t>(i)));
    if (!tensor_index_.emplace(tensors_.back().name, i).second) {
      fail("{}: duplicate tensor '{}'", path, tensors_.back().name);
    }
  }
  data_offset_ = align_up(r.pos(), alignment_);
  place_tensors(path_, static_cast<const uint8_t*>(base), file_bytes_, data_offset_, alignment_, tensors_);
}

GgufFile::~GgufFile() = default;

bool GgufFile::has(std::string_view key) const { return metadata_.find(key) != metadata_.end(); }

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

std::vector<std::string> GgufFile::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : metadata_) out.push_back(key);
  return out;
}

const GgufValue& GgufFile::require(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) fail("{}: required metadata key '{}' is missing", path_, key);
  return *v;
}

void GgufFile::fail_type(std::string_view key, const GgufValue& v, std::string_view want) const {
  std::string got(gguf_type_name(v.type));
  if (v.type == GgufType::kArray) got = fmt::format("array of {}", gguf_type_name(v.element_type));
  fail("{}: metadata key '{}' is {}, expected {}", path_, key, got, want);
}

std::string GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::kString) fail_type(key, v, "string");
  return v.string_value;
}

std::string GgufFile::get_string(std::string_view key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue& v = require(key);
  if (!is_integer(v.type)) fail_type(key, v, "an integer");
  if (v.type == GgufType::kUint64 && v.int_value < 0) {
    fail("{}: metadata key '{}' = {} does not fit int64", path_, key, static_cast<uint64_t>(v.int_value));
  }
  return v.int_value;
}

int64_t GgufFile::get_int(std::string_view key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}

double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type == GgufType::kFloat32 || v.type == GgufType::kFloat64) return v.float_value;
  if (is_integer(v.type)) return static_cast<double>(get_int(key));
  fail_type(key, v, "a number");
}

double GgufFile::get_float(std::string_view key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}

bool GgufFile::get_bool(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::kBool) fail_type(key, v, "bool");
  return v.int_value != 0;
}

bool GgufFile::get_bool(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::kArray || v.element_type != GgufType::kString) fail_type(key, v, "array of string");
  return v.strings;
}

std::vector<double> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::kArray) fail_type(key, v, "array of numbers");
  if (v.element_type == GgufType::kFloat32 || v.element_type == GgufType::kFloat64) return v.floats;
  if (!is_integer(v.element_type)) fail_type(key, v, "array of numbers");
  return std::vector<double>(v.ints.begin(), v.ints.end());
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue& v = require(key);
  if (v.type != GgufType::kArray || !is_integer(v.element_type)) fail_type(key, v, "array of integers");
  for (int64_t i : v.ints) {
    if (v.element_type == GgufType::kUint64 && i < 0) {
      fail("{}: metadata array '{}' holds {}, which does not fit int64", path_, key, static_cast<uint64_t>(i));
    }
  }
  return v.ints;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace strata
