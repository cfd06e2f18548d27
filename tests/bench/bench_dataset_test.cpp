#include "strata/bench/bench_dataset.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "test_support.h"
#include "text/tokenizer_fixtures.h"

namespace strata::bench {
namespace {

TEST(RandomDataset, IdsRunOnFromAnOffsetAfterASharedPrefix) {
  const std::vector<BenchRequest> r = sample_random_requests(
      {.num_requests = 6, .input_len = 12, .output_len = 5, .prefix_len = 3, .seed = 1}, nullptr, 50);
  ASSERT_EQ(r.size(), 6u);
  for (const BenchRequest& q : r) {
    EXPECT_TRUE(q.prompt.empty());  // no tokenizer: ids are sent
    EXPECT_EQ(q.prompt_len, 15);
    ASSERT_EQ(std::ssize(q.prompt_ids), 15);
    EXPECT_EQ(q.expected_output_len, 5);
    EXPECT_TRUE(std::equal(q.prompt_ids.begin(), q.prompt_ids.begin() + 3, r[0].prompt_ids.begin()));
    for (size_t j = 4; j < q.prompt_ids.size(); ++j) EXPECT_EQ(q.prompt_ids[j], (q.prompt_ids[j - 1] + 1) % 50);
  }
}

TEST(RandomDataset, RangeRatioBoundsLengthsAndTheSeedFixesThem) {
  const RandomDatasetOptions options{.num_requests = 200, .input_len = 100, .output_len = 10, .range_ratio = 0.5, .seed = 4};
  const std::vector<BenchRequest> r = sample_random_requests(options, nullptr, 1000);
  int64_t min_in = 1 << 30, max_in = 0, min_out = 1 << 30, max_out = 0;
  for (const BenchRequest& q : r) {
    min_in = std::min(min_in, q.prompt_len), max_in = std::max(max_in, q.prompt_len);
    min_out = std::min(min_out, q.expected_output_len), max_out = std::max(max_out, q.expected_output_len);
  }
  EXPECT_GE(min_in, 50);
  EXPECT_LE(max_in, 150);
  EXPECT_LT(min_in, 60);  // 200 draws reach near both ends
  EXPECT_GT(max_in, 140);
  EXPECT_GE(min_out, 5);
  EXPECT_LE(max_out, 15);
  const std::vector<BenchRequest> again = sample_random_requests(options, nullptr, 1000);
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(again[i].prompt_ids, r[i].prompt_ids);
  EXPECT_THROW(sample_random_requests({.num_requests = 1, .range_ratio = 1.0}, nullptr, 10), Error);
}

TEST(RandomDataset, WithATokenizerTheTextEncodesToPromptLen) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const std::vector<BenchRequest> r =
      sample_random_requests({.num_requests = 4, .input_len = 64, .output_len = 8, .seed = 2}, &tokenizer, 0);
  for (const BenchRequest& q : r) {
    EXPECT_FALSE(q.prompt.empty());
    EXPECT_LE(q.prompt_len, 64);
    EXPECT_GT(q.prompt_len, 32);
    EXPECT_EQ(tokenizer.encode(q.prompt, false), q.prompt_ids);
    for (int32_t id : q.prompt_ids) EXPECT_FALSE(tokenizer.is_special(id));
  }
}

std::string write_sharegpt(const nlohmann::json& data) {
  const std::string path = test::temp_dir() + "/" + test::per_test_name("sharegpt") + ".json";
  test::write_file_atomically(path, data.dump());
  return path;
}

nlohmann::json conversation(const std::string& prompt, const std::string& reply) {
  return {{"conversations", {{{"from", "human"}, {"value", prompt}}, {{"from", "gpt"}, {"value", reply}}}}};
}

TEST(ShareGptDataset, SkipsShortPairsAndTopsUpWithRepeats) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const std::string long_text = "the quick brown fox jumps over the lazy dog again and again";
  const nlohmann::json data = {conversation(long_text, long_text), conversation("hi", long_text),
                               conversation(long_text, "ok"), nlohmann::json{{"conversations", nlohmann::json::array()}}};
  const std::vector<BenchRequest> r =
      sample_sharegpt_requests({.path = write_sharegpt(data), .num_requests = 3, .seed = 5}, tokenizer);
  ASSERT_EQ(r.size(), 3u);  // one valid pair, repeated
  const auto expected_len = std::ssize(tokenizer.encode(long_text, true));
  for (const BenchRequest& q : r) {
    EXPECT_EQ(q.prompt, long_text);
    EXPECT_EQ(q.prompt_len, expected_len);
    EXPECT_EQ(q.expected_output_len, expected_len);
  }
  // A fixed output length keeps the pair whose reply is short.
  const std::vector<BenchRequest> fixed =
      sample_sharegpt_requests({.path = write_sharegpt(data), .num_requests = 2, .output_len = 7, .seed = 5}, tokenizer);
  ASSERT_EQ(fixed.size(), 2u);
  for (const BenchRequest& q : fixed) {
    EXPECT_EQ(q.prompt, long_text);
    EXPECT_EQ(q.expected_output_len, 7);
  }
}

TEST(ShareGptDataset, RefusesAFileThatIsNotAList) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  EXPECT_THROW(sample_sharegpt_requests({.path = write_sharegpt({{"a", 1}}), .num_requests = 1}, tokenizer), Error);
  EXPECT_THROW(sample_sharegpt_requests({.path = "/no/such.json", .num_requests = 1}, tokenizer), Error);
}

}  // namespace
}  // namespace strata::bench
