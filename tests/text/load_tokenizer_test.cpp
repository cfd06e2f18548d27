#include "strata/text/load_tokenizer.h"

#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "text/tokenizer_fixtures.h"

namespace strata::test {
namespace {

TEST(LoadTokenizer, AcceptsFolderAndJsonFile) {
  const std::string dir = tokenizer_dir("qwen3");
  EXPECT_EQ(text::load_tokenizer(dir)->encode("Hello, world!", false), text::load_tokenizer(dir + "/tokenizer.json")->encode("Hello, world!", false));
}

TEST(LoadTokenizer, RejectsOtherPathsWithAClearMessage) {
  const std::string empty_dir = temp_dir() + "/empty_tokenizer_dir";
  std::filesystem::create_directories(empty_dir);
  for (const std::string& path : {empty_dir, std::string("/no/such/path"), fixture_path("tokenizers/qwen3.tar.gz")}) {
    try {
      text::load_tokenizer(path);
      ADD_FAILURE() << "expected an error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace strata::test
