// A small tokenizer.json written by Hugging Face tokenizers 0.23 that exercises what the
// fixtures do not: NFKC + Lowercase, Digits, Metaspace (prepend_scheme "first"), unk fusing,
// added tokens with lstrip/rstrip, single_word and normalized=true. Expected ids from HF.
#include <gtest/gtest.h>

#include <fstream>

#include "strata/text/tokenizer.h"
#include "test_support.h"

namespace strata::test {
namespace {

constexpr const char* kTokenizerJson = R"json({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":53,"content":"<sep>","single_word":false,"lstrip":true,"rstrip":true,"normalized":false,"special":true},{"id":54,"content":"hello","single_word":true,"lstrip":false,"rstrip":false,"normalized":true,"special":false},{"id":55,"content":"ﬁx","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":false}],"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]},"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}]},"post_processor":null,"decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},"model":{"type":"BPE","dropout":null,"unk_token":"<unk>","continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":true,"byte_fallback":false,"ignore_merges":false,"vocab":{"<unk>":0,"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"s":19,"t":20,"u":21,"v":22,"w":23,"x":24,"y":25,"z":26,"0":27,"1":28,"2":29,"3":30,"4":31,"5":32,"6":33,"7":34,"8":35,"9":36,"▁":37,".":38,",":39,"!":40,"?":41,"'":42,"▁h":43,"▁he":44,"ll":45,"▁hell":46,"▁hello":47,"▁w":48,"or":49,"▁wor":50,"ld":51,"▁world":52},"merges":[["▁","h"],["▁h","e"],["l","l"],["▁he","ll"],["▁hell","o"],["▁","w"],["o","r"],["▁w","or"],["l","d"],["▁wor","ld"]]}})json";

const text::Tokenizer& synthetic() {
  static const auto tok = [] {
    const std::string path = temp_dir() + "/synthetic_tokenizer.json";
    write_file_atomically(path, kTokenizerJson);
    return text::Tokenizer::from_file(path);
  }();
  return *tok;
}

struct Case {
  std::string text;
  std::vector<int32_t> ids;
  std::string decoded;
};

TEST(TokenizerComponents, MatchHuggingFace) {
  const Case cases[] = {
      {"Hello World", {54, 52}, "hello world"},
      {"HELLO  world <sep>  hello!", {54, 37, 52, 53, 54, 40}, "hello  world<sep>hello!"},
      {"xhello hello", {37, 24, 8, 5, 45, 15, 37, 54}, "xhello hello"},
      {"\u210cello \ufb01x 42", {54, 37, 55, 37, 31, 29}, "hello fix 42"},
      {"h\u00e9llo\u00a0w\u00f6rld", {43, 0, 45, 15, 48, 0, 18, 51}, "h<unk>llo w<unk>rld"},
      {"", {}, ""},
  };
  for (const Case& c : cases) {
    const auto ids = synthetic().encode(c.text, false);
    EXPECT_EQ(ids, c.ids) << c.text;
    EXPECT_EQ(synthetic().decode(ids, false), c.decoded) << c.text;
  }
  EXPECT_EQ(synthetic().token_to_id("\ufb01x"), 55);
  EXPECT_EQ(synthetic().id_to_token(55), "fix");
}

}  // namespace
}  // namespace strata::test
