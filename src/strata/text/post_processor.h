// Post-processing when special tokens are requested: the single-sequence template
// (TemplateProcessing, or Bert/Roberta's fixed one) that puts bos/eos-style tokens around
// the ids, and the pair template (cross-encoders score a query and a document as one
// sequence). ByteLevel post-processing only trims offsets, so it adds nothing here.
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
  // The pair template around a and b: pair prefix, a, middle, b, pair suffix. type_ids, when
  // given, gets each id's segment as the template says (BERT: 0 through the first [SEP], then 1).
  std::vector<int32_t> apply_pair(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                                  std::vector<int32_t>* type_ids = nullptr) const;
  // Ids apply (pair: apply_pair) adds around the text.
  int64_t num_special_tokens(bool pair) const {
    return static_cast<int64_t>(pair ? pair_.prefix.size() + pair_.middle.size() + pair_.suffix.size()
                                     : prefix_.size() + suffix_.size());
  }
  const std::vector<int32_t>& prefix() const { return prefix_; }
  const std::vector<int32_t>& suffix() const { return suffix_; }

 private:
  std::vector<int32_t> prefix_, suffix_;  // ids before and after the sequence
  struct Pair {
    std::vector<int32_t> prefix, middle, suffix;  // around and between the two sequences
    std::vector<int32_t> prefix_types, middle_types, suffix_types;  // their segments
    int32_t a_type = 0, b_type = 1;
  };
  Pair pair_;
};

}  // namespace strata::text
