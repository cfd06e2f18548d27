// Every architecture's fixture against transformers' logits: prefill then decode, chunked
// prefill, and all sequences batched in one mixed step.
#include <gtest/gtest.h>

#include <cstring>

#include "model/fixture_support.h"

namespace strata::test {
namespace {

constexpr float kReferenceTolerance = 2e-3f;  // f32 against transformers' f32
constexpr float kSameMathTolerance = 1e-4f;   // the same model run through other step shapes

class FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, PrefillThenDecodeMatchesTransformers) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  for (size_t i = 0; i < f.sequences.size(); ++i) {
    const FixtureSequence& seq = f.sequences[i];
    const Tensor logits = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    EXPECT_LT(max_abs_diff_rows(logits, seq.logits, 0, seq.tokens.size()), kReferenceTolerance)
        << "sequence " << i;
  }
}

TEST_P(FixtureTest, ChunkedPrefillEqualsWholePrefill) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  for (const FixtureSequence& seq : f.sequences) {
    const Tensor whole = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    for (int32_t chunk : {1, 5, 16}) {
      const Tensor chunked = run_sequence(runner, seq.tokens, seq.prompt_len, chunk);
      EXPECT_LT(max_abs_diff_rows(chunked, whole, 0, seq.tokens.size()), kSameMathTolerance)
          << "chunk " << chunk;
    }
  }
}

// Sequences 1 and 2 prefill together; then sequence 0 prefills while 1 and 2 decode, and
// all three decode side by side until each is done.
TEST_P(FixtureTest, MixedStepBatchEqualsEachSequenceAlone) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  DirectSession session(runner);
  const int64_t vocab = f.loaded.config.vocab_size;
  std::vector<int64_t> ids;
  std::vector<Tensor> got;
  std::vector<int32_t> done(f.sequences.size(), 0);
  for (const FixtureSequence& seq : f.sequences) {
    ids.push_back(session.add_sequence());
    got.push_back(Tensor::host(DType::kF32, {static_cast<int64_t>(seq.tokens.size()), vocab}));
  }
  for (int step = 0;; ++step) {
    std::vector<StepInput> inputs;
    std::vector<size_t> which;
    for (size_t i = 0; i < f.sequences.size(); ++i) {
      const FixtureSequence& seq = f.sequences[i];
      if (done[i] == static_cast<int32_t>(seq.tokens.size()) || (i == 0 && step == 0)) continue;
      const int32_t n = done[i] == 0 ? seq.prompt_len : 1;
      inputs.push_back({.seq_id = ids[i], .token_ids = {seq.tokens.begin() + done[i],
                                                         seq.tokens.begin() + done[i] + n},
                        .logits = LogitsMode::kAll});
      which.push_back(i);
    }
    if (inputs.empty()) break;
    const std::vector<Tensor> logits = session.step(inputs);
    for (size_t k = 0; k < which.size(); ++k) {
      const size_t i = which[k];
      std::memcpy(got[i].data_as<float>() + done[i] * vocab, logits[k].data(), logits[k].nbytes());
      done[i] += static_cast<int32_t>(inputs[k].token_ids.size());
    }
  }
  for (size_t i = 0; i < f.sequences.size(); ++i) {
    const FixtureSequence& seq = f.sequences[i];
    const Tensor alone = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    EXPECT_LT(max_abs_diff_rows(got[i], alone, 0, seq.tokens.size()), kSameMathTolerance) << i;
    EXPECT_LT(max_abs_diff_rows(got[i], seq.logits, 0, seq.tokens.size()), kReferenceTolerance) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Dense, FixtureTest,
                         ::testing::Values("llama", "llama3_rope", "qwen2", "qwen3", "gemma3_text", "gemma3_global"));
INSTANTIATE_TEST_SUITE_P(MoeAndHybrid, FixtureTest,
                         ::testing::Values("qwen3_moe", "mixtral", "qwen3_next", "mamba2",
                                           "nemotron_h", "nemotron_h_moe", "nemotron_h_latent_moe", "gpt_oss",
                                           "gpt_oss_mxfp4", "deepseek_v3", "deepseek_v3_yarn", "deepseek_v4",
                                           "qwen4_exp"));
// Qwen3.5: the multimodal layout (text model under model.language_model, a vision tower and MTP
// tensors left unread, embeddings tied at the top level) and the text-only MoE with fused experts.
INSTANTIATE_TEST_SUITE_P(Qwen35, FixtureTest, ::testing::Values("qwen3_5", "qwen3_5_moe_text"));
// FP8 checkpoints (block scales; compressed-tensors channel scales) against transformers on the
// dequantised weights.
INSTANTIATE_TEST_SUITE_P(Fp8, FixtureTest, ::testing::Values("llama_fp8", "qwen3_moe_fp8"));

}  // namespace
}  // namespace strata::test
