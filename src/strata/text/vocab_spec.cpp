// Tokenizer::from_vocab: the GGUF description mapped onto the same parts tokenizer.json
// gives. Control and unknown tokens become special added tokens; user-defined tokens
// become non-special added tokens (both are matched in raw text, as llama.cpp does).
#include "strata/text/vocab_spec.h"

#include <algorithm>
#include <tuple>

#include "strata/core/error.h"
#include "strata/text/byte_level.h"
#include "strata/text/tokenizer.h"

namespace strata::text {
namespace {

constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kDeepseekV3Regex =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

TokenType type_of(const VocabSpec& spec, size_t id) {
  return id < spec.token_types.size() ? static_cast<TokenType>(spec.token_types[id]) : TokenType::kNormal;
}

bool is_added(TokenType t) { return t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUserDefined; }

void add_added_tokens(const VocabSpec& spec, TokenizerParts& parts) {
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    const TokenType t = type_of(spec, id);
    if (!is_added(t) || spec.tokens[id].empty()) continue;
    parts.added.add({.id = static_cast<int32_t>(id), .content = spec.tokens[id], .special = t != TokenType::kUserDefined});
  }
}

std::vector<std::pair<int32_t, int32_t>> parse_merges(const VocabSpec& spec, const TokenIndex& index) {
  std::vector<std::pair<int32_t, int32_t>> merges;
  merges.reserve(spec.merges.size());
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const std::string& m = spec.merges[rank];
    const size_t space = m.find(' ');
    const auto l = space == std::string::npos ? index.end() : index.find(std::string_view(m).substr(0, space));
    const auto r = space == std::string::npos ? index.end() : index.find(std::string_view(m).substr(space + 1));
    if (l == index.end() || r == index.end()) fail("GGUF tokenizer.ggml.merges[{}] '{}' does not name two vocabulary tokens", rank, m);
    merges.emplace_back(l->second, r->second);
  }
  return merges;
}

void build_gpt2(const VocabSpec& spec, TokenizerParts& parts) {
  std::vector<std::string> internal(spec.tokens.size());
  TokenIndex index;
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    const auto raw = byte_level_to_bytes(spec.tokens[id]);
    internal[id] = raw && !is_added(type_of(spec, id)) ? *raw : spec.tokens[id];
    index.emplace(spec.tokens[id], static_cast<int32_t>(id));
  }
  parts.model = std::make_unique<BpeModel>(std::move(internal), parse_merges(spec, index), BpeOptions{.byte_level = true});
  parts.pre_tokenizer = PreTokenizer::from_regexes(pre_tokenizer_regexes(spec.pre));
  parts.decoder.add({.kind = DecoderStep::Kind::kByteLevel});
}

void build_llama(const VocabSpec& spec, TokenizerParts& parts) {
  const std::string space = "\u2581";
  if (spec.add_space_prefix) parts.normalizer.add({.kind = NormalizerStep::Kind::kPrepend, .content = space});
  parts.normalizer.add({.kind = NormalizerStep::Kind::kReplace, .pattern = " ", .content = space});
  TokenIndex index;
  for (size_t id = 0; id < spec.tokens.size(); ++id) index.emplace(spec.tokens[id], static_cast<int32_t>(id));
  const auto merges = spec.merges.empty() ? merges_from_scores(spec) : parse_merges(spec, index);
  BpeOptions options{.byte_fallback = true, .fuse_unk = true, .unk_id = spec.unk_id.value_or(-1)};
  parts.model = std::make_unique<BpeModel>(spec.tokens, merges, options);
  using Kind = DecoderStep::Kind;
  parts.decoder.add({.kind = Kind::kReplace, .pattern = space, .content = " "});
  parts.decoder.add({.kind = Kind::kByteFallback});
  parts.decoder.add({.kind = Kind::kFuse});
  if (spec.add_space_prefix) parts.decoder.add({.kind = Kind::kStrip, .pattern = " ", .strip_start = 1});
}

}  // namespace

std::vector<std::string> pre_tokenizer_regexes(const std::string& pre) {
  if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3") return {kLlama3Regex};
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return {kQwen2Regex};
  if (pre == "gpt2" || pre == "mpt" || pre == "olmo" || pre == "jais") return {kGpt2Regex};
  if (pre == "smollm" || pre == "starcoder" || pre == "refact" || pre == "command-r" || pre == "codeshell" ||
      pre == "exaone" || pre == "minerva-7b")
    return {R"(\p{N})", kGpt2Regex};
  if (pre == "deepseek-v3") return {R"(\p{N}{1,3})", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", kDeepseekV3Regex};
  if (pre == "default" || pre.empty())
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Regex, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  fail("GGUF tokenizer.ggml.pre '{}' is not supported (supported: default, gpt2, smollm, llama3, llama-bpe, "
       "qwen2, deepseek-v3 and their llama.cpp aliases)", pre);
}

std::vector<std::pair<int32_t, int32_t>> merges_from_scores(const VocabSpec& spec) {
  TokenIndex index;
  for (size_t id = 0; id < spec.tokens.size(); ++id) index.emplace(spec.tokens[id], static_cast<int32_t>(id));
  std::vector<std::tuple<float, int32_t, int32_t, int32_t>> found;  // score, merged, left, right
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    if (type_of(spec, id) != TokenType::kNormal) continue;
    const std::string_view t = spec.tokens[id];
    const float score = id < spec.scores.size() ? spec.scores[id] : 0.f;
    for (size_t cut = 1; cut < t.size(); ++cut) {
      if ((static_cast<uint8_t>(t[cut]) & 0xC0) == 0x80) continue;  // inside a character
      const auto l = index.find(t.substr(0, cut)), r = index.find(t.substr(cut));
      if (l != index.end() && r != index.end()) found.emplace_back(score, static_cast<int32_t>(id), l->second, r->second);
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
    return std::tie(std::get<1>(a), std::get<2>(a), std::get<3>(a)) < std::tie(std::get<1>(b), std::get<2>(b), std::get<3>(b));
  });
  std::vector<std::pair<int32_t, int32_t>> merges;
  merges.reserve(found.size());
  for (const auto& [score, merged, l, r] : found) merges.emplace_back(l, r);
  return merges;
}

std::unique_ptr<Tokenizer> Tokenizer::from_vocab(const VocabSpec& spec) {
  if (spec.tokens.empty()) fail("GGUF tokenizer.ggml.tokens is empty");
  TokenizerParts parts;
  parts.token_strings = spec.tokens;
  if (spec.model == "gpt2") build_gpt2(spec, parts);
  else if (spec.model == "llama") build_llama(spec, parts);
  else fail("GGUF tokenizer.ggml.model '{}' is not supported (supported: gpt2, llama)", spec.model);
  add_added_tokens(spec, parts);
  const int32_t num_tokens = static_cast<int32_t>(spec.tokens.size());
  for (const auto& id : {spec.bos_id, spec.eos_id, spec.pad_id, spec.unk_id})
    if (id && (*id < 0 || *id >= num_tokens)) fail("GGUF special token id {} is outside the vocabulary of {} tokens", *id, num_tokens);
  parts.post_processor = PostProcessor::from_bos_eos(spec.add_bos && spec.bos_id ? *spec.bos_id : -1,
                                                     spec.add_eos && spec.eos_id ? *spec.eos_id : -1);
  parts.bos_id = spec.bos_id;
  parts.eos_id = spec.eos_id;
  parts.pad_id = spec.pad_id;
  parts.config.add_bos_token = spec.add_bos;
  parts.config.add_eos_token = spec.add_eos;
  parts.config.chat_template = spec.chat_template;
  for (auto [id, field] : {std::pair{spec.bos_id, &parts.config.bos_token}, {spec.eos_id, &parts.config.eos_token},
                           {spec.pad_id, &parts.config.pad_token}, {spec.unk_id, &parts.config.unk_token}})
    if (id) *field = spec.tokens[*id];
  return std::make_unique<Tokenizer>(std::move(parts));
}

}  // namespace strata::text
