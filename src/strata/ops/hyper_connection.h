// Manifold-constrained hyper-connections (DeepSeek-V4's mHC): the residual is n parallel streams
// [T, n, hidden]; before a sublayer they collapse to one row by weights `pre`, after it the
// output expands back by `post` and the streams mix by `comb` (doubly stochastic by Sinkhorn).
// The weights come from a linear of the RMS-normed flattened streams, `mixes`, computed by the
// caller (ops::rms_norm + ops::linear). CPU only (models using it are refused on CUDA at build),
// except hyper_repeat, which Qwen4-Exp's gated streams share.
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct HyperWeightsOptions {
  int64_t num_streams = 0;  // hc_mult
  int64_t sinkhorn_iters = 20;
  float eps = 1e-6f;        // hc_eps
};

// mixes: [T, (2 + n) * n] f32 (pre | post | comb); base: [(2 + n) * n] f32; scale: [3] f32.
// pre = sigmoid(w * s0 + b) + eps, post = 2 sigmoid(w * s1 + b), comb = sinkhorn(softmax_rows(w * s2 + b) + eps).
// pre, post: [T, n] f32; comb: [T, n, n] f32 (comb[t, j, k]: stream j's share of output stream k).
void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb);

// The final collapse's weights: mixes [T, n], base [n], scale [1] -> pre = sigmoid(w * s + b) + eps [T, n].
void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre);

// streams: [T, n, hidden]; pre: [T, n] f32; out: [T, hidden] = sum_j pre[t, j] * streams[t, j].
void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out);

// streams: [T, n, hidden] updated in place to post[t, k] * block_out[t] + sum_j comb[t, j, k] * streams[t, j].
void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb);

// streams: [T, n, hidden] = x [T, hidden] in every stream (the embedding entering the layers);
// activations, f32 on the CPU, bf16 or f32 on CUDA.
void hyper_repeat(const Tensor& x, const Tensor& streams);

// Throws an Error naming `layer` when `device` cannot run these ops (CUDA has no kernels yet).
void check_hyper_connection_supported(Device device, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const ops::HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb);
void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre);
void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out);
void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb);
void hyper_repeat(const Tensor& x, const Tensor& streams);
}  // namespace strata::cpu

namespace strata::cuda {
void hyper_repeat(const Tensor& x, const Tensor& streams);
}
