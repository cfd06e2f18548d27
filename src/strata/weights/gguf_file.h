// GgufFile: a memory-mapped GGUF (v2, v3) file: metadata key/values, tensor infos and the
// aligned data section. Everything is validated at open, so a malformed file is a
// strata::Error naming the file and the fault, and every tensor's bytes lie inside the map.
// Tensor shapes are given twice: `ne` in ggml order (ne[0] = row length) and `shape` in
// Hugging Face order ([rows, cols]).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/dtype.h"
#include "strata/core/tensor.h"

namespace strata {

// Value types as numbered in the GGUF spec.
enum class GgufType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};

std::string_view gguf_type_name(GgufType type);

// One metadata value. Scalars fill one field by type; arrays fill the vector of their
// element kind (integers and bools -> ints, floats -> floats, strings -> strings).
// Arrays of arrays are accepted but their contents are not kept.
struct GgufValue {
  GgufType type = GgufType::kUint8;
  GgufType element_type = GgufType::kUint8;  // arrays only
  uint64_t num_elements = 0;                 // arrays only
  int64_t int_value = 0;      // all integer types and bool; uint64 stored bit-cast
  double float_value = 0.0;   // float32, float64
  std::string string_value;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
};

struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;
  DType dtype = DType::kF32;
  std::vector<int64_t> ne;  // ggml order, innermost first
  Shape shape;              // HF order: reversed ne, e.g. [rows, cols]
  int64_t offset = 0;       // from the start of the data section
  int64_t nbytes = 0;
  const void* data = nullptr;  // inside the mapping
};

// Sets *dtype to the strata dtype of a ggml type id; false when Strata has none.
bool ggml_type_to_dtype(uint32_t ggml_type, DType* dtype);
// "q4_K", "f16", ... for messages; "type N" when unknown.
std::string ggml_type_name(uint32_t ggml_type);

class GgufFile {
 public:
  // Maps and validates `path`; throws strata::Error on any fault.
  explicit GgufFile(const std::string& path);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  int64_t alignment() const { return alignment_; }
  int64_t file_bytes() const { return file_bytes_; }
  int64_t data_offset() const { return data_offset_; }

  // Metadata. Getters without a fallback throw an Error naming the key when it is
  // missing; all throw when the stored type does not fit the request.
  bool has(std::string_view key) const;
  const GgufValue* find(std::string_view key) const;
  std::vector<std::string> keys() const;
  std::string get_string(std::string_view key) const;
  std::string get_string(std::string_view key, const std::string& fallback) const;
  int64_t get_int(std::string_view key) const;
  int64_t get_int(std::string_view key, int64_t fallback) const;
  double get_float(std::string_view key) const;  // accepts integer values too
  double get_float(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<double> get_float_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;

 private:
  struct Mapping;
  const GgufValue& require(std::string_view key) const;
  [[noreturn]] void fail_type(std::string_view key, const GgufValue& v, std::string_view want) const;

  std::string path_;
  std::unique_ptr<Mapping> mapping_;
  uint32_t version_ = 0;
  int64_t alignment_ = 32;
  int64_t file_bytes_ = 0;
  int64_t data_offset_ = 0;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace strata
