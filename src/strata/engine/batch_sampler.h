// BatchSampler: the tokens of one step's sequences from the step's logits. On the CPU each
// sequence's Sampler runs on its host row; on a GPU one ops::sample_tokens launch samples
// every row where the logits are, and only the chosen ids and logprobs come back.
#pragma once

#include <span>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/engine/sequence.h"

namespace strata {

struct SampleTask {
  Sequence* seq = nullptr;
  int64_t logits_row = 0;  // n > 1 choices sample the same row with their own generators
};

class BatchSampler {
 public:
  explicit BatchSampler(Backend& backend) : backend_(backend) {}

  // Whether sample() wants the logits on the device (else in host memory).
  bool on_device() const { return !backend_.device().is_cpu(); }
  // logits: [num_logits, vocab] f32, on the device when on_device(). One result per task.
  std::vector<SampleResult> sample(const Tensor& logits, std::span<const SampleTask> tasks);

 private:
  std::vector<SampleResult> sample_on_host(const Tensor& logits, std::span<const SampleTask> tasks);
  std::vector<SampleResult> sample_on_device(const Tensor& logits, std::span<const SampleTask> tasks);
  // Grows `t` (device when `device`, else pinned host) to at least `words` i32 words.
  void reserve(Tensor& t, int64_t words, bool device);

  Backend& backend_;
  Tensor staging_;       // pinned host i32: rows, then penalty tokens; later the outputs
  Tensor inputs_;        // device i32, the same layout as staging_
  Tensor outputs_;       // device i32: ids [n], logprobs [n], top ids [n, 20], top logprobs [n, 20]
  Tensor penalized_;     // device [rows with penalties, vocab] f32
  std::vector<ops::SamplingRow> rows_;
  std::vector<ops::PenaltyToken> penalties_;
};

}  // namespace strata
