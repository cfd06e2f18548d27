// BERT's tokenizer (WordPiece with BertNormalizer, BertPreTokenizer and the [CLS] / [SEP] template)
// against Hugging Face tokenizers: the encodings tokenizers wrote into
// tests/fixtures/hf/bert_embedding/reference.json (scripts/fixtures/make_encoder_fixture.py), for
// texts with accents, CJK ideographs, control and odd whitespace characters, punctuation, words
// longer than max_input_chars_per_word and special tokens in the text; pairs with their token types.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/text/tokenizer.h"
#include "test_support.h"

namespace strata::text {
namespace {

struct BertTokenizer {
  BertTokenizer() : dir(test::fixture_path("hf/bert_embedding")), tokenizer(Tokenizer::from_file(dir)) {
    std::ifstream in(dir + "/reference.json");
    cases = nlohmann::json::parse(in)["tokenizer_cases"];
  }
  std::string dir;
  std::unique_ptr<Tokenizer> tokenizer;
  nlohmann::json cases;
};

TEST(WordPieceTokenizer, EncodesAsHuggingFaceTokenizers) {
  BertTokenizer t;
  int num_texts = 0;
  for (const nlohmann::json& c : t.cases) {
    if (!c.contains("text")) continue;
    ++num_texts;
    EXPECT_EQ(t.tokenizer->encode(c["text"].get<std::string>(), true), c["ids"].get<std::vector<int32_t>>())
        << c["text"];
  }
  EXPECT_EQ(num_texts, 8);
}

TEST(WordPieceTokenizer, PairsCarryTheirTokenTypes) {
  BertTokenizer t;
  int num_pairs = 0;
  for (const nlohmann::json& c : t.cases) {
    if (!c.contains("pair")) continue;
    ++num_pairs;
    std::vector<int32_t> types;
    const std::vector<int32_t> ids =
        t.tokenizer->encode_pair(c["pair"][0].get<std::string>(), c["pair"][1].get<std::string>(), true, &types);
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(types, c["type_ids"].get<std::vector<int32_t>>());
  }
  EXPECT_EQ(num_pairs, 2);
  std::vector<int32_t> types;
  const std::vector<int32_t> plain = t.tokenizer->encode_pair("a", "b c", false, &types);
  EXPECT_EQ(types, (std::vector<int32_t>{0, 1, 1})) << "no template: a is segment 0, b segment 1";
  EXPECT_EQ(plain.size(), 3u);
}

TEST(WordPieceTokenizer, DecodeJoinsPiecesAndGluesPunctuation) {
  BertTokenizer t;
  // Lowercased by the normalizer; "##" pieces join their word; no space before "," or "?".
  const std::string text = "what is the capital of france, and the encoder?";
  EXPECT_EQ(t.tokenizer->decode(t.tokenizer->encode(text, true), true), text);
  const std::vector<int32_t> ids = t.tokenizer->encode("embeddings", false);
  EXPECT_GT(ids.size(), 1u) << "a word the small vocabulary splits into pieces";
  EXPECT_EQ(t.tokenizer->decode(ids, true), "embeddings");
}

}  // namespace
}  // namespace strata::text
