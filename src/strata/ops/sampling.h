// Token sampling over a batch of logits rows, one result per row. Every row names the
// logits row it samples (n > 1 choices share one), its own parameters and a uniform random
// number drawn on the host from the sequence's generator, so a seeded request gives the
// same tokens alone, in any batch and on either backend. Definition in sampling_math.h.
#pragma once

#include <cstdint>

#include "strata/core/tensor.h"

namespace strata::ops {

inline constexpr int32_t kMaxTopLogprobs = 20;  // OpenAI's limit on `logprobs`

// One row to sample: plain 4-byte fields, the same layout on the host and the device.
struct SamplingRow {
  int32_t logits_row = 0;          // row of `logits` to read
  float temperature = 1.0f;        // <= 0: greedy
  int32_t top_k = 0;               // <= 0 or >= vocab: off; 1: greedy
  float top_p = 1.0f;              // (0, 1]
  float min_p = 0.0f;              // [0, 1]
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint32_t random_bits = 0;        // u = random_bits / 2^32, in [0, 1)
  int32_t num_top_logprobs = 0;    // 0..kMaxTopLogprobs
  int32_t penalty_begin = 0;       // first entry of this row in `penalty_tokens`
  int32_t num_penalty_tokens = 0;  // 0: no penalties applied
  int32_t penalized_row = -1;      // row of `penalized` to write penalised logits to; -1: none
};
inline constexpr int64_t kSamplingRowWords = sizeof(SamplingRow) / 4;
static_assert(sizeof(SamplingRow) == 13 * 4);

// A distinct token the sequence has seen: in the prompt or output (repetition penalty) and
// how often in the output (presence and frequency penalties).
struct PenaltyToken {
  int32_t token_id = 0;
  int32_t output_count = 0;
};
static_assert(sizeof(PenaltyToken) == 8);

struct SamplingArgs {
  Tensor logits;          // [num_logits, vocab] f32
  Tensor rows;            // [num_rows, kSamplingRowWords] i32 holding SamplingRow
  Tensor penalty_tokens;  // [num_penalty_tokens, 2] i32 holding PenaltyToken; may be undefined
  Tensor penalized;       // [num_penalized_rows, vocab] f32 scratch; undefined without penalties
  Tensor token_ids;       // out [num_rows] i32
  Tensor logprobs;        // out [num_rows] f32: the chosen token under the raw distribution
  Tensor top_ids;         // out [num_rows, kMaxTopLogprobs] i32, most likely first; -1 past n
  Tensor top_logprobs;    // out [num_rows, kMaxTopLogprobs] f32 (raw distribution); 0 past n
};

// All tensors on one device. Host rows are checked; on the device a row whose indices are
// out of range gets token -1 instead of a read out of bounds.
void sample_tokens(const SamplingArgs& args);

}  // namespace strata::ops

namespace strata::cpu {
void sample_tokens(const ops::SamplingArgs& args);
}
namespace strata::cuda {
void sample_tokens(const ops::SamplingArgs& args);
}
