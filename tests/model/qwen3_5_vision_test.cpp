// Qwen3.5 with images against transformers (the qwen3_5_vision fixture): with transformers' own
// image embeddings in place of the placeholders and MRoPE positions, the text model's logits match
// within 2e-3; chunked prefill (chunks cutting through images) = whole; batched = alone.
#include <gtest/gtest.h>

#include <cstring>

#include "model/fixture_support.h"
#include "model/vision_fixture_support.h"
#include "test_support.h"

namespace strata::test {
namespace {

constexpr float kReferenceTolerance = 2e-3f;  // f32 against transformers' f32
constexpr float kSameMathTolerance = 1e-4f;   // the same model through other step shapes

struct VisionModel {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  VisionFixture fixture = load_vision_fixture();
  LoadedModel loaded = load_model({.model_path = fixture.dir}, *backend);
};

int64_t rows(const VisionSequence& seq) { return static_cast<int64_t>(seq.tokens.size()); }

TEST(Qwen35Vision, ImageEmbeddingsAndMropeGiveTransformersLogits) {
  VisionModel m;
  ModelRunner runner(*m.loaded.model, *m.backend, {});
  for (const VisionSequence& seq : m.fixture.sequences) {
    const Tensor whole = run_sequence(runner, seq.tokens, seq.prompt_len, 0, seq.prompt(m.fixture));
    EXPECT_LT(max_abs_diff_rows(whole, seq.logits, 0, rows(seq)), kReferenceTolerance);
    for (int32_t chunk : {1, 5, 16}) {
      const Tensor chunked = run_sequence(runner, seq.tokens, seq.prompt_len, chunk, seq.prompt(m.fixture));
      EXPECT_LT(max_abs_diff_rows(chunked, whole, 0, rows(seq)), kSameMathTolerance) << "chunk " << chunk;
    }
  }
}

// Without its images a prompt is another prompt: the placeholders' own embeddings and 1-D
// positions give other logits, so the test above is not passing on text alone.
TEST(Qwen35Vision, WithoutImagesTheLogitsDiffer) {
  VisionModel m;
  ModelRunner runner(*m.loaded.model, *m.backend, {});
  const VisionSequence& seq = m.fixture.sequences[0];
  const Tensor text_only = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
  EXPECT_GT(max_abs_diff_rows(text_only, seq.logits, 0, rows(seq)), 0.05f);
}

// Both image prompts and a text prompt in one step, then decoding side by side.
TEST(Qwen35Vision, BatchedWithTextEqualsAlone) {
  VisionModel m;
  ModelRunner runner(*m.loaded.model, *m.backend, {});
  DirectSession session(runner);
  const int64_t vocab = m.loaded.config.vocab_size;
  std::vector<VisionSequence> seqs = m.fixture.sequences;
  seqs.push_back({.tokens = {7, 99, 13, 250, 31, 8, 44}, .prompt_len = 5});
  std::vector<int64_t> ids;
  std::vector<Tensor> got;
  std::vector<int32_t> done(seqs.size(), 0);
  for (const VisionSequence& seq : seqs) {
    ids.push_back(session.add_sequence(seq.images.empty() ? nullptr : seq.prompt(m.fixture)));
    got.push_back(Tensor::host(DType::kF32, {rows(seq), vocab}));
  }
  for (bool more = true; more;) {
    std::vector<StepInput> inputs;
    std::vector<size_t> which;
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (done[i] == rows(seqs[i])) continue;
      const int32_t n = done[i] == 0 ? seqs[i].prompt_len : 1;
      inputs.push_back({.seq_id = ids[i], .token_ids = {seqs[i].tokens.begin() + done[i],
                                                         seqs[i].tokens.begin() + done[i] + n},
                        .logits = LogitsMode::kAll});
      which.push_back(i);
    }
    more = !inputs.empty();
    if (!more) break;
    const std::vector<Tensor> logits = session.step(inputs);
    for (size_t k = 0; k < which.size(); ++k) {
      std::memcpy(got[which[k]].data_as<float>() + done[which[k]] * vocab, logits[k].data(), logits[k].nbytes());
      done[which[k]] += static_cast<int32_t>(inputs[k].token_ids.size());
    }
  }
  for (size_t i = 0; i < seqs.size(); ++i) {
    const auto images = seqs[i].images.empty() ? nullptr : seqs[i].prompt(m.fixture);
    const Tensor alone = run_sequence(runner, seqs[i].tokens, seqs[i].prompt_len, 0, images);
    EXPECT_LT(max_abs_diff_rows(got[i], alone, 0, rows(seqs[i])), kSameMathTolerance) << i;
  }
}

}  // namespace
}  // namespace strata::test
