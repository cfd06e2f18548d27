// Byte-level vocabularies are converted to raw bytes here (when every character is in the
// GPT-2 alphabet), so BPE runs on bytes and never maps characters at encode time.
#include "strata/text/hf_tokenizer_json.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/byte_level.h"
#include "strata/text/tokenizer.h"
#include "strata/text/wordpiece_model.h"

namespace strata::text {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("{} is not valid JSON: {}", path.string(), e.what());
  }
}

std::optional<std::string> token_string(const json& config, const char* key) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v["content"].get<std::string>();
  return std::nullopt;
}

std::string chat_template_of(const json& config) {
  if (!config.contains("chat_template")) return "";
  const json& t = config["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {  // a list of named templates: take "default", else the first
    for (const json& entry : t)
      if (entry.value("name", "") == "default") return entry.value("template", "");
    if (!t.empty()) return t[0].value("template", "");
  }
  return "";
}

std::pair<std::string, std::string> split_merge(const json& merge, size_t rank) {
  if (merge.is_array() && merge.size() == 2) return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  if (merge.is_string()) {
    const std::string s = merge.get<std::string>();
    const size_t space = s.find(' ');
    if (space != std::string::npos && s.find(' ', space + 1) == std::string::npos)
      return {s.substr(0, space), s.substr(space + 1)};
  }
  fail("tokenizer.json merge #{} is neither \"left right\" nor [left, right]: {}", rank, merge.dump());
}

void check_bpe(const json& model) {
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty())
      fail("tokenizer.json BPE {} '{}' is not supported", key, model[key].get<std::string>());
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"].get<double>() > 0)
    fail("tokenizer.json BPE dropout is not supported for inference; set it to null");
}

// The unknown token's id, or -1 when the model names none.
int32_t unk_id(const json& model, const TokenIndex& index) {
  if (!model.contains("unk_token") || !model["unk_token"].is_string()) return -1;
  const auto it = index.find(model["unk_token"].get<std::string>());
  if (it == index.end())
    fail("tokenizer.json unk_token '{}' is not in the vocab", model["unk_token"].get<std::string>());
  return it->second;
}

// WordPiece (BERT): the vocabulary alone; parts.token_strings gets its spellings.
void build_wordpiece(const json& model, TokenizerParts& parts) {
  TokenIndex index;
  for (const auto& [spelling, id_json] : model.at("vocab").items()) {
    const int32_t id = id_json.get<int32_t>();
    if (id < 0) fail("tokenizer.json vocab entry '{}' has negative id {}", spelling, id);
    if (static_cast<size_t>(id) >= parts.token_strings.size()) parts.token_strings.resize(id + 1);
    parts.token_strings[id] = spelling;
    index.emplace(spelling, id);
  }
  const WordPieceOptions options{
      .continuing_subword_prefix = model.value("continuing_subword_prefix", std::string("##")),
      .max_input_chars_per_word = model.value("max_input_chars_per_word", int64_t{100}),
      .unk_id = unk_id(model, index)};
  if (options.unk_id < 0) fail("tokenizer.json: a WordPiece model needs an unk_token in its vocab");
  parts.model = std::make_unique<WordPieceModel>(parts.token_strings, options);
}

// Builds the BPE or WordPiece model and fills parts.token_strings with the model's spellings.
void build_model(const json& model, bool byte_level, TokenizerParts& parts) {
  const std::string type = model.value("type", "BPE");
  if (type == "WordPiece") return build_wordpiece(model, parts);
  if (type != "BPE")
    fail("tokenizer.json model type '{}' is not supported (Strata runs BPE and WordPiece models)", type);
  check_bpe(model);
  const json& vocab = model.at("vocab");
  int32_t max_id = -1;
  for (const auto& [spelling, id] : vocab.items()) max_id = std::max(max_id, id.get<int32_t>());
  parts.token_strings.assign(max_id + 1, "");
  std::vector<std::string> internal(max_id + 1);
  TokenIndex index;
  for (const auto& [spelling, id_json] : vocab.items()) {
    const int32_t id = id_json.get<int32_t>();
    if (id < 0) fail("tokenizer.json vocab entry '{}' has negative id {}", spelling, id);
    parts.token_strings[id] = spelling;
    const auto raw = byte_level ? byte_level_to_bytes(spelling) : std::nullopt;
    internal[id] = raw ? *raw : spelling;
    index.emplace(spelling, id);
  }
  std::vector<std::pair<int32_t, int32_t>> merges;
  const json& merge_list = model.at("merges");
  merges.reserve(merge_list.size());
  for (size_t rank = 0; rank < merge_list.size(); ++rank) {
    const auto [left, right] = split_merge(merge_list[rank], rank);
    const auto l = index.find(left), r = index.find(right);
    if (l == index.end() || r == index.end()) fail("tokenizer.json merge #{} '{} {}' names a token not in the vocab", rank, left, right);
    merges.emplace_back(l->second, r->second);
  }
  BpeOptions options{.byte_level = byte_level, .byte_fallback = model.value("byte_fallback", false),
                     .fuse_unk = model.value("fuse_unk", false), .ignore_merges = model.value("ignore_merges", false),
                     .unk_id = unk_id(model, index)};
  parts.model = std::make_unique<BpeModel>(std::move(internal), merges, options);
}

void add_added_tokens(const json& list, TokenizerParts& parts) {
  for (const json& t : list) {
    AddedToken token{.id = t.at("id").get<int32_t>(), .content = t.at("content").get<std::string>(),
                     .special = t.value("special", false), .lstrip = t.value("lstrip", false),
                     .rstrip = t.value("rstrip", false), .single_word = t.value("single_word", false),
                     .normalized = t.value("normalized", !t.value("special", false))};
    if (token.id < 0) fail("tokenizer.json added token '{}' has negative id {}", token.content, token.id);
    if (static_cast<size_t>(token.id) >= parts.token_strings.size()) parts.token_strings.resize(token.id + 1);
    if (parts.token_strings[token.id].empty()) parts.token_strings[token.id] = token.content;
    parts.added.add(token);
  }
}

}  // namespace

TokenizerConfig parse_tokenizer_config(const json& config) {
  TokenizerConfig out;
  out.bos_token = token_string(config, "bos_token");
  out.eos_token = token_string(config, "eos_token");
  out.pad_token = token_string(config, "pad_token");
  out.unk_token = token_string(config, "unk_token");
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) out.add_bos_token = config["add_bos_token"].get<bool>();
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) out.add_eos_token = config["add_eos_token"].get<bool>();
  out.chat_template = chat_template_of(config);
  return out;
}

TokenizerParts read_hf_tokenizer(const std::string& path) {
  fs::path file = path;
  if (fs::is_directory(file)) file /= "tokenizer.json";
  if (!fs::is_regular_file(file)) fail("tokenizer file {} does not exist (pass a tokenizer.json or a folder holding one)", file.string());
  const json root = read_json(file);
  TokenizerParts parts;
  try {
    parts.normalizer = Normalizer::from_json(root.value("normalizer", json()));
    parts.pre_tokenizer = PreTokenizer::from_json(root.value("pre_tokenizer", json()));
    build_model(root.at("model"), parts.pre_tokenizer.has_byte_level(), parts);
    add_added_tokens(root.value("added_tokens", json::array()), parts);
    parts.post_processor = PostProcessor::from_json(root.value("post_processor", json()));
    parts.decoder = TokenDecoder::from_json(root.value("decoder", json()));
  } catch (const json::exception& e) {
    fail("{}: unexpected layout: {}", file.string(), e.what());
  }
  const fs::path config_file = file.parent_path() / "tokenizer_config.json";
  if (fs::is_regular_file(config_file)) {
    try {
      parts.config = parse_tokenizer_config(read_json(config_file));
    } catch (const json::exception& e) {
      fail("{}: unexpected layout: {}", config_file.string(), e.what());
    }
  }
  return parts;
}

std::unique_ptr<Tokenizer> Tokenizer::from_file(const std::string& path) {
  return std::make_unique<Tokenizer>(read_hf_tokenizer(path));
}

}  // namespace strata::text
