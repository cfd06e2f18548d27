#include "strata/text/gguf_vocab.h"

#include <cstdint>

#include "strata/core/error.h"

namespace strata::text {
namespace {

std::optional<int32_t> optional_id(const GgufFile& file, const char* key) {
  if (!file.has(key)) return std::nullopt;
  const int64_t id = file.get_int(key);
  if (id < 0) return std::nullopt;  // some converters write -1 for "none"
  if (id > INT32_MAX) fail("{}: {} = {} is not a token id", file.path(), key, id);
  return static_cast<int32_t>(id);
}

}  // namespace

VocabSpec vocab_spec_from_gguf(const GgufFile& file) {
  if (!file.has("tokenizer.ggml.model") || !file.has("tokenizer.ggml.tokens"))
    fail("{}: no tokenizer in the GGUF metadata (tokenizer.ggml.model / tokens missing)", file.path());
  VocabSpec spec;
  spec.model = file.get_string("tokenizer.ggml.model");
  if (spec.model != "gpt2" && spec.model != "llama")
    fail("{}: tokenizer.ggml.model '{}' is not supported; supported: gpt2, llama", file.path(), spec.model);
  spec.pre = file.get_string("tokenizer.ggml.pre", "default");
  spec.tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (file.has("tokenizer.ggml.merges")) spec.merges = file.get_string_array("tokenizer.ggml.merges");
  if (file.has("tokenizer.ggml.scores"))
    for (double s : file.get_float_array("tokenizer.ggml.scores")) spec.scores.push_back(static_cast<float>(s));
  if (file.has("tokenizer.ggml.token_type"))
    for (int64_t t : file.get_int_array("tokenizer.ggml.token_type"))
      spec.token_types.push_back(static_cast<int32_t>(t));
  spec.bos_id = optional_id(file, "tokenizer.ggml.bos_token_id");
  spec.eos_id = optional_id(file, "tokenizer.ggml.eos_token_id");
  spec.pad_id = optional_id(file, "tokenizer.ggml.padding_token_id");
  spec.unk_id = optional_id(file, "tokenizer.ggml.unknown_token_id");
  spec.add_bos = file.get_bool("tokenizer.ggml.add_bos_token", spec.model == "llama");
  spec.add_eos = file.get_bool("tokenizer.ggml.add_eos_token", false);
  spec.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix", true);
  spec.chat_template = file.get_string("tokenizer.chat_template", "");
  return spec;
}

}  // namespace strata::text
