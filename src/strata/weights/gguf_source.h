// GgufSource: the tensors of a GGUF file under Hugging Face names, for the llama, qwen2
// and qwen3 architectures. Data points into the file's mapping, except llama's attn_q /
// attn_k, whose rows the converter interleaved for ggml's RoPE layout: those are put back
// in HF order at load, into memory the source owns (whole rows move, so quantized rows
// move block-intact).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/weights/gguf_config.h"
#include "strata/weights/gguf_file.h"
#include "strata/weights/weight_source.h"

namespace strata {

// "blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj.weight"; nullopt for names
// with no HF counterpart (e.g. llama3's rope_freqs.weight).
std::optional<std::string> gguf_to_hf_name(std::string_view gguf_name);

class GgufSource : public WeightSource {
 public:
  // Opens and validates the file; throws strata::Error for a malformed file or an
  // architecture other than llama, qwen2, qwen3.
  explicit GgufSource(const std::string& path);
  explicit GgufSource(std::shared_ptr<const GgufFile> file);

  const WeightInfo* find(std::string_view name) const override;
  std::vector<std::string> names() const override;
  std::string description() const override;

  const GgufFile& file() const { return *file_; }
  // The GGUF names of tensors that have no HF name and are not exposed.
  const std::vector<std::string>& unmapped() const { return unmapped_; }

 private:
  void add_tensor(const GgufTensorInfo& tensor, const std::string& hf_name);
  void add_experts(const GgufTensorInfo& tensor, const std::string& layer, std::string_view projection);
  const void* unpermute_rows(const GgufTensorInfo& tensor, int64_t num_heads);

  std::shared_ptr<const GgufFile> file_;
  std::string architecture_;
  std::map<std::string, WeightInfo, std::less<>> weights_;
  std::vector<std::unique_ptr<uint8_t[]>> owned_;  // un-permuted llama q/k rows
  std::vector<std::string> unmapped_;
};

}  // namespace strata
