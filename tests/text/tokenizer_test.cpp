// Encodings and decodings of the four fixture tokenizers against Hugging Face's output.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/text/utf8.h"
#include "text/tokenizer_fixtures.h"

namespace strata::test {
namespace {

using Ids = std::vector<int32_t>;

class TokenizerFixture : public ::testing::TestWithParam<std::string> {
 protected:
  const text::Tokenizer& tok() const { return fixture_tokenizer(GetParam()); }
  const nlohmann::json& refs() const { return tokenizer_expected()["tokenizers_refs"][GetParam()]; }
  const nlohmann::json& corpus() const { return tokenizer_expected()["corpus"]; }
};

TEST_P(TokenizerFixture, EncodesCorpusWithoutSpecialTokens) {
  for (size_t i = 0; i < corpus().size(); ++i) {
    const std::string text = corpus()[i].get<std::string>();
    EXPECT_EQ(tok().encode(text, false), refs()["encode_no_special"][i].get<Ids>()) << "corpus[" << i << "] " << text;
  }
}

TEST_P(TokenizerFixture, EncodesCorpusWithSpecialTokens) {
  for (size_t i = 0; i < corpus().size(); ++i) {
    const std::string text = corpus()[i].get<std::string>();
    EXPECT_EQ(tok().encode(text, true), refs()["encode_with_special"][i].get<Ids>()) << "corpus[" << i << "] " << text;
  }
}

TEST_P(TokenizerFixture, DecodesCorpusIds) {
  for (size_t i = 0; i < corpus().size(); ++i) {
    const Ids ids = refs()["encode_no_special"][i].get<Ids>();
    EXPECT_EQ(tok().decode(ids, false), refs()["decode_roundtrip"][i].get<std::string>()) << "corpus[" << i << "]";
  }
}

TEST_P(TokenizerFixture, EncodesRenderedChatsMatchingSpecialTokensInText) {
  for (const auto& chat : refs()["chat"]) {
    if (!chat.contains("ids")) continue;  // the tool-call rendering has text only
    const std::string text = chat["text"].get<std::string>();
    EXPECT_EQ(tok().encode(text, false), chat["ids"].get<Ids>()) << text;
  }
}

TEST_P(TokenizerFixture, SkipsSpecialTokensOnRequest) {
  for (const auto& chat : refs()["chat"]) {
    if (!chat.contains("ids")) continue;
    const Ids ids = chat["ids"].get<Ids>();
    const std::string text = tok().decode(ids, true);
    for (const auto& added : tok().added_tokens()) {
      if (!added.special) continue;
      EXPECT_EQ(text.find(added.content), std::string::npos) << added.content;
    }
  }
}

TEST_P(TokenizerFixture, IllFormedUtf8NeverCrashesAndIsDefined) {
  const std::string inputs[] = {"\xff\xfe", "abc\xe6\x97", "\xe6\x97", "\xc3", "x\x80y", "\xf0\x9f\x98", "\xed\xa0\x80z"};
  for (const std::string& input : inputs) {
    const Ids ids = tok().encode(input, true);
    const std::string back = tok().decode(tok().encode(input, false), false);
    if (GetParam() == "llama2") {  // SentencePiece-style: ill-formed subparts become U+FFFD
      EXPECT_EQ(back, tok().decode(tok().encode(text::utf8_lossy(input), false), false));
    } else {  // byte-level: the raw bytes are encoded and decode repairs them lossily
      EXPECT_EQ(back, text::utf8_lossy(input));
    }
  }
}

TEST_P(TokenizerFixture, SpecialTokenAccessors) {
  const auto& t = tok();
  if (GetParam() == "qwen3") {
    EXPECT_FALSE(t.bos_id().has_value());
    EXPECT_EQ(t.eos_id(), 151645);
    EXPECT_EQ(t.token_to_id("<|im_end|>"), 151645);
    EXPECT_TRUE(t.is_special(151645));
    EXPECT_FALSE(t.is_special(9707));
    EXPECT_FALSE(t.chat_template().empty());
  } else if (GetParam() == "llama3_1") {
    EXPECT_EQ(t.bos_id(), 128000);
    EXPECT_EQ(t.eos_id(), 128009);
    EXPECT_EQ(t.id_to_token(9906), "Hello");
  } else if (GetParam() == "llama2") {
    EXPECT_EQ(t.bos_id(), 1);
    EXPECT_EQ(t.eos_id(), 2);
    EXPECT_EQ(t.config().add_bos_token, true);
    EXPECT_TRUE(t.chat_template().empty());
  } else {
    EXPECT_EQ(t.bos_id(), 0);
    EXPECT_EQ(t.eos_id(), 1);
  }
  EXPECT_FALSE(t.id_to_token(-1).has_value());
  EXPECT_FALSE(t.id_to_token(t.vocab_size()).has_value());
  const Ids out_of_range = {-5, t.vocab_size() + 3};
  EXPECT_EQ(t.decode(out_of_range, false), "");
}

INSTANTIATE_TEST_SUITE_P(All, TokenizerFixture, ::testing::Values("qwen3", "llama3_1", "llama2", "deepseek_v3"));

TEST(Tokenizer, MissingFileNamesThePath) {
  try {
    text::Tokenizer::from_file("/nonexistent/tokenizer.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tokenizer.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace strata::test
