// No hybrid request is admitted that could never get its memory: the context is capped to the
// tokens the KV pool holds (mamba2's too, which has no attention layer), so a request whose
// prompt + max_tokens needs more gets the server's 400 naming the limit and how far to lower
// max_tokens, while one that fits runs to its max_tokens; an SSM pool without a slot for a
// sequence is refused when the engine is made.
#include <gtest/gtest.h>

#include "engine/engine_test_support.h"
#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/generation_fields.h"
#include "test_support.h"

namespace strata {
namespace {

class HybridLimits : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Backend> backend_ = make_cpu_backend(2);
  LoadedModel loaded_ = load_model({.model_path = test::fixture_path("hf/" + GetParam())}, *backend_);
  std::unique_ptr<text::Tokenizer> tokenizer_ = text::make_id_tokenizer(static_cast<int32_t>(loaded_.config.vocab_size));
};

TEST_P(HybridLimits, PromptAndMaxTokensBeyondThePoolGetA400NamingTheLimit) {
  ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = 4, .num_ssm_slots = 4});
  test::CheckedEngine engine(runner, *tokenizer_, {}, {});
  ASSERT_EQ(engine.max_model_len(), 64);  // 4 blocks of 16 tokens
  server::GenerationFields fields = server::read_generation_fields(server::Json::parse(R"({"max_tokens": 10})"), 100);
  try {
    server::fit_to_context(fields, test::engine_prompt(1, 60), {.max_model_len = engine.max_model_len()});
    ADD_FAILURE() << "no 400";
  } catch (const server::ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "max_tokens");
    EXPECT_NE(std::string(e.what()).find("maximum context length is 64 tokens"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 4"), std::string::npos) << e.what();
  }
  fields.request.max_tokens = 4;
  GenerationRequest fits = server::fit_to_context(fields, test::engine_prompt(1, 60), {.max_model_len = 64});
  fits.ignore_eos = true;
  EXPECT_EQ(test::collect_choices(*engine.submit(fits), 1)[0].tokens.size(), 4u);
}

TEST_P(HybridLimits, AnSsmPoolWithoutASequenceSlotIsRefused) {
  ModelRunner runner(*loaded_.model, *backend_, {.num_kv_blocks = 4, .num_ssm_slots = 0});
  try {
    Engine engine(runner, *tokenizer_, {}, {});
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no slot for a sequence"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HybridLimits,
                         ::testing::Values("qwen3_next", "mamba2", "nemotron_h", "nemotron_h_moe", "qwen3_5",
                                           "qwen3_5_moe_text"));

}  // namespace
}  // namespace strata
