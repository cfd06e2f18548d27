// The streamed deltas must add up to the full decode, for every corpus string.
#include "strata/text/incremental_detokenizer.h"

#include <gtest/gtest.h>

#include "strata/text/utf8.h"
#include "text/tokenizer_fixtures.h"

namespace strata::test {
namespace {

using Ids = std::vector<int32_t>;

std::string stream(const text::Tokenizer& tok, const Ids& ids, bool skip_special, std::vector<std::string>* deltas = nullptr) {
  text::IncrementalDetokenizer detok(tok, skip_special);
  std::string out;
  for (int32_t id : ids) {
    const std::string delta = detok.push(id);
    EXPECT_TRUE(text::is_valid_utf8(delta));
    if (deltas) deltas->push_back(delta);
    out += delta;
  }
  return out + detok.finish();
}

class IncrementalDetokenizerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(IncrementalDetokenizerFixture, ConcatenationEqualsFullDecode) {
  const auto& tok = fixture_tokenizer(GetParam());
  const auto& refs = tokenizer_expected()["tokenizers_refs"][GetParam()];
  for (const char* key : {"encode_no_special", "encode_with_special"}) {
    for (const auto& ids_json : refs[key]) {
      const Ids ids = ids_json.get<Ids>();
      for (bool skip : {false, true}) EXPECT_EQ(stream(tok, ids, skip), tok.decode(ids, skip)) << ids_json.dump();
    }
  }
  for (const auto& chat : refs["chat"]) {
    if (!chat.contains("ids")) continue;
    const Ids ids = chat["ids"].get<Ids>();
    for (bool skip : {false, true}) EXPECT_EQ(stream(tok, ids, skip), tok.decode(ids, skip));
  }
}

TEST_P(IncrementalDetokenizerFixture, HoldsBackIncompleteCharacters) {
  const auto& tok = fixture_tokenizer(GetParam());
  const std::string text = "\xF0\x9F\x98\x80 ok";  // one emoji split over several tokens
  const Ids ids = tok.encode(text, false);
  std::vector<std::string> deltas;
  EXPECT_EQ(stream(tok, ids, false, &deltas), tok.decode(ids, false));
  EXPECT_TRUE(deltas.front().empty() || deltas.front() == "\xF0\x9F\x98\x80" || deltas.front() == " \xF0\x9F\x98\x80");
}

INSTANTIATE_TEST_SUITE_P(All, IncrementalDetokenizerFixture,
                         ::testing::Values("qwen3", "llama3_1", "llama2", "deepseek_v3"));

TEST(IncrementalDetokenizer, ByteFallbackBytesWaitForTheirCharacter) {
  const auto& tok = fixture_tokenizer("llama2");
  const auto byte = [&](int b) { return *tok.token_to_id(fmt::format("<0x{:02X}>", b)); };
  text::IncrementalDetokenizer detok(tok, false);
  EXPECT_EQ(detok.push(*tok.token_to_id("\u2581a")), "a");  // first token: leading space dropped
  EXPECT_EQ(detok.push(byte(0xE6)), "");
  EXPECT_EQ(detok.push(byte(0x97)), "");
  EXPECT_EQ(detok.push(byte(0xA5)), "");  // complete, but a further byte could still rewrite it
  EXPECT_EQ(detok.push(*tok.token_to_id("\u2581b")), "\xE6\x97\xA5 b");  // later tokens keep it
  EXPECT_EQ(detok.push(byte(0xE6)), "");
  EXPECT_EQ(detok.finish(), "\xEF\xBF\xBD");  // a truncated character ends as U+FFFD
}

// Found by fuzz_tokenizer: "<0x21>" alone is "!", but the run "<0x21><0xBB>" decodes to two
// U+FFFD; emitting "!" early made the stream "!" + three U+FFFD (a cut inside a character).
TEST(IncrementalDetokenizer, ByteRunRewrittenByALaterByteMatchesFullDecode) {
  const auto& tok = fixture_tokenizer("llama2");
  const auto byte = [&](int b) { return *tok.token_to_id(fmt::format("<0x{:02X}>", b)); };
  for (bool skip : {false, true}) {
    const Ids ids = {byte(0x21), byte(0xBB)};
    EXPECT_EQ(tok.decode(ids, skip), "\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(stream(tok, ids, skip), "\xEF\xBF\xBD\xEF\xBF\xBD");
    // A skipped special token between bytes does not end the run: decode drops it first.
    const Ids split = {byte(0x21), *tok.bos_id(), byte(0xBB), *tok.token_to_id("\u2581a")};
    EXPECT_EQ(stream(tok, split, skip), tok.decode(split, skip));
  }
  EXPECT_EQ(tok.decode(Ids{byte(0x21), *tok.bos_id(), byte(0xBB)}, true), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace strata::test
