// DeepSeek-V4 on the CUDA backend against transformers' logits (tests/fixtures/hf/deepseek_v4:
// sliding, CSA with the lightning indexer, HCA, mHC streams, hash and sqrt-softplus MoE): each
// sequence whole and in chunks of 5 and 3 (windows and compressed entries that close across
// steps), and the three sequences side by side in shared steps. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "model/fixture_support.h"
#include "test_support.h"

namespace strata::test {
namespace {

// The MoE bar of CudaFixture: a near-tied router or indexer pick flips under bf16 activations
// on an odd row (the hash layers cannot flip; the sqrt-softplus and indexer top-k can).
constexpr double kMaxRelL2 = 0.15;

double rel_l2(const Tensor& got, const Tensor& ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double g = got.data_as<float>()[i], e = ref.data_as<float>()[i];
    if (!std::isfinite(g)) return INFINITY;
    num += (g - e) * (g - e);
    den += e * e;
  }
  return std::sqrt(num / den);
}

class CudaDeepseekV4 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible";
    f_ = load_fixture("deepseek_v4", make_cuda_backend(0));
  }
  Fixture f_;
};

TEST_F(CudaDeepseekV4, WholeAndChunkedMatchTransformers) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  for (size_t s = 0; s < f_.sequences.size(); ++s) {
    const FixtureSequence& seq = f_.sequences[s];
    const Tensor whole = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    for (int32_t chunk : {0, 5, 3}) {
      const Tensor got = chunk == 0 ? whole : run_sequence(runner, seq.tokens, seq.prompt_len, chunk);
      const double e = rel_l2(got, seq.logits), against_whole = rel_l2(got, whole);
      std::printf("[cuda deepseek_v4] seq %zu chunk %d: rel_l2 %.2e (against whole %.2e)\n", s, chunk, e,
                  against_whole);
      EXPECT_LT(e, kMaxRelL2) << "sequence " << s << " chunk " << chunk;
      EXPECT_LT(against_whole, kMaxRelL2) << "sequence " << s << " chunk " << chunk;
    }
  }
}

// All three sequences in every step: one prefill step of three rows, then decode steps, against
// transformers and against each sequence run alone.
TEST_F(CudaDeepseekV4, SequencesSideBySideMatchAlone) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  DirectSession session(runner);
  const int64_t vocab = f_.loaded.config.vocab_size;
  std::vector<Tensor> got;
  std::vector<StepInput> inputs;
  std::vector<int64_t> ids;  // the session's id of each fixture sequence
  for (const FixtureSequence& seq : f_.sequences) {
    got.push_back(Tensor::host(DType::kF32, {static_cast<int64_t>(seq.tokens.size()), vocab}));
    inputs.push_back({.seq_id = session.add_sequence(),
                      .token_ids = {seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len},
                      .logits = LogitsMode::kAll});
    ids.push_back(inputs.back().seq_id);
  }
  std::vector<int32_t> done(f_.sequences.size(), 0);
  for (bool more = true; more;) {
    const std::vector<Tensor> logits = session.step(inputs);
    std::vector<StepInput> next;
    more = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const size_t s = static_cast<size_t>(std::find(ids.begin(), ids.end(), inputs[i].seq_id) - ids.begin());
      std::memcpy(got[s].data_as<float>() + done[s] * vocab, logits[i].data(), logits[i].nbytes());
      done[s] += static_cast<int32_t>(inputs[i].token_ids.size());
      const FixtureSequence& seq = f_.sequences[s];
      if (done[s] == static_cast<int32_t>(seq.tokens.size())) continue;
      next.push_back({.seq_id = inputs[i].seq_id, .token_ids = {seq.tokens[done[s]]}, .logits = LogitsMode::kAll});
      more = true;
    }
    inputs = std::move(next);
  }
  ModelRunner alone_runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  for (size_t s = 0; s < f_.sequences.size(); ++s) {
    const FixtureSequence& seq = f_.sequences[s];
    const Tensor alone = run_sequence(alone_runner, seq.tokens, seq.prompt_len, 0);
    const double e = rel_l2(got[s], seq.logits), against_alone = rel_l2(got[s], alone);
    std::printf("[cuda deepseek_v4] side by side seq %zu: rel_l2 %.2e (against alone %.2e)\n", s, e, against_alone);
    EXPECT_LT(e, kMaxRelL2) << "sequence " << s;
    EXPECT_LT(against_alone, kMaxRelL2) << "sequence " << s;
  }
}

}  // namespace
}  // namespace strata::test
