// The distribution a sampling row draws from, on the host: the integer weights of the kept
// tokens (top-k, top-p, min-p applied to the penalised logits) that the CPU kernel walks for
// its draw and the CUDA kernel computes with the same arithmetic (sampling_math.h). Rejection
// sampling reads them too, so speculation keeps exactly the distribution plain sampling has.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/ops/sampling.h"

namespace strata::sampling {

// The largest logit by key_of (ties: lowest id), as greedy sampling picks it.
int32_t argmax_by_key(const float* x, int64_t vocab);

// Orders ids by key descending, ties lowest id first, sorting only the first `count`.
void sort_prefix(std::vector<int32_t>& order, const float* x, int64_t count);

struct KeptWeights {
  std::vector<uint64_t> weight;  // [vocab]; 0 for a token the row's criteria drop
  uint64_t total = 0;            // 0: nothing kept (the kernels then take the argmax)
};

// x: [vocab] logits after penalties; p must not be greedy (sampling::is_greedy).
KeptWeights kept_weights(const float* x, int64_t vocab, const ops::SamplingRow& p);

}  // namespace strata::sampling
