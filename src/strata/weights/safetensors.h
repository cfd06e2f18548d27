// SafetensorsFile: one `.safetensors` file, mmap'd read-only, its header validated in full
// before any tensor is handed out: every tensor's dtype is supported, its shape has rank
// <= 4, its byte range matches shape x dtype, lies inside the data section and overlaps no
// other tensor. So WeightInfo::data of every tensor points at nbytes readable bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/weights/mapped_file.h"
#include "strata/weights/weight_source.h"

namespace strata {

// Largest JSON header accepted, as the reference (Rust) implementation does.
inline constexpr int64_t kMaxSafetensorsHeaderBytes = 100'000'000;

class SafetensorsFile {
 public:
  // Throws Error naming the file, and the tensor where one is at fault, on any defect.
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  int64_t file_bytes() const { return file_.size(); }
  // In header order (sorted by name); `file` of each is path().
  const std::vector<WeightInfo>& tensors() const { return tensors_; }
  // nullptr when the file has no tensor of that name.
  const WeightInfo* find(std::string_view name) const;
  // The `__metadata__` entry (string -> string), empty when absent.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  MappedFile file_;
  std::vector<WeightInfo> tensors_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
};

// The safetensors dtype string of a dtype ("F32", "BF16", ...); throws Error for dtypes
// safetensors cannot hold (the ggml quantized types).
std::string_view safetensors_dtype_name(DType dtype);

}  // namespace strata
