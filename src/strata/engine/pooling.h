// Pooling one prompt's per-token model outputs into one vector, a chunk of rows at a time
// (chunked prefill hands them over in pieces), and finishing it into the answer: for embeddings
// sentence-transformers' Dense modules, matryoshka truncation and L2 normalisation; for a
// classifier's scores sigmoid (one label) or softmax. Plain f32 on the host; sums in f64.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/core/model_config.h"

namespace strata {

struct PoolingState {
  std::vector<double> values;  // the running sum (MEAN), or the row kept (LAST, CLS)
  int32_t num_rows = 0;        // rows summed (MEAN)
};

// rows: [n, width] f32, the outputs of consecutive prompt positions first_position.. . LAST keeps
// the newest row (the engine hands it only the prompt's last one), CLS the row of position 0.
void pool_rows(const PoolerConfig& pooler, std::span<const float> rows, int64_t width, int32_t first_position,
               PoolingState& state);

// dimensions > 0: the first `dimensions` values of an embedding (after any Dense module, before
// normalisation).
std::vector<float> finish_pooling(const PoolerConfig& pooler, const PoolingState& state, int32_t dimensions);

// Whether the pooler reads every prompt position's output (MEAN, CLS) or only the last one's
// (LAST; such prompts may also start from a prefix-cache hit).
bool pools_every_position(const PoolerConfig& pooler);

}  // namespace strata
