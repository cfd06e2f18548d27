// --speculative-config parsing: vLLM's ngram form, defaults, and every bad input named.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/speculative_config.h"

namespace strata {
namespace {

TEST(SpeculativeConfig, ParsesVllmNgramForm) {
  const SpeculativeOptions o = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 6, "prompt_lookup_min": 3})");
  EXPECT_EQ(o.num_speculative_tokens, 5);
  EXPECT_EQ(o.prompt_lookup_max, 6);
  EXPECT_EQ(o.prompt_lookup_min, 3);
  const SpeculativeOptions d = parse_speculative_config(R"({"num_speculative_tokens": 2})");
  EXPECT_EQ(d.prompt_lookup_max, 4);
  EXPECT_EQ(d.prompt_lookup_min, 2);
}

TEST(SpeculativeConfig, ParsesVllmDraftModelForm) {
  const SpeculativeOptions o = parse_speculative_config(R"({"model": "/m/draft", "num_speculative_tokens": 4})");
  EXPECT_EQ(o.method, SpeculativeMethod::kDraftModel);
  EXPECT_EQ(o.draft_model, "/m/draft");
  EXPECT_EQ(o.num_speculative_tokens, 4);
  EXPECT_TRUE(o.uses_draft_model());
  const SpeculativeOptions m =
      parse_speculative_config(R"({"method": "draft_model", "model": "org/name", "num_speculative_tokens": 1})");
  EXPECT_EQ(m.method, SpeculativeMethod::kDraftModel);
  EXPECT_EQ(m.draft_model, "org/name");
  EXPECT_FALSE(parse_speculative_config(R"({"num_speculative_tokens": 2})").uses_draft_model());
}

TEST(SpeculativeConfig, ParsesVllmMtpFormAndItsQwen3NextAlias) {
  for (const char* json : {R"({"method": "mtp", "num_speculative_tokens": 2})",
                           R"({"method": "qwen3_next_mtp", "num_speculative_tokens": 2})"}) {
    const SpeculativeOptions o = parse_speculative_config(json);
    EXPECT_EQ(o.method, SpeculativeMethod::kMtp) << json;
    EXPECT_EQ(o.num_speculative_tokens, 2);
    EXPECT_TRUE(o.uses_mtp() && o.uses_draft_runner() && !o.uses_draft_model()) << json;
  }
  EXPECT_FALSE(parse_speculative_config(R"({"num_speculative_tokens": 2})").uses_draft_runner());
}

TEST(SpeculativeConfig, ParsesVllmEagle3Form) {
  const SpeculativeOptions o =
      parse_speculative_config(R"({"method": "eagle3", "model": "/heads/eagle3", "num_speculative_tokens": 3})");
  EXPECT_EQ(o.method, SpeculativeMethod::kEagle3);
  EXPECT_EQ(o.draft_model, "/heads/eagle3");
  EXPECT_EQ(o.num_speculative_tokens, 3);
  EXPECT_TRUE(o.uses_eagle3() && o.uses_hidden_state_proposer() && o.uses_draft_runner());
  EXPECT_FALSE(o.uses_draft_model() || o.uses_mtp());
}

TEST(SpeculativeConfig, RejectsWhatItCannotDo) {
  auto message = [](const char* json) {
    try {
      parse_speculative_config(json);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("not json").find("JSON object"), std::string::npos);
  EXPECT_NE(message(R"({"method": "eagle", "num_speculative_tokens": 2})").find("'eagle' is not supported"),
            std::string::npos);
  EXPECT_NE(message(R"({"method": "ngram"})").find("needs num_speculative_tokens"), std::string::npos);
  EXPECT_NE(message(R"({"num_speculative_tokens": 40})").find("[1, 15]"), std::string::npos);
  EXPECT_NE(message(R"({"num_speculative_tokens": 2, "draft": "x"})").find("unknown key 'draft'"), std::string::npos);
  EXPECT_NE(message(R"({"method": "ngram", "num_speculative_tokens": 2, "model": "x"})").find("takes no 'model'"),
            std::string::npos);
  EXPECT_NE(message(R"({"method": "draft_model", "num_speculative_tokens": 2})").find("needs 'model'"),
            std::string::npos);
  EXPECT_NE(message(R"({"method": "mtp", "model": "x", "num_speculative_tokens": 2})").find("drop 'model'"),
            std::string::npos);
  EXPECT_NE(message(R"({"method": "eagle3", "num_speculative_tokens": 2})").find("needs 'model'"), std::string::npos);
  EXPECT_NE(message(R"({"num_speculative_tokens": 2, "prompt_lookup_min": 5, "prompt_lookup_max": 3})").find("exceeds"),
            std::string::npos);
}

}  // namespace
}  // namespace strata
