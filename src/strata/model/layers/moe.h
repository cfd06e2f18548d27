// Mixture-of-experts feed-forward: a linear router, top-k routing, experts stacked at load
// into [num_experts, out, in] tensors (gate and up fused as [E, 2 I, H] on accelerators) (gated SwiGLU-style or plain up/down experts), and an
// optional shared expert (Qwen3-Next: scaled by sigmoid(shared_expert_gate(x))). DeepSeek-V3
// style routers choose by sigmoid scores plus a correction bias, within groups of experts;
// Nemotron-H's latent MoE projects into a smaller space for the routed experts only.
// Under tensor parallelism each rank holds every expert's share of the intermediate columns, or
// with --enable-expert-parallel a range of whole experts (expert_split.h), and the shared expert's
// columns; routing is replicated and one all-reduce sums the layer's output. With
// --expert-dispatch all-to-all each rank routes its slice of the tokens instead and exchanges the
// pairs with the experts' ranks (moe_dispatch.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "strata/model/layer.h"
#include "strata/model/layers/expert_split.h"
#include "strata/model/layers/mlp.h"
#include "strata/model/model_weights.h"
#include "strata/ops/moe.h"

namespace strata {

struct MoeOptions {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // per expert (moe_intermediate_size)
  int64_t num_experts = 0;
  ops::MoeRouteOptions route;
  ops::Activation activation = ops::Activation::kSilu;
  bool gated = true;                      // experts have gate_proj (SwiGLU) or only up/down
  int64_t shared_intermediate_size = 0;   // 0: no shared expert
  bool shared_expert_gate = false;        // sigmoid(shared_expert_gate(x)) scales it
  bool correction_bias = false;           // route by sigmoid + e_score_correction_bias (moe_route_biased)
  bool router_bias = false;               // the router has a bias (gpt-oss)
  int64_t latent_size = 0;                // > 0: experts work in a latent space (fc1/fc2_latent_proj)
  bool latent_bias = false;               // the latent projections have biases
  float swiglu_limit = 0.0f;              // > 0: experts and the shared expert clamp gate and up (gate, up unfused)
  int64_t hash_vocab_size = 0;            // > 0: experts by tid2eid[token], [vocab, top_k] (DeepSeek-V4 hash_moe)

  // The width experts read and write: the latent size, or the hidden size.
  int64_t expert_dim() const { return latent_size > 0 ? latent_size : hidden_size; }
};

// Tensor names under the block's scope; experts.{e}.<name>.weight.
struct MoeWeightNames {
  std::string router = "gate.weight";
  std::string gate_proj = "gate_proj";
  std::string up_proj = "up_proj";
  std::string down_proj = "down_proj";
  std::string shared_expert = "shared_expert";
  MlpWeightNames shared_expert_mlp;  // the shared expert's projections under shared_expert
  std::string shared_expert_gate = "shared_expert_gate.weight";
  std::string correction_bias = "gate.e_score_correction_bias";
  std::string router_bias = "gate.bias";
  std::string tid2eid = "gate.tid2eid";
  std::string latent_in = "fc1_latent_proj";
  std::string latent_out = "fc2_latent_proj";
};

// Mixtral's w1 (gate) / w3 (up) / w2 (down).
MoeWeightNames mixtral_moe_names();

// The routed experts' weights, stacked [E, out, in] (E, I: this rank's expert_split): an
// architecture whose checkpoint stores experts differently (gpt-oss: fused, transposed,
// interleaved) builds them.
struct MoeExpertWeights {
  Tensor gate_up;       // [E, 2 I, dim] gate | up per expert (each the rank's columns), or undefined
  Tensor gate, up;      // [E, I, dim] when not fused (gate: gated experts only)
  Tensor down;          // [E, dim, I]
  Tensor gate_up_bias;  // [E, 2 I] f32 or undefined (needs gate_up)
  Tensor down_bias;     // [E, dim] f32 or undefined (the layer keeps it on rank 0 only)
};

class MoeFfn final : public Ffn {
 public:
  MoeFfn(const MoeOptions& options, const WeightScope& w, const MoeWeightNames& names = {});
  // Experts given; the router (and shared expert, latent projections) still come from `w`.
  MoeFfn(const MoeOptions& options, MoeExpertWeights experts, const WeightScope& w, const MoeWeightNames& names = {});
  void forward(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const override;
  // Experts split by columns or (--enable-expert-parallel, the CPU only for now) by range.
  bool tensor_parallel() const override { return true; }

 private:
  // This rank's part of the output: all of it without tensor parallelism.
  void forward_local(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const;
  // Refuses a split the ranks cannot run and keeps this rank's experts and columns.
  void take_split(const WeightScope& w);
  // Refuses at build a routing or expert shape no kernel of the weights' device takes.
  void check_supported(const WeightScope& w) const;
  MoeExpertWeights load_experts(const WeightScope& w, const MoeWeightNames& names) const;
  // The rank's experts' `name` [E, out, in]; `split_rows`: the rank's rows (gate, up), else its columns (down).
  Tensor stacked_experts(const WeightScope& w, const std::string& name, bool split_rows) const;
  std::string expert_name(const WeightScope& w, int64_t e, const std::string& name) const;
  Tensor fused_gate_up(const WeightScope& w, const MoeWeightNames& names) const;
  Tensor load_tid2eid(const WeightScope& w, const MoeWeightNames& names) const;
  bool takes_pair_order() const;
  void add_shared_expert(const Tensor& h, const Tensor& out, ForwardContext& ctx) const;
  void route(NormedInput& in, const Tensor& topk_ids, const Tensor& topk_weights, ForwardContext& ctx) const;
  Tensor run_grouped(const Tensor& x, const Tensor& topk_ids, const Tensor& ys, ForwardContext& ctx) const;
  void run_experts(const Tensor& xs, const Tensor& expert_offsets, const Tensor& ys, ForwardContext& ctx) const;
  // out (or +=) the routed experts' ys combined per token, through the latent output projection if any.
  void combine(const Tensor& ys, const Tensor& sorted_pairs, const Tensor& topk_weights, const Tensor& out,
               bool add, ForwardContext& ctx) const;
  // --expert-dispatch all-to-all (moe_dispatch.cpp): each rank routes its slice of the tokens and
  // sends each pair to its expert's rank and back.
  void forward_dispatch(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const;
  void dispatch_routed(const Tensor& h, int64_t begin, int64_t end, const Tensor& out, ForwardContext& ctx) const;
  void exchange_pairs(const Tensor& x, const Tensor& topk_ids, const Tensor& ys, ForwardContext& ctx) const;
  void run_received(const Tensor& recv_x, const Tensor& recv_ids, const Tensor& back, ForwardContext& ctx) const;
  void run_experts_in_pair_order(const Tensor& x, const Tensor& topk_ids, const Tensor& ys, ForwardContext& ctx) const;
  // The router, its biases, the latent projections and the shared expert.
  void load_shared_parts(const WeightScope& w, const MoeWeightNames& names);

  MoeOptions options_;                 // num_experts, intermediate_size: all ranks', as the router scores
  ExpertSplit split_;                  // this rank's experts and intermediate columns
  Tensor router_;                      // [num_experts, hidden]
  Tensor router_bias_;                 // [1, num_experts] f32, or undefined
  Tensor correction_bias_;             // [num_experts] f32, or undefined
  Tensor tid2eid_;                     // [hash_vocab_size, top_k] i32 on the weights' device, or undefined
  MoeExpertWeights experts_;
  Tensor latent_in_, latent_in_bias_;   // [latent, hidden], [latent] or undefined
  Tensor latent_out_, latent_out_bias_; // [hidden, latent], [hidden] or undefined
  std::unique_ptr<Mlp> shared_expert_;
  Tensor shared_gate_;                 // [1, hidden] or undefined
  bool pair_order_capable_ = false;    // expert_linear takes these experts (decode-sized steps)
  bool dispatch_ = false;              // tokens go to their experts' ranks (--expert-dispatch all-to-all)
};

}  // namespace strata
