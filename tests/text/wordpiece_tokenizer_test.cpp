// BERT's tokenizer (WordPiece with BertNormalizer, BertPreTokenizer and the [CLS] / [SEP] template)
// against Hugging Face tokenizers: the encodings tokenizers wrote into
// tests/fixtures/hf/bert_embedding/reference.json (scripts/fixtures/make_encoder_fixture.py), for
// texts with accents, CJK ideographs, control and odd whitespace characters, punctuation, words
// longer than max_input_chars_per_word and special tokens in the text; pairs with their token types.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
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

// truncation=True, max_length=k as Hugging Face cuts: one text keeps [CLS], its first k - 2 tokens and
// [SEP]; a pair loses tokens from the longer text one at a time (the second on a tie), and its token
// types follow the cut.
TEST(WordPieceTokenizer, TruncationKeepsSpecialTokensAndCutsTheLongerText) {
  BertTokenizer t;
  const std::vector<int32_t> whole = t.tokenizer->encode("what is the capital of france and the encoder", true);
  ASSERT_EQ(whole.size(), 11u);
  const std::vector<int32_t> cut = t.tokenizer->encode("what is the capital of france and the encoder", true, 5);
  EXPECT_EQ(cut, (std::vector<int32_t>{2, 120, 71, 65, 3})) << "as tokenizers 0.23 cuts it";
  EXPECT_EQ(t.tokenizer->encode("what is the capital of france and the encoder", true, 11), whole);
  EXPECT_EQ(t.tokenizer->encode("what is the capital", false, 2).size(), 2u);
  EXPECT_THROW(t.tokenizer->encode("what", true, 2), Error) << "[CLS] and [SEP] alone take 2";
  const std::string a = "what is the capital", b = "paris is the capital and largest city of france";
  const std::vector<int32_t> first = t.tokenizer->encode(a, false), second = t.tokenizer->encode(b, false);
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), 9u);
  std::vector<int32_t> types;
  // 3 specials + 10 content: the second loses 5 (9 -> 4), then the tie takes the second again (4 -> 3),
  // then the first (4 -> 3): 3 + 3.
  const std::vector<int32_t> pair = t.tokenizer->encode_pair(a, b, true, &types, 3 + 6);
  EXPECT_EQ(pair, (std::vector<int32_t>{2, 120, 71, 65, 3, 102, 71, 65, 3})) << "as tokenizers 0.23 cuts it";
  EXPECT_EQ(types, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
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
