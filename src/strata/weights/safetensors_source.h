// SafetensorsSource: the weights of a Hugging Face checkpoint folder (`model.safetensors`,
// or shards listed by `model.safetensors.index.json`), or of one `.safetensors` file.
// Every file is mapped and validated on open, and every tensor the index names is checked
// to exist in its shard, so a source that opened serves every tensor it lists.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "strata/weights/safetensors.h"
#include "strata/weights/weight_source.h"

namespace strata {

inline constexpr const char* kSafetensorsFileName = "model.safetensors";
inline constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";

class SafetensorsSource : public WeightSource {
 public:
  // `path`: a model folder, a `*.safetensors.index.json` file, or a `.safetensors` file.
  // Throws Error naming the file (and the tensor) when anything is missing or malformed.
  static std::unique_ptr<SafetensorsSource> open(const std::string& path);

  const WeightInfo* find(std::string_view name) const override;
  std::vector<std::string> names() const override;  // sorted
  std::string description() const override;

  int num_files() const { return static_cast<int>(files_.size()); }
  const SafetensorsFile& file(int i) const { return *files_.at(i); }

 private:
  SafetensorsSource() = default;
  void open_single(const std::string& path);
  void open_index(const std::string& index_path);

  std::string description_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const WeightInfo*, std::less<>> tensors_;  // points into files_
};

// Whether `dir` holds `model.safetensors` or `model.safetensors.index.json`.
bool has_safetensors(const std::string& dir);

}  // namespace strata
