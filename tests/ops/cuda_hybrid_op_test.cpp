// The CUDA twins of the recurrent-layer and MoE ops against the CPU ops on the same random
// inputs (activations bf16 on the GPU, states f32 on both), at Qwen3-Next, Mamba-2 and
// Qwen3-30B-A3B shapes: carried states, per-token intermediate states, routing and grouping
// exactly, grouped linears through both the streaming and the tensor-core kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "ops/cuda_op_support.h"
#include "test_support.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/gated_rms_norm.h"
#include "strata/ops/moe.h"
#include "strata/ops/ssd_scan.h"

namespace strata::test {
namespace {

using CudaHybridOps = CudaOpTest;

void expect_exact_i32(Backend& gpu, const Tensor& got, const Tensor& ref, const std::string& what) {
  const Tensor h = gpu.to_host(got);
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_EQ(h.data_as<int32_t>()[i], ref.data_as<int32_t>()[i]) << what << " at " << i;
}

TEST_F(CudaHybridOps, GatedRmsNormBothOrdersAndGates) {
  using ops::GateActivation, ops::GateOrder;
  for (const auto& [rows, dim, group, order, gate] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, GateOrder, GateActivation>>{
           {96, 128, 0, GateOrder::kNormThenGate, GateActivation::kSilu},
           {7, 4096, 512, GateOrder::kGateThenNorm, GateActivation::kSilu},
           {3, 256, 0, GateOrder::kGateThenNorm, GateActivation::kSilu},
           {33, 128, 0, GateOrder::kNormThenGate, GateActivation::kSigmoid}}) {
    const Tensor x = random_rounded({rows, dim}, 400, -2.f, 2.f), z = random_rounded({rows, dim}, 401, -3.f, 3.f);
    const Tensor w = random_rounded({dim}, 402, 0.5f, 1.5f);
    const ops::GatedRmsNormOptions options{.eps = 1e-6f, .group_size = group, .order = order, .gate = gate};
    Tensor ref = Tensor::host(DType::kF32, {rows, dim});
    ops::gated_rms_norm(x, z, w, ref, options);
    Tensor out = poisoned(DType::kBF16, {rows, dim});
    ops::gated_rms_norm(gpu_bf16(x), gpu_bf16(z), gpu_copy(w), out, options);
    expect_close(*gpu_, out, ref, kBf16Tolerance, "gated_rms_norm " + std::to_string(dim));
  }
}

TEST_F(CudaHybridOps, CausalConv1dCarriesStateAndIntermediates) {
  for (const auto& [tokens, channels] : std::vector<std::pair<int64_t, int64_t>>{{1, 8192}, {37, 384}, {5, 10240}}) {
    const int64_t kernel = 4;
    const Tensor x = random_rounded({tokens, channels}, 410, -2.f, 2.f);
    const Tensor w = random_rounded({channels, kernel}, 411), b = random_rounded({channels}, 412);
    const Tensor state0 = random_rounded({channels, kernel - 1}, 413);
    Tensor ref = Tensor::host(DType::kF32, {tokens, channels}), ref_state = host_copy(state0);
    Tensor ref_inter = Tensor::host(DType::kF32, {tokens, channels, kernel - 1});
    ops::causal_conv1d({.x = x, .weight = w, .bias = b, .conv_state = ref_state, .out = ref,
                        .intermediate_states = ref_inter});
    Tensor gx = gpu_bf16(x), state = gpu_copy(state0);
    Tensor inter = poisoned(DType::kF32, {tokens, channels, kernel - 1});
    ops::causal_conv1d({.x = gx, .weight = gpu_copy(w), .bias = gpu_copy(b), .conv_state = state, .out = gx,
                        .intermediate_states = inter});
    expect_close(*gpu_, gx, ref, kBf16Tolerance, "conv1d out");
    expect_close(*gpu_, state, ref_state, 1e-6, "conv1d state");
    expect_close(*gpu_, inter, ref_inter, 1e-6, "conv1d intermediates");
  }
}

TEST_F(CudaHybridOps, GatedDeltaRuleRecurrentMatchesCpu) {
  struct Case { int64_t tokens, nv, nk, dk, dv; bool intermediates; };
  for (const Case& c : std::vector<Case>{{1, 32, 16, 128, 128, false}, {3, 32, 16, 128, 128, true},
                                          {40, 8, 4, 128, 128, false}, {19, 4, 2, 32, 32, true}}) {
    const int64_t width = 2 * c.nk * c.dk + c.nv * c.dv;
    const Tensor qkv = random_rounded({c.tokens, width}, 420, -1.f, 1.f);
    const Tensor a = random_rounded({c.tokens, c.nv}, 421, -2.f, 2.f), b = random_rounded({c.tokens, c.nv}, 422, -2.f, 2.f);
    const Tensor a_log = random_rounded({c.nv}, 423, -1.f, 0.5f), dt_bias = random_rounded({c.nv}, 424);
    const Tensor state0 = random_rounded({c.nv, c.dk, c.dv}, 425, -0.5f, 0.5f);
    Tensor ref = Tensor::host(DType::kF32, {c.tokens, c.nv, c.dv}), ref_state = host_copy(state0);
    Tensor ref_inter = c.intermediates ? Tensor::host(DType::kF32, {c.tokens, c.nv, c.dk, c.dv}) : Tensor();
    ops::gated_delta_rule({.qkv = qkv, .a = a, .b = b, .A_log = a_log, .dt_bias = dt_bias, .state = ref_state,
                           .out = ref, .intermediate_states = ref_inter});
    Tensor state = gpu_copy(state0), out = poisoned(DType::kBF16, {c.tokens, c.nv, c.dv});
    Tensor inter = c.intermediates ? poisoned(DType::kF32, {c.tokens, c.nv, c.dk, c.dv}) : Tensor();
    ops::gated_delta_rule({.qkv = gpu_bf16(qkv), .a = gpu_bf16(a), .b = gpu_bf16(b), .A_log = gpu_copy(a_log),
                           .dt_bias = gpu_copy(dt_bias), .state = state, .out = out, .intermediate_states = inter});
    const std::string what = "gdn T=" + std::to_string(c.tokens) + " dk=" + std::to_string(c.dk);
    expect_close(*gpu_, out, ref, kBf16Tolerance, what + " out");
    expect_close(*gpu_, state, ref_state, 1e-4, what + " state");
    if (c.intermediates) expect_close(*gpu_, inter, ref_inter, 1e-4, what + " intermediates");
  }
}

TEST_F(CudaHybridOps, SsdScanRecurrentMatchesCpu) {
  struct Case { int64_t tokens, nh, hd, n, groups; bool intermediates; };
  for (const Case& c : std::vector<Case>{{1, 128, 64, 128, 8, false}, {4, 8, 32, 16, 1, true},
                                          {40, 16, 64, 128, 2, false}, {17, 8, 32, 16, 1, true}}) {
    const int64_t width = c.nh * c.hd + 2 * c.groups * c.n;
    const Tensor xbc = random_rounded({c.tokens, width}, 430, -1.f, 1.f);
    const Tensor dt = random_rounded({c.tokens, c.nh}, 431, -3.f, 1.f);
    const Tensor dt_bias = random_rounded({c.nh}, 432), a_log = random_rounded({c.nh}, 433, -1.f, 1.f);
    const Tensor d = random_rounded({c.nh}, 434);
    const Tensor state0 = random_rounded({c.nh, c.hd, c.n}, 435, -0.5f, 0.5f);
    const ops::SsdScanOptions options{.n_groups = c.groups, .dt_min = 0.001f, .dt_max = 5.0f, .chunk_size = 16};
    Tensor ref = Tensor::host(DType::kF32, {c.tokens, c.nh, c.hd}), ref_state = host_copy(state0);
    Tensor ref_inter = c.intermediates ? Tensor::host(DType::kF32, {c.tokens, c.nh, c.hd, c.n}) : Tensor();
    ops::ssd_scan({.xbc = xbc, .dt = dt, .dt_bias = dt_bias, .A_log = a_log, .D = d, .state = ref_state, .y = ref,
                   .intermediate_states = ref_inter}, options);
    Tensor state = gpu_copy(state0), y = poisoned(DType::kBF16, {c.tokens, c.nh, c.hd});
    Tensor inter = c.intermediates ? poisoned(DType::kF32, {c.tokens, c.nh, c.hd, c.n}) : Tensor();
    ops::ssd_scan({.xbc = gpu_bf16(xbc), .dt = gpu_bf16(dt), .dt_bias = gpu_copy(dt_bias), .A_log = gpu_copy(a_log),
                   .D = gpu_copy(d), .state = state, .y = y, .intermediate_states = inter}, options);
    const std::string what = "ssd T=" + std::to_string(c.tokens) + " N=" + std::to_string(c.n);
    expect_close(*gpu_, y, ref, kBf16Tolerance, what + " y");
    expect_close(*gpu_, state, ref_state, 1e-4, what + " state");
    if (c.intermediates) expect_close(*gpu_, inter, ref_inter, 1e-4, what + " intermediates");
  }
}

// Nemotron-3-Nano's router (128 experts, top 6, one group) and DeepSeek-V3's (256 experts in
// 8 groups, 4 groups eligible, top 8): the same experts in the same order as the CPU.
TEST_F(CudaHybridOps, BiasedGroupedRoutingMatchesCpu) {
  struct Case { int64_t tokens, experts, k, groups, topk_group; };
  for (const Case& c : std::vector<Case>{{1, 128, 6, 1, 1}, {300, 128, 6, 1, 1}, {7, 256, 8, 8, 4}, {129, 256, 8, 8, 4},
                                         {5, 64, 4, 4, 1}}) {
    const ops::MoeRouteOptions route{.top_k = c.k, .scoring = ops::MoeScoring::kSigmoid, .norm_topk_prob = true,
                                     .routed_scaling_factor = 2.5f, .n_group = c.groups, .topk_group = c.topk_group};
    const Tensor logits = random_f32({c.tokens, c.experts}, 441, -4.f, 4.f);
    const Tensor bias = random_f32({c.experts}, 442, -0.3f, 0.3f);
    Tensor ids = Tensor::host(DType::kI32, {c.tokens, c.k}), weights = Tensor::host(DType::kF32, {c.tokens, c.k});
    ops::moe_route_biased(logits, bias, ids, weights, route);
    Tensor gids = gpu_->empty(DType::kI32, {c.tokens, c.k}), gweights = poisoned(DType::kF32, {c.tokens, c.k});
    gpu_->fill_bytes(gids, 0xff);
    ops::moe_route_biased(gpu_copy(logits), gpu_copy(bias), gids, gweights, route);
    const std::string what = "biased route E=" + std::to_string(c.experts) + " T=" + std::to_string(c.tokens);
    expect_exact_i32(*gpu_, gids, ids, what + " ids");
    expect_close(*gpu_, gweights, weights, 1e-5, what + " weights");
  }
}

// Expert biases on rows grouped by expert (some experts empty), bf16 and f32, and the router
// bias (no offsets: one row for all).
TEST_F(CudaHybridOps, GroupedBiasMatchesCpu) {
  const int64_t rows = 300, n = 2880, experts = 32;
  std::vector<int32_t> offsets(experts + 1, 0);
  for (int64_t e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + (e % 3 == 1 ? 0 : static_cast<int32_t>(e % 7 + 6));
  offsets[experts] = static_cast<int32_t>(rows);
  const Tensor offsets_host = int_tensor(offsets);
  const Tensor y = random_rounded({rows, n}, 443, -2.f, 2.f), bias = random_f32({experts, n}, 444, -1.f, 1.f);
  Tensor ref = Tensor::host(DType::kF32, {rows, n});
  std::memcpy(ref.data(), y.data(), y.nbytes());
  ops::add_grouped_bias(ref, bias, offsets_host);
  Tensor got_bf16 = gpu_bf16(y), got_f32 = gpu_copy(y);
  ops::add_grouped_bias(got_bf16, gpu_copy(bias), gpu_copy(offsets_host));
  ops::add_grouped_bias(got_f32, gpu_copy(bias), gpu_copy(offsets_host));
  expect_close(*gpu_, got_bf16, ref, kBf16Tolerance, "grouped bias bf16");
  expect_close(*gpu_, got_f32, ref, 1e-6, "grouped bias f32");
  Tensor router_ref = Tensor::host(DType::kF32, {rows, n});
  std::memcpy(router_ref.data(), y.data(), y.nbytes());
  ops::add_grouped_bias(router_ref, bias.slice_rows(5, 6), Tensor());
  Tensor router = gpu_copy(y);
  ops::add_grouped_bias(router, gpu_copy(bias.slice_rows(5, 6)), Tensor());
  expect_close(*gpu_, router, router_ref, 1e-6, "router bias");
}

TEST_F(CudaHybridOps, MoeRouteGroupGroupedLinearCombine) {
  for (const auto& [tokens, experts, k, scoring] : std::vector<std::tuple<int64_t, int64_t, int64_t, ops::MoeScoring>>{
           {3, 128, 8, ops::MoeScoring::kSoftmax}, {200, 128, 8, ops::MoeScoring::kSoftmax},
           {9, 512, 10, ops::MoeScoring::kSoftmax}, {33, 64, 6, ops::MoeScoring::kSigmoid},
           {5, 1000, 4, ops::MoeScoring::kSoftmax}}) {  // past the warp router: block per token
    const int64_t hidden = 256, inter = 192, pairs = tokens * k;
    const ops::MoeRouteOptions route{.top_k = k, .scoring = scoring, .norm_topk_prob = true,
                                     .routed_scaling_factor = scoring == ops::MoeScoring::kSigmoid ? 2.5f : 1.0f};
    const Tensor logits = random_f32({tokens, experts}, 440, -4.f, 4.f);
    Tensor ids = Tensor::host(DType::kI32, {tokens, k}), weights = Tensor::host(DType::kF32, {tokens, k});
    ops::moe_route(logits, ids, weights, route);
    Tensor gids = gpu_->empty(DType::kI32, {tokens, k}), gweights = poisoned(DType::kF32, {tokens, k});
    ops::moe_route(gpu_copy(logits), gids, gweights, route);
    expect_exact_i32(*gpu_, gids, ids, "moe_route ids");
    expect_close(*gpu_, gweights, weights, 1e-5, "moe_route weights");

    const ops::MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {pairs}),
                                .token_rows = Tensor::host(DType::kI32, {pairs}),
                                .expert_offsets = Tensor::host(DType::kI32, {experts + 1})};
    ops::moe_group(ids, groups);
    const ops::MoeGroups ggroups{.sorted_pairs = gpu_->empty(DType::kI32, {pairs}),
                                 .token_rows = gpu_->empty(DType::kI32, {pairs}),
                                 .expert_offsets = gpu_->empty(DType::kI32, {experts + 1})};
    ops::moe_group(gpu_copy(ids), ggroups);
    expect_exact_i32(*gpu_, ggroups.sorted_pairs, groups.sorted_pairs, "sorted_pairs");
    expect_exact_i32(*gpu_, ggroups.token_rows, groups.token_rows, "token_rows");
    expect_exact_i32(*gpu_, ggroups.expert_offsets, groups.expert_offsets, "expert_offsets");

    const Tensor xs = random_rounded({pairs, hidden}, 441), w = random_rounded({experts, inter, hidden}, 442, -0.1f, 0.1f);
    Tensor up = Tensor::host(DType::kF32, {pairs, inter});
    ops::grouped_linear(xs, to_bf16_host(w), groups.expert_offsets, up);
    Tensor gup = poisoned(DType::kBF16, {pairs, inter});
    ops::grouped_linear(gpu_bf16(xs), gpu_bf16(w), ggroups.expert_offsets, gup);
    expect_close(*gpu_, gup, up, kBf16Tolerance, "grouped_linear pairs=" + std::to_string(pairs));

    const Tensor y = random_rounded({pairs, hidden}, 443);
    Tensor out = Tensor::host(DType::kF32, {tokens, hidden});
    ops::moe_combine(y, groups.sorted_pairs, weights, out);
    Tensor gout = poisoned(DType::kBF16, {tokens, hidden});
    ops::moe_combine(gpu_bf16(y), ggroups.sorted_pairs, gpu_copy(weights), gout);
    expect_close(*gpu_, gout, out, kBf16Tolerance, "moe_combine");

    const Tensor shared = random_rounded({tokens, hidden}, 444), gate = random_f32({tokens, 1}, 445, -3.f, 3.f);
    Tensor ref_x = random_rounded({tokens, hidden}, 446);
    Tensor gx = gpu_bf16(ref_x);
    ops::add_sigmoid_gated(ref_x, shared, gate);
    ops::add_sigmoid_gated(gx, gpu_bf16(shared), gpu_copy(gate));
    expect_close(*gpu_, gx, ref_x, kBf16Tolerance, "add_sigmoid_gated");
  }
}

}  // namespace
}  // namespace strata::test
