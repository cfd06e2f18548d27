// BatchSampler: the tokens of one step's sequences from the step's logits. On the CPU each
// sequence's Sampler runs on its host row; on a GPU one ops::sample_tokens launch samples
// every row where the logits are, and only the chosen ids and logprobs come back. launch()
// queues the sampling and the copy back; collect() waits for them, so the host can prepare
// the next step in between.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/engine/sequence.h"

namespace strata {

struct SampleTask {
  Sequence* seq = nullptr;
  int64_t logits_row = 0;  // n > 1 choices sample the same row with their own generators
  std::vector<uint32_t> allowed;  // constrained decoding: one bit per token; empty: all
};

// One step's samples on their way to the host.
struct SampleTicket {
  std::vector<SampleTask> tasks;
  Tensor sampled_ids;  // [tasks] i32 where the step ran: the next step may read them there
  std::vector<SampleResult> results;  // filled at launch on the CPU, at collect on a GPU
  std::unique_ptr<StreamMark> copied;  // after the copy of the results to staging_[half]
  int half = -1;                       // the pinned staging half holding them (GPU)
  bool any_top = false;
};

class BatchSampler {
 public:
  explicit BatchSampler(Backend& backend) : backend_(backend) {}

  // Whether sampling wants the logits on the device (else in host memory).
  bool on_device() const { return !backend_.device().is_cpu(); }
  // logits: [num_logits, vocab] f32, on the device when on_device(). Each task's sampler
  // draws its random bits now and reads its sequence's tokens for penalties now.
  SampleTicket launch(const Tensor& logits, std::vector<SampleTask> tasks);
  // One result per task of the ticket, in task order.
  std::vector<SampleResult> collect(SampleTicket& ticket);
  // Drops a ticket whose step failed: frees its staging half once the device is done with it
  // (at once when wait_for_device is false: the device is lost and waits would only fail).
  void discard(SampleTicket& ticket, bool wait_for_device);

 private:
  void launch_on_host(const Tensor& logits, SampleTicket& ticket);
  void launch_on_device(const Tensor& logits, SampleTicket& ticket);
  // Constrained tasks' masks on the device logits (one upload, one launch).
  void mask_on_device(const Tensor& logits, std::span<const SampleTask> tasks);
  // The tasks' logit_bias on the device logits, once per logits row (one upload, one launch).
  void bias_on_device(const Tensor& logits, std::span<const SampleTask> tasks);
  // Grows `t` (device when `device`, else pinned host) to at least `words` i32 words.
  void reserve(Tensor& t, int64_t words, bool device);

  Backend& backend_;
  // Pinned host i32, two halves used by turns: rows, then penalty tokens; later the outputs.
  std::array<Tensor, 2> staging_;
  std::array<bool, 2> half_in_use_{};
  int next_half_ = 0;
  Tensor inputs_;        // device i32, the same layout as staging_
  Tensor outputs_;       // device i32: ids [n], logprobs [n], top ids [n, 20], top logprobs [n, 20]
  Tensor penalized_;     // device [rows with penalties, vocab] f32
  Tensor mask_inputs_;   // device i32: masked logits rows, then their bits
  Tensor bias_inputs_;   // device i32: (logits row, token) pairs, then their f32 biases
  std::vector<ops::SamplingRow> rows_;
  std::vector<ops::PenaltyToken> penalties_;
};

}  // namespace strata
