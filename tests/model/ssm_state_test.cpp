// SSM state through the session on the hybrid fixtures: a snapshot taken inside a prefill
// chunk and forked into a fresh sequence continues exactly like the uninterrupted run, and a
// verify row rolled back to an accepted prefix continues like the run that only saw it;
// sequences decoded side by side on scattered slots (one batched launch per recurrent op)
// equal each sequence decoded alone. Also `strata logits` on a hybrid fixture through the CLI.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/fixture_support.h"
#include "strata/core/error.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {
namespace {

constexpr float kExact = 1e-5f;       // the same arithmetic through another path
constexpr float kSameMath = 1e-4f;    // the same model with other segment boundaries

// Feeds tokens[begin, end) to `id` in steps of the given sizes (the rest one by one) and
// copies each position's logits into `out` [len, vocab].
void feed(DirectSession& session, int64_t id, const std::vector<int32_t>& tokens, int32_t begin,
          const std::vector<int32_t>& sizes, const Tensor& out) {
  const int64_t vocab = out.dim(1);
  size_t s = 0;
  for (int32_t done = begin; done < static_cast<int32_t>(tokens.size());) {
    const int32_t n = s < sizes.size() ? sizes[s++] : 1;
    const Tensor logits = session.step({{.seq_id = id,
                                         .token_ids = {tokens.begin() + done, tokens.begin() + done + n},
                                         .logits = LogitsMode::kAll}})[0];
    std::memcpy(out.data_as<float>() + done * vocab, logits.data(), logits.nbytes());
    done += n;
  }
}

class SsmStateTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SsmStateTest, SnapshotInsideChunkForksIntoEqualContinuation) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  ASSERT_NE(runner.ssm_pool(), nullptr);
  const FixtureSequence& seq = f.sequences[0];
  const int64_t len = static_cast<int64_t>(seq.tokens.size()), vocab = f.loaded.config.vocab_size;
  constexpr int32_t kChunk = 16, kSnapshot = 11;
  Tensor whole = Tensor::host(DType::kF32, {len, vocab});
  Tensor forked = Tensor::host(DType::kF32, {len, vocab});
  {
    DirectSession session(runner);
    const int64_t a = session.add_sequence();
    const Tensor first = session.step({{.seq_id = a,
                                        .token_ids = {seq.tokens.begin(), seq.tokens.begin() + kChunk},
                                        .logits = LogitsMode::kAll, .snapshot_after = kSnapshot}})[0];
    std::memcpy(whole.data(), first.data(), first.nbytes());
    feed(session, a, seq.tokens, kChunk, {seq.prompt_len - kChunk}, whole);
    const int64_t b = session.fork(a, kSnapshot);
    EXPECT_EQ(session.num_tokens(b), kSnapshot);
    feed(session, b, seq.tokens, kSnapshot, {kChunk - kSnapshot, seq.prompt_len - kChunk}, forked);
  }
  EXPECT_EQ(runner.ssm_pool()->num_free(), runner.ssm_pool()->capacity());
  EXPECT_LT(max_abs_diff_rows(forked, whole, kSnapshot, len), kExact);
  const Tensor plain = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
  EXPECT_LT(max_abs_diff_rows(whole, plain, 0, len), kSameMath);
}

TEST_P(SsmStateTest, VerifyRollbackEqualsRunOfAcceptedTokens) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  const FixtureSequence& seq = f.sequences[0];
  const int32_t p = seq.prompt_len;
  const int64_t len = static_cast<int64_t>(seq.tokens.size()), vocab = f.loaded.config.vocab_size;
  constexpr int32_t kDraft = 4;
  const Tensor plain = run_sequence(runner, seq.tokens, p, 0);
  for (int32_t accepted = 1; accepted < kDraft; ++accepted) {
    // The accepted draft tokens are the sequence's; the rejected ones are different tokens.
    std::vector<int32_t> draft(seq.tokens.begin() + p, seq.tokens.begin() + p + kDraft);
    for (int32_t i = accepted; i < kDraft; ++i) draft[i] = static_cast<int32_t>((draft[i] + 7 + i) % vocab);
    DirectSession session(runner);
    const int64_t id = session.add_sequence();
    Tensor got = Tensor::host(DType::kF32, {len, vocab});
    session.step({{.seq_id = id, .token_ids = {seq.tokens.begin(), seq.tokens.begin() + p}}});
    const Tensor verify = session.step(
        {{.seq_id = id, .token_ids = draft, .logits = LogitsMode::kAll, .verify = true}})[0];
    std::memcpy(got.data_as<float>() + p * vocab, verify.data(), accepted * vocab * sizeof(float));
    session.rollback(id, accepted);
    EXPECT_EQ(session.num_tokens(id), p + accepted);
    feed(session, id, seq.tokens, p + accepted, {}, got);
    EXPECT_LT(max_abs_diff_rows(got, plain, p, len), kExact) << "accepted " << accepted;
  }
}

TEST_P(SsmStateTest, RollbackAndForkRejectBadRequests) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  DirectSession session(runner);
  const int64_t id = session.add_sequence();
  const std::vector<int32_t> tokens(f.sequences[0].tokens.begin(), f.sequences[0].tokens.begin() + 6);
  session.step({{.seq_id = id, .token_ids = tokens}});
  EXPECT_THROW(session.rollback(id, 1), Error);   // not a verify step
  EXPECT_THROW(session.fork(id, 3), Error);       // no snapshot at 3 tokens
  EXPECT_THROW(session.step({{.seq_id = id, .token_ids = tokens, .snapshot_after = 7}}), Error);
  session.step({{.seq_id = id, .token_ids = {1, 2}, .verify = true}});
  EXPECT_THROW(session.rollback(id, 3), Error);   // more than the verify row had
  EXPECT_NO_THROW(session.fork(id, 8));           // the live state
}

// The fixture's sequences prefilled in one step, then decoded side by side on scattered SSM
// slots (idle sequences hold the others), give what each gives decoded alone.
TEST_P(SsmStateTest, SideBySideDecodeEqualsSequencesAlone) {
  Fixture f = load_fixture(GetParam());
  ModelRunner runner(*f.loaded.model, *f.backend, {});
  EXPECT_EQ(runner.ssm_pool()->capacity(), RunnerOptions{}.num_ssm_slots);  // the scratch slot is extra
  const int64_t vocab = f.loaded.config.vocab_size;
  std::vector<Tensor> got;
  {
    DirectSession session(runner);
    std::vector<int64_t> idle;
    for (int i = 0; i < 5; ++i) idle.push_back(session.add_sequence());
    session.release(idle[1]);
    session.release(idle[3]);
    std::vector<StepInput> inputs;
    for (const FixtureSequence& seq : f.sequences) {
      got.push_back(Tensor::host(DType::kF32, {static_cast<int64_t>(seq.tokens.size()), vocab}));
      inputs.push_back({.seq_id = session.add_sequence(),
                        .token_ids = {seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len},
                        .logits = LogitsMode::kAll});
    }
    for (bool more = true; more;) {
      const std::vector<Tensor> logits = session.step(inputs);
      more = false;
      for (size_t s = 0; s < inputs.size(); ++s) {
        const int32_t done = session.num_tokens(inputs[s].seq_id);
        const int64_t first = done - static_cast<int64_t>(inputs[s].token_ids.size());
        if (logits[s].numel() > 0) std::memcpy(got[s].data_as<float>() + first * vocab, logits[s].data(), logits[s].nbytes());
        // A finished sequence keeps decoding its last token with no logits, so every step stays plain decode.
        const bool finished = done >= static_cast<int32_t>(f.sequences[s].tokens.size());
        inputs[s].token_ids = {f.sequences[s].tokens[finished ? done - 1 : done]};
        inputs[s].logits = finished ? LogitsMode::kNone : LogitsMode::kAll;
        more = more || !finished;
      }
    }
  }
  for (size_t s = 0; s < f.sequences.size(); ++s) {
    const FixtureSequence& seq = f.sequences[s];
    const Tensor alone = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    // Not bit-exact: the linears block several rows differently from one (ops are exact: BatchedDecode).
    EXPECT_LT(max_abs_diff_rows(got[s], alone, 0, static_cast<int64_t>(seq.tokens.size())), kExact)
        << "sequence " << s;
  }
}

INSTANTIATE_TEST_SUITE_P(Hybrid, SsmStateTest, ::testing::Values("qwen3_next", "mamba2", "nemotron_h",
                                                                  "nemotron_h_moe", "qwen3_5", "qwen3_5_moe_text",
                                                                  "qwen4_exp"));

TEST(SsmStateCli, LogitsCommandMatchesTransformersOnQwen3Next) {
  const std::string dir = fixture_path("hf/qwen3_next");
  Fixture f = load_fixture("qwen3_next");
  const FixtureSequence& seq = f.sequences[1];
  const std::string out = temp_dir() + "/qwen3_next_logits.safetensors";
  const std::string command =
      fmt::format("{} logits --model {} --device cpu --threads 2 --tokens {} --prefill {} --chunk 5 "
                  "--out {} > /dev/null", strata_binary(), dir, fmt::join(seq.tokens, ","),
                  seq.prompt_len, out);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  SafetensorsFile file(out);
  const WeightInfo* logits = file.find("logits");
  ASSERT_NE(logits, nullptr);
  ASSERT_EQ(logits->shape, seq.logits.shape());
  const Tensor got = Tensor::view(const_cast<void*>(logits->data), DType::kF32, logits->shape);
  EXPECT_LT(max_abs_diff_rows(got, seq.logits, 0, seq.tokens.size()), 2e-3f);
}

}  // namespace
}  // namespace strata::test

namespace strata::test {
namespace {

// f16 storage of h_state (--ssm-state-dtype f16): the same model within the accuracy cost
// docs/ssm_state_f16.md states, on every row of a prefill + decode run.
TEST(SsmStateF16, StaysCloseToF32) {
  for (const char* name : {"qwen3_next", "mamba2", "qwen4_exp"}) {  // qwen4_exp: its PLE carry in f16 too
    Fixture f = load_fixture(name);
    ModelRunner f32(*f.loaded.model, *f.backend, {});
    ModelRunner f16(*f.loaded.model, *f.backend, {.ssm_state_dtype = SsmStateDType::kF16});
    const FixtureSequence& seq = f.sequences[2];
    const Tensor a = run_sequence(f32, seq.tokens, seq.prompt_len, 0);
    const Tensor b = run_sequence(f16, seq.tokens, seq.prompt_len, 0);
    const float diff = max_abs_diff_rows(a, b, 0, seq.tokens.size());
    EXPECT_GT(diff, 0.0f) << name;  // the f16 path really ran
    EXPECT_LT(diff, 5e-3f) << name;
  }
}

}  // namespace
}  // namespace strata::test
