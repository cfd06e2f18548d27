// Tokenizer::from_vocab (the GGUF path) must encode like tokenizer.json: the spec is built
// from each fixture's vocab and merges (or, for SentencePiece, scores) the way a GGUF holds them.
#include "strata/text/vocab_spec.h"

#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "text/tokenizer_fixtures.h"

namespace strata::test {
namespace {

using text::TokenType;
using Ids = std::vector<int32_t>;

nlohmann::json read_tokenizer_json(const std::string& name) {
  std::ifstream in(tokenizer_dir(name) + "/tokenizer.json");
  return nlohmann::json::parse(in);
}

text::VocabSpec spec_from_json(const std::string& name, const nlohmann::json& root) {
  text::VocabSpec spec;
  const auto& model = root["model"];
  for (const auto& [spelling, id] : model["vocab"].items()) {
    if (id.get<size_t>() >= spec.tokens.size()) spec.tokens.resize(id.get<size_t>() + 1);
    spec.tokens[id.get<size_t>()] = spelling;
  }
  spec.token_types.assign(spec.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (const auto& t : root["added_tokens"]) {
    const size_t id = t["id"].get<size_t>();
    if (id >= spec.tokens.size()) {
      spec.tokens.resize(id + 1);
      spec.token_types.resize(id + 1, static_cast<int32_t>(TokenType::kNormal));
    }
    spec.tokens[id] = t["content"].get<std::string>();
    spec.token_types[id] = static_cast<int32_t>(t["special"].get<bool>() ? TokenType::kControl : TokenType::kUserDefined);
  }
  for (const auto& m : model["merges"])
    spec.merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
  return spec;
}

TEST(VocabSpec, ByteLevelSpecsEncodeLikeTokenizerJson) {
  const std::pair<std::string, std::string> cases[] = {{"qwen3", "qwen2"}, {"llama3_1", "llama3"}, {"deepseek_v3", "deepseek-v3"}};
  const auto& corpus = tokenizer_expected()["corpus"];
  for (const auto& [name, pre] : cases) {
    text::VocabSpec spec = spec_from_json(name, read_tokenizer_json(name));
    spec.model = "gpt2";
    spec.pre = pre;
    if (name == "llama3_1") {
      spec.bos_id = 128000;
      spec.add_bos = true;
    }
    const auto tok = text::Tokenizer::from_vocab(spec);
    const auto& refs = tokenizer_expected()["tokenizers_refs"][name];
    for (size_t i = 0; i < corpus.size(); ++i) {
      const std::string text = corpus[i].get<std::string>();
      EXPECT_EQ(tok->encode(text, false), refs["encode_no_special"][i].get<Ids>()) << name << " corpus[" << i << "]";
      EXPECT_EQ(tok->encode(text, true), refs["encode_with_special"][i].get<Ids>()) << name << " corpus[" << i << "]";
      const Ids ids = refs["encode_no_special"][i].get<Ids>();
      EXPECT_EQ(tok->decode(ids, false), refs["decode_roundtrip"][i].get<std::string>()) << name << " corpus[" << i << "]";
    }
  }
}

// SentencePiece GGUFs carry scores, not merges. The piece scores are recovered from the
// merge order (a piece scores minus the rank of the first merge that makes it).
TEST(VocabSpec, SentencePieceSpecFromScoresEncodesLikeTokenizerJson) {
  text::VocabSpec spec = spec_from_json("llama2", read_tokenizer_json("llama2"));
  spec.model = "llama";
  std::map<std::string, float> score_of;
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    std::string merged = spec.merges[rank];
    merged.erase(merged.find(' '), 1);
    score_of.emplace(merged, -static_cast<float>(rank));
  }
  spec.merges.clear();
  for (size_t id = 0; id < spec.tokens.size(); ++id) {
    const auto it = score_of.find(spec.tokens[id]);
    spec.scores.push_back(it == score_of.end() ? -1e9f : it->second);
    if (spec.tokens[id].size() == 6 && spec.tokens[id].rfind("<0x", 0) == 0) spec.token_types[id] = static_cast<int32_t>(TokenType::kByte);
  }
  spec.token_types[0] = static_cast<int32_t>(TokenType::kUnknown);
  spec.unk_id = 0;
  spec.bos_id = 1;
  spec.eos_id = 2;
  spec.add_bos = true;
  const auto tok = text::Tokenizer::from_vocab(spec);
  const auto& corpus = tokenizer_expected()["corpus"];
  const auto& refs = tokenizer_expected()["tokenizers_refs"]["llama2"];
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string text = corpus[i].get<std::string>();
    EXPECT_EQ(tok->encode(text, true), refs["encode_with_special"][i].get<Ids>()) << "corpus[" << i << "]";
    const Ids ids = refs["encode_no_special"][i].get<Ids>();
    EXPECT_EQ(tok->decode(ids, false), refs["decode_roundtrip"][i].get<std::string>()) << "corpus[" << i << "]";
  }
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->config().bos_token, "<s>");
}

TEST(VocabSpec, PreTokenizerFlavours) {
  EXPECT_EQ(text::pre_tokenizer_regexes("smollm").size(), 2u);
  EXPECT_EQ(text::pre_tokenizer_regexes("llama-bpe"), text::pre_tokenizer_regexes("llama3"));
  EXPECT_EQ(text::pre_tokenizer_regexes("deepseek-v3").size(), 3u);
  EXPECT_THROW(text::pre_tokenizer_regexes("no-such-flavour"), Error);
}

TEST(VocabSpec, RejectsBadSpecs) {
  text::VocabSpec spec;
  EXPECT_THROW(text::Tokenizer::from_vocab(spec), Error);
  spec.tokens = {"a", "b", "ab"};
  spec.merges = {"a c"};
  EXPECT_THROW(text::Tokenizer::from_vocab(spec), Error);
  spec.merges = {"a b"};
  spec.bos_id = 7;
  EXPECT_THROW(text::Tokenizer::from_vocab(spec), Error);
  spec.bos_id.reset();
  spec.model = "bert";
  EXPECT_THROW(text::Tokenizer::from_vocab(spec), Error);
}

}  // namespace
}  // namespace strata::test
