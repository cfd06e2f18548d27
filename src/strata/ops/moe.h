// Mixture-of-experts building blocks: top-k routing, grouping (token, choice) pairs by expert,
// one linear per expert over stacked weights, and the weighted combine. The MoeFfn layer
// composes them: route -> group -> gather -> grouped linears -> combine.
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

// kSqrtSoftplus: sqrt(softplus(logit)) (DeepSeek-V4), biased and table routing only.
enum class MoeScoring : uint8_t { kSoftmax, kSigmoid, kSqrtSoftplus };

struct MoeRouteOptions {
  int64_t top_k = 1;
  MoeScoring scoring = MoeScoring::kSoftmax;
  bool norm_topk_prob = true;  // renormalise the chosen k weights to sum to 1
  float routed_scaling_factor = 1.0f;
  // Group-limited routing (DeepSeek-V3, Nemotron-H): experts form n_group equal groups, only
  // the topk_group groups with the largest sum of their top two biased scores are eligible.
  int64_t n_group = 1;
  int64_t topk_group = 1;
};

// router_logits: [T, E] f32; topk_ids: [T, k] i32 out; topk_weights: [T, k] f32 out.
// Experts with equal scores are chosen lowest id first.
void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const MoeRouteOptions& options);

// Sigmoid routing with a selection bias (DeepSeek-V3's noaux_tc, Nemotron-H): experts are
// chosen by sigmoid(logit) + correction_bias within the eligible groups, weighted by the
// unbiased sigmoid. kSqrtSoftplus scores (DeepSeek-V4) in place of the sigmoid likewise.
// correction_bias: [E] f32; the rest as moe_route.
void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const MoeRouteOptions& options);

// Hash routing (DeepSeek-V4's hash_moe layers): token t's experts are the fixed row
// tid2eid[token_ids[t]], weighted by their scores (options.scoring) as moe_route_biased weights
// its choice. token_ids: [T] i32; tid2eid: [vocab, k] i32, both on the logits' device; the
// rest as moe_route. Ids outside the table or the experts: an Error on the CPU, expert 0 with
// weight 0 on CUDA (which cannot throw mid-step).
void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const MoeRouteOptions& options);

struct MoeGroups {
  Tensor sorted_pairs;    // [T * k] i32: pair index t * k + j, ordered by expert (stable)
  Tensor token_rows;      // [T * k] i32: the token t of each sorted pair
  Tensor expert_offsets;  // [E + 1] i32: expert e owns sorted rows [offsets[e], offsets[e + 1])
  // Expert parallelism: this rank's E experts are routing ids [first_expert, first_expert + E).
  // Pairs of other ids follow theirs in pair order, rows [offsets[E], T * k).
  int64_t first_expert = 0;
};

// Groups the pairs of topk_ids ([T, k] i32, values >= 0) by expert.
void moe_group(const Tensor& topk_ids, const MoeGroups& groups);

// out[i] = x[i] @ weights[e]^T for the rows i of expert e. x: [M, in]; weights: [E, out, in];
// expert_offsets: [E + 1] i32 from moe_group; out: [M, out]. Rows from offsets[E] on are left as
// they are (other ranks' experts), here and in add_grouped_bias.
void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets,
                    const Tensor& out);

struct MoeCombineOptions {
  bool accumulate = false;  // out += the combine (the block's residual add); else out = it
};

// out[t] = sum_j topk_weights[t, j] * y[i] where sorted_pairs[i] = t * k + j; sorted_pairs
// undefined: y's rows are in pair order (expert_linear's output).
// y: [T * k, H]; sorted_pairs: [T * k] i32 or undefined; topk_weights: [T, k] f32; out: [T, H].
void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights,
                 const Tensor& out, const MoeCombineOptions& options = {});

// y[i] += bias[e] for the rows i of expert e (expert_offsets [E + 1] i32 from moe_group), or,
// without offsets, y[i] += bias[0] for every row. y: [M, N] f32 or bf16; bias: [E, N] f32.
// Expert biases (gpt-oss) and router biases.
void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets);

// x += sigmoid(gate) * y, gate broadcast over the row. x, y: [T, H]; gate: [T, 1] f32.
// The sigmoid-gated shared expert of Qwen2-MoE / Qwen3-Next.
void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate);

// Expert parallelism's token dispatch (--expert-dispatch all-to-all), the CPU only for now: rank
// q of N holds experts [q * E / N, (q + 1) * E / N). counts: [N] i32 out: this rank's pairs
// (topk_ids [T, k] i32) for each rank's experts.
void moe_count_by_rank(const Tensor& topk_ids, int64_t num_experts, const Tensor& counts);

struct MoeDispatchRows {
  int64_t num_experts = 0;  // all ranks'; also the expert id of padding rows (no rank holds it)
  Tensor send_x;     // [N * n, dim] out: rank q's pairs' tokens at rows [q * n, q * n + counts[q]) in pair order, zeros after
  Tensor send_ids;   // [N * n, 1] i32 out: each row's expert, num_experts on padding rows
  Tensor pair_rows;  // [T * k] i32 out: each pair's row in send_x (and in the rows that come back)
};

// Packs the pairs of topk_ids ([T, k] i32) per destination rank of `ranks` (N); the capacity
// n = send_x.dim(0) / N must hold every rank's count (moe_count_by_rank). x: [T, dim].
void moe_pack_by_rank(const Tensor& x, const Tensor& topk_ids, int64_t ranks, const MoeDispatchRows& rows);

// The CUDA grouping kernel's expert count (its shared-memory counters) and the multiple the
// grouped expert GEMMs need their inner sizes in (16-byte bf16 rows).
inline constexpr int64_t kCudaMaxExperts = 1600;
inline constexpr int64_t kCudaExpertDimMultiple = 8;
// Refuses, when `layer` is built, experts `device` has no kernels for (an Error naming the
// layer and the limit), so that no step meets them. expert_dim: the width experts read.
void check_experts_supported(Device device, int64_t num_experts, int64_t expert_dim, int64_t intermediate_size,
                             const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const ops::MoeRouteOptions& options);
void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const ops::MoeRouteOptions& options);
void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const ops::MoeRouteOptions& options);
void moe_group(const Tensor& topk_ids, const ops::MoeGroups& groups);
void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets,
                    const Tensor& out);
void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights,
                 const Tensor& out, const ops::MoeCombineOptions& options);
void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate);
void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets);
void moe_count_by_rank(const Tensor& topk_ids, int64_t num_experts, const Tensor& counts);
void moe_pack_by_rank(const Tensor& x, const Tensor& topk_ids, int64_t ranks, const ops::MoeDispatchRows& rows);
}  // namespace strata::cpu
namespace strata::cuda {
void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const ops::MoeRouteOptions& options);
void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const ops::MoeRouteOptions& options);
void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const ops::MoeRouteOptions& options);
void moe_group(const Tensor& topk_ids, const ops::MoeGroups& groups);
void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets,
                    const Tensor& out);
void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights,
                 const Tensor& out, const ops::MoeCombineOptions& options);
void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate);
void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets);
}  // namespace strata::cuda
