// Manifold-constrained hyper-connections (DeepSeek-V4's mHC): the residual is n parallel streams
// [T, n, hidden]; before a sublayer they collapse to one row by weights `pre`, after it the
// output expands back by `post` and the streams mix by `comb` (doubly stochastic by Sinkhorn).
// The weights come from a linear of the RMS-normed flattened streams, `mixes`, computed by the
// caller (ops::rms_norm + ops::linear). Weights are f32 on every backend; the streams and the rows
// collapsed from or expanded into them are activations (f32 on the CPU, bf16 or f32 on CUDA).
// hyper_repeat is shared with Qwen4-Exp's gated streams.
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
// All on one device; n at most kCudaMaxHyperStreams on CUDA.
void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb);

// The final collapse's weights: mixes [T, n], base [n], scale [1] -> pre = sigmoid(w * s + b) + eps [T, n].
void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre);

// streams: [T, n, hidden]; pre: [T, n] f32; out: [T, hidden] = sum_j pre[t, j] * streams[t, j].
// streams and out: activations of one dtype (f32 sums on every backend).
void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out);

// streams: [T, n, hidden] updated in place to post[t, k] * block_out[t] + sum_j comb[t, j, k] * streams[t, j].
// streams and block_out [T, hidden]: activations of one dtype; post [T, n], comb [T, n, n] f32.
void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb);

// streams: [T, n, hidden] = x [T, hidden] in every stream (the embedding entering the layers);
// activations, f32 on the CPU, bf16 or f32 on CUDA.
void hyper_repeat(const Tensor& x, const Tensor& streams);

// The CUDA weights and expand kernels keep one token's n streams (and n x n comb) in registers.
inline constexpr int64_t kCudaMaxHyperStreams = 8;
// Refuses, when `layer` is built, a stream count (hc_mult) no backend takes (at least 1; at most
// kCudaMaxHyperStreams on CUDA): an Error naming the layer, so that no step meets it.
void check_hyper_connection_supported(Device device, int64_t num_streams, const std::string& layer);

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
void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const ops::HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb);
void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre);
void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out);
void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb);
void hyper_repeat(const Tensor& x, const Tensor& streams);
}  // namespace strata::cuda
