// Hybrid fixtures (qwen3_next, mamba2, nemotron_h, nemotron_h_moe, qwen3_5, qwen3_5_moe_text,
// qwen4_exp with its PLE carry) with their SSM state in device memory: sequences prefilled and decoded side by side in shared steps,
// a snapshot taken inside a prefill chunk and forked, and a verify row rolled back, each against
// transformers' logits; decode steps replayed from CUDA graphs (padding rows on the pool's scratch
// slot) against eager steps (models with layers that are not graph safe, like qwen4_exp, run
// eagerly both times). Skipped without a GPU.
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

// Relative L2 of rows [begin, end) of two [N, vocab] f32 host tensors; infinity on NaN.
double rel_l2_rows(const Tensor& got, const Tensor& ref, int64_t begin, int64_t end) {
  const int64_t vocab = got.dim(1);
  double num = 0, den = 0;
  for (int64_t i = begin * vocab; i < end * vocab; ++i) {
    const double g = got.data_as<float>()[i], e = ref.data_as<float>()[i];
    if (!std::isfinite(g)) return INFINITY;
    num += (g - e) * (g - e);
    den += e * e;
  }
  return std::sqrt(num / den);
}

// MoE hybrids (qwen3_next, nemotron_h_moe): a near-tied router picks another expert under bf16
// on an odd token, whose row is then off by 0.4-0.7 while the others stay near 1e-2 (H200), so a
// 16-40 row score lands at 0.1-0.2. mamba2 and nemotron_h: the dense models' 2e-2. qwen3_5 (dense
// Gated DeltaNet): transformers' own bf16 is at 1.71e-2 over the fixture, so 3e-2.
double tolerance(const Fixture& f) {
  const nlohmann::json& raw = f.loaded.config.raw;
  if (has_moe_layers(raw)) return 0.25;
  return raw.contains("linear_num_value_heads") ? 3e-2 : 2e-2;
}

void copy_rows(const Tensor& dst, int64_t first, const Tensor& rows) {
  std::memcpy(dst.data_as<float>() + first * dst.dim(1), rows.data(), rows.nbytes());
}

class CudaSsmState : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible";
    f_ = load_fixture(GetParam(), make_cuda_backend(0));
  }
  Fixture f_;
};

// All three sequences in every step: one prefill step of three rows, then decode steps.
TEST_P(CudaSsmState, SequencesSideBySideMatchTransformers) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  DirectSession session(runner);
  const int64_t vocab = f_.loaded.config.vocab_size;
  std::vector<Tensor> got;
  std::vector<StepInput> inputs;
  std::vector<size_t> which;  // fixture sequence of each input
  for (size_t s = 0; s < f_.sequences.size(); ++s) {
    const FixtureSequence& seq = f_.sequences[s];
    got.push_back(Tensor::host(DType::kF32, {static_cast<int64_t>(seq.tokens.size()), vocab}));
    inputs.push_back({.seq_id = session.add_sequence(),
                      .token_ids = {seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len},
                      .logits = LogitsMode::kAll});
    which.push_back(s);
  }
  while (!inputs.empty()) {
    const std::vector<Tensor> logits = session.step(inputs);
    std::vector<StepInput> next_inputs;
    std::vector<size_t> next_which;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const FixtureSequence& seq = f_.sequences[which[i]];
      const int32_t done = session.num_tokens(inputs[i].seq_id);
      copy_rows(got[which[i]], done - static_cast<int64_t>(inputs[i].token_ids.size()), logits[i]);
      if (done == static_cast<int32_t>(seq.tokens.size())) continue;
      next_inputs.push_back({.seq_id = inputs[i].seq_id, .token_ids = {seq.tokens[done]}, .logits = LogitsMode::kAll});
      next_which.push_back(which[i]);
    }
    inputs = std::move(next_inputs);
    which = std::move(next_which);
  }
  for (size_t s = 0; s < f_.sequences.size(); ++s) {
    const double e = rel_l2_rows(got[s], f_.sequences[s].logits, 0, got[s].dim(0));
    std::printf("[cuda ssm] %-12s side by side seq %zu: rel_l2 %.2e\n", GetParam().c_str(), s, e);
    EXPECT_LT(e, tolerance(f_)) << "sequence " << s;
  }
}

// The snapshot after 11 tokens of a 16-token chunk (a device copy between kernels) forked
// into a new sequence continues as transformers does.
TEST_P(CudaSsmState, SnapshotInsideChunkForksIntoMatchingContinuation) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  DirectSession session(runner);
  const FixtureSequence& seq = f_.sequences[0];
  const int64_t len = static_cast<int64_t>(seq.tokens.size());
  constexpr int32_t kChunk = 16, kSnapshot = 11;
  const int64_t a = session.add_sequence();
  session.step({{.seq_id = a, .token_ids = {seq.tokens.begin(), seq.tokens.begin() + kChunk},
                 .snapshot_after = kSnapshot}});
  session.step({{.seq_id = a, .token_ids = {seq.tokens.begin() + kChunk, seq.tokens.begin() + seq.prompt_len}}});
  const int64_t b = session.fork(a, kSnapshot);
  Tensor forked = Tensor::host(DType::kF32, {len, f_.loaded.config.vocab_size});
  for (int32_t done = kSnapshot; done < len;) {
    const int32_t n = done < seq.prompt_len ? seq.prompt_len - done : 1;
    copy_rows(forked, done, session.step({{.seq_id = b, .token_ids = {seq.tokens.begin() + done, seq.tokens.begin() + done + n},
                                           .logits = LogitsMode::kAll}})[0]);
    done += n;
  }
  const double e = rel_l2_rows(forked, seq.logits, kSnapshot, len);
  std::printf("[cuda ssm] %-12s forked at %d: rel_l2 %.2e\n", GetParam().c_str(), kSnapshot, e);
  EXPECT_LT(e, tolerance(f_));
}

// A 4-token verify row with 1..3 tokens accepted, rolled back from the device verify buffer,
// then decoding the sequence's own tokens.
TEST_P(CudaSsmState, VerifyRollbackContinuesLikeTransformers) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  const FixtureSequence& seq = f_.sequences[0];
  const int32_t p = seq.prompt_len;
  const int64_t len = static_cast<int64_t>(seq.tokens.size()), vocab = f_.loaded.config.vocab_size;
  constexpr int32_t kDraft = 4;
  for (int32_t accepted = 1; accepted < kDraft; ++accepted) {
    std::vector<int32_t> draft(seq.tokens.begin() + p, seq.tokens.begin() + p + kDraft);
    for (int32_t i = accepted; i < kDraft; ++i) draft[i] = static_cast<int32_t>((draft[i] + 7 + i) % vocab);
    DirectSession session(runner);
    const int64_t id = session.add_sequence();
    Tensor got = Tensor::host(DType::kF32, {len, vocab});
    session.step({{.seq_id = id, .token_ids = {seq.tokens.begin(), seq.tokens.begin() + p}}});
    const Tensor verify = session.step({{.seq_id = id, .token_ids = draft, .logits = LogitsMode::kAll, .verify = true}})[0];
    copy_rows(got, p, verify.slice_rows(0, accepted));
    session.rollback(id, accepted);
    for (int32_t done = p + accepted; done < len; ++done)
      copy_rows(got, done, session.step({{.seq_id = id, .token_ids = {seq.tokens[done]}, .logits = LogitsMode::kAll}})[0]);
    const double e = rel_l2_rows(got, seq.logits, p, len);
    std::printf("[cuda ssm] %-12s rollback to %d of %d: rel_l2 %.2e\n", GetParam().c_str(), accepted, kDraft, e);
    EXPECT_LT(e, tolerance(f_)) << "accepted " << accepted;
  }
}

// Three sequences decode side by side (a bucket of 4 whose padding row runs on the pool's
// scratch slot): replayed CUDA graphs give what eager steps give, so no padding row touched a
// live state, and the bucket's graph is captured once.
TEST_P(CudaSsmState, DecodeGraphReplayMatchesEagerSteps) {
  const int64_t vocab = f_.loaded.config.vocab_size;
  int32_t num_steps = 1 << 30;
  for (const FixtureSequence& seq : f_.sequences)
    num_steps = std::min<int32_t>(num_steps, static_cast<int32_t>(seq.tokens.size()) - seq.prompt_len);
  const int64_t num_seqs = static_cast<int64_t>(f_.sequences.size());
  ASSERT_EQ(num_seqs, 3);
  std::vector<Tensor> results;
  for (int64_t graphs : {0, 256}) {
    ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64, .max_graph_batch_size = graphs});
    DirectSession session(runner);
    std::vector<StepInput> prompts;
    for (const FixtureSequence& seq : f_.sequences)
      prompts.push_back({.seq_id = session.add_sequence(),
                         .token_ids = {seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len}});
    session.step(prompts);
    Tensor all = Tensor::host(DType::kF32, {num_steps * num_seqs, vocab});
    for (int32_t i = 0; i < num_steps; ++i) {
      std::vector<StepInput> inputs;
      for (int64_t s = 0; s < num_seqs; ++s)
        inputs.push_back({.seq_id = prompts[s].seq_id, .token_ids = {f_.sequences[s].tokens[f_.sequences[s].prompt_len + i]}});
      const std::vector<Tensor> logits = session.step(inputs);
      for (int64_t s = 0; s < num_seqs; ++s) copy_rows(all, i * num_seqs + s, logits[s]);
    }
    bool graph_safe = true;
    for (int64_t l = 0; l < f_.loaded.model->num_layers(); ++l)
      graph_safe = graph_safe && f_.loaded.model->caps(l).graph_safe;
    if (graphs > 0) {
      EXPECT_EQ(runner.num_captured_graphs(), graph_safe ? 1 : 0);
    }
    results.push_back(all);
  }
  const double e = rel_l2_rows(results[1], results[0], 0, results[0].dim(0));
  std::printf("[cuda ssm] %-12s graph replay vs eager over %d steps: rel_l2 %.2e\n", GetParam().c_str(), num_steps, e);
  EXPECT_LT(e, 1e-3);
  for (int64_t r = 0; r < results[0].dim(0); ++r) {
    const float* g = results[1].data_as<float>() + r * vocab;
    const float* ref = results[0].data_as<float>() + r * vocab;
    EXPECT_EQ(std::max_element(g, g + vocab) - g, std::max_element(ref, ref + vocab) - ref) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSsmState, ::testing::Values("qwen3_next", "mamba2", "nemotron_h",
                                                                     "nemotron_h_moe", "qwen3_5", "qwen3_5_moe_text",
                                                                     "qwen4_exp"));

}  // namespace
}  // namespace strata::test
