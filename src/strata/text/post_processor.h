// Post-processing when special tokens are requested: the single-sequence template
// (TemplateProcessing, or Bert/Roberta's fixed one) that puts bos/eos-style tokens around
// the ids. ByteLevel post-processing only trims offsets, so it adds nothing here.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace strata::text {

class PostProcessor {
 public:
  // `config` is tokenizer.json's "post_processor" (null allowed).
  static PostProcessor from_json(const nlohmann::json& config);
  // bos and/or eos around the sequence (-1: none), as GGUF metadata describes it.
  static PostProcessor from_bos_eos(int32_t bos_id, int32_t eos_id);

  void apply(std::vector<int32_t>& ids) const;
  const std::vector<int32_t>& prefix() const { return prefix_; }
  const std::vector<int32_t>& suffix() const { return suffix_; }

 private:
  std::vector<int32_t> prefix_, suffix_;  // ids before and after the sequence
};

}  // namespace strata::text
