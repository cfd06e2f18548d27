// DeepSeek-V4's MoE pieces on CUDA against the CPU on the same inputs: biased routing by
// sqrt(softplus) scores (ties, logits past softplus's linear threshold, groups), hash routing
// by a token -> experts table, the swiglu_limit clamp on bf16 and f32, and the whole MoeFfn of
// the DeepSeek-V4 fixture's hash-routed and sqrt-softplus layers. Outputs are poisoned first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "model/layers/deepseek_v4_parts_support.h"
#include "ops/cuda_op_support.h"
#include "strata/model/forward_context.h"
#include "strata/model/layers/moe.h"
#include "strata/model/layers/normed_input.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/moe.h"
#include "test_support.h"

namespace strata::test {
namespace {

using CudaMoeV4 = CudaOpTest;

void expect_exact_i32(Backend& gpu, const Tensor& got, const Tensor& ref, const std::string& what) {
  const Tensor h = gpu.to_host(got);
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_EQ(h.data_as<int32_t>()[i], ref.data_as<int32_t>()[i]) << what << " at " << i;
}

// Logits rounded to multiples of 0.5: many experts of a row share a score (ties, lowest id first).
Tensor coarse(Tensor logits) {
  float* v = logits.data_as<float>();
  for (int64_t i = 0; i < logits.numel(); ++i) v[i] = std::round(v[i] * 2) / 2;
  return logits;
}

struct BiasedCase {
  int64_t tokens, experts, k, groups, topk_group;
  float logit_range;  // logits in [-range, range): past 20 softplus is linear
  bool ties;          // coarse logits and no bias
  bool norm;
  float scaling;
};

// DeepSeek-V4's router (256 experts, top 6, one group, scaling 1.5) and variants: grouped, ties,
// unnormalised, large logits.
TEST_F(CudaMoeV4, SqrtSoftplusBiasedRoutingMatchesCpu) {
  for (const BiasedCase& c : std::vector<BiasedCase>{{1, 256, 6, 1, 1, 4.f, false, true, 1.5f},
                                                     {300, 256, 6, 1, 1, 4.f, false, true, 1.5f},
                                                     {33, 256, 6, 1, 1, 4.f, true, true, 1.5f},
                                                     {17, 384, 8, 1, 1, 30.f, false, false, 2.5f},
                                                     {9, 256, 8, 8, 4, 4.f, false, true, 2.5f},
                                                     {40, 64, 4, 4, 2, 4.f, true, false, 1.0f}}) {
    const ops::MoeRouteOptions route{.top_k = c.k, .scoring = ops::MoeScoring::kSqrtSoftplus, .norm_topk_prob = c.norm,
                                     .routed_scaling_factor = c.scaling, .n_group = c.groups,
                                     .topk_group = c.topk_group};
    Tensor logits = random_f32({c.tokens, c.experts}, 601, -c.logit_range, c.logit_range);
    Tensor bias = random_f32({c.experts}, 602, -0.3f, 0.3f);
    if (c.ties) {
      logits = coarse(logits);
      std::memset(bias.data(), 0, bias.nbytes());
    }
    Tensor ids = Tensor::host(DType::kI32, {c.tokens, c.k}), weights = Tensor::host(DType::kF32, {c.tokens, c.k});
    ops::moe_route_biased(logits, bias, ids, weights, route);
    Tensor gids = gpu_->empty(DType::kI32, {c.tokens, c.k}), gweights = poisoned(DType::kF32, {c.tokens, c.k});
    gpu_->fill_bytes(gids, 0xff);
    ops::moe_route_biased(gpu_copy(logits), gpu_copy(bias), gids, gweights, route);
    const std::string what = "sqrt-softplus route E=" + std::to_string(c.experts) + " T=" + std::to_string(c.tokens) +
                             " groups=" + std::to_string(c.groups) + (c.ties ? " ties" : "");
    expect_exact_i32(*gpu_, gids, ids, what + " ids");
    expect_close(*gpu_, gweights, weights, 1e-5, what + " weights");
  }
}

// n values of [0, bound), uniform.
std::vector<int32_t> random_below(int64_t n, int64_t bound, uint32_t seed) {
  const Tensor u = random_f32({n}, seed, 0.f, 1.f);
  std::vector<int32_t> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<int32_t>(std::min<int64_t>(static_cast<int64_t>(u.data_as<float>()[i] * bound), bound - 1));
  return out;
}

// tid2eid: [vocab, k], each row k experts of [0, experts).
Tensor random_table(int64_t vocab, int64_t k, int64_t experts, uint32_t seed) {
  return int_tensor(random_below(vocab * k, experts, seed)).reshape({vocab, k});
}

// [tokens] ids of [0, vocab): the first and last rows of the table among them.
Tensor random_tokens(int64_t tokens, int64_t vocab, uint32_t seed) {
  std::vector<int32_t> ids = random_below(tokens, vocab, seed);
  ids[0] = static_cast<int32_t>(vocab - 1);
  if (tokens > 1) ids[1] = 0;
  return int_tensor(ids);
}

// DeepSeek-V4's hash layers (256 experts, top 6) and smaller tables, both scorings, with and
// without renormalising.
TEST_F(CudaMoeV4, TableRoutingMatchesCpu) {
  struct Case { int64_t tokens, vocab, experts, k; ops::MoeScoring scoring; bool norm; float scaling; };
  for (const Case& c : std::vector<Case>{{1, 1000, 256, 6, ops::MoeScoring::kSqrtSoftplus, true, 1.5f},
                                         {300, 1000, 256, 6, ops::MoeScoring::kSqrtSoftplus, true, 1.5f},
                                         {129, 512, 8, 2, ops::MoeScoring::kSqrtSoftplus, false, 2.5f},
                                         {45, 700, 64, 4, ops::MoeScoring::kSigmoid, true, 1.0f}}) {
    const ops::MoeRouteOptions route{.top_k = c.k, .scoring = c.scoring, .norm_topk_prob = c.norm,
                                     .routed_scaling_factor = c.scaling};
    const Tensor logits = random_f32({c.tokens, c.experts}, 611, -25.f, 25.f);
    const Tensor tokens = random_tokens(c.tokens, c.vocab, 612), table = random_table(c.vocab, c.k, c.experts, 613);
    Tensor ids = Tensor::host(DType::kI32, {c.tokens, c.k}), weights = Tensor::host(DType::kF32, {c.tokens, c.k});
    ops::moe_route_by_table(logits, tokens, table, ids, weights, route);
    Tensor gids = gpu_->empty(DType::kI32, {c.tokens, c.k}), gweights = poisoned(DType::kF32, {c.tokens, c.k});
    gpu_->fill_bytes(gids, 0xff);
    ops::moe_route_by_table(gpu_copy(logits), gpu_copy(tokens), gpu_copy(table), gids, gweights, route);
    const std::string what = "table route E=" + std::to_string(c.experts) + " T=" + std::to_string(c.tokens);
    expect_exact_i32(*gpu_, gids, ids, what + " ids");
    expect_close(*gpu_, gweights, weights, 1e-5, what + " weights");
  }
}

// Where the CPU refuses a token outside the table, the kernel (which cannot throw) gives it
// expert 0 with weight 0; the other tokens are routed as ever.
TEST_F(CudaMoeV4, TableRoutingGivesTokensOutsideTheTableNoWeight) {
  const ops::MoeRouteOptions route{.top_k = 2, .scoring = ops::MoeScoring::kSqrtSoftplus, .norm_topk_prob = true};
  const Tensor logits = random_f32({3, 8}, 621, -3.f, 3.f), table = random_table(16, 2, 8, 622);
  Tensor gids = gpu_->empty(DType::kI32, {3, 2}), gweights = poisoned(DType::kF32, {3, 2});
  ops::moe_route_by_table(gpu_copy(logits), gpu_copy(int_tensor({-1, 16, 5})), gpu_copy(table), gids, gweights, route);
  const Tensor ids = gpu_->to_host(gids), weights = gpu_->to_host(gweights);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(ids.data_as<int32_t>()[j], 0) << j;
    EXPECT_EQ(weights.data_as<float>()[j], 0.0f) << j;
  }
  EXPECT_EQ(ids.data_as<int32_t>()[4], table.data_as<int32_t>()[10]);
  EXPECT_EQ(ids.data_as<int32_t>()[5], table.data_as<int32_t>()[11]);
  EXPECT_NEAR(weights.data_as<float>()[4] + weights.data_as<float>()[5], 1.0f, 1e-6);
}

// Equal, or both NaN (the clamp keeps NaN as the CPU's std::min / std::max do).
void expect_same_values(const Tensor& got, const Tensor& ref, const std::string& what) {
  ASSERT_EQ(got.numel(), ref.numel()) << what;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const float g = got.data_as<float>()[i], r = ref.data_as<float>()[i];
    if (std::isnan(r)) {
      EXPECT_TRUE(std::isnan(g)) << what << " at " << i;
    } else {
      ASSERT_EQ(g, r) << what << " at " << i;
    }
  }
}

// swiglu_limit's two clamps (gate above only, up both ways) at DeepSeek-V4's limit 7 and the
// fixture's 0.3, most values beyond; NaN and infinities included. bf16: the bound rounds to bf16.
TEST_F(CudaMoeV4, ClampMatchesCpuOnBf16AndF32) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (const Shape& shape : {Shape{3, 1000}, Shape{257, 1536}}) {
    for (const auto& [lo, hi] :
         std::vector<std::pair<float, float>>{{-kInf, 0.3f}, {-0.3f, 0.3f}, {-7.f, 7.f}, {-kInf, 7.f}}) {
      Tensor x = random_rounded(shape, 631, -12.f, 12.f);
      const float specials[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, hi, -hi, 0.0f};
      std::copy(std::begin(specials), std::end(specials), x.data_as<float>());
      Tensor ref = host_copy(x);
      ops::clamp(ref, lo, hi);
      const std::string what = "clamp [" + std::to_string(lo) + ", " + std::to_string(hi) + "] " + shape.str();
      Tensor gf32 = gpu_copy(x);
      ops::clamp(gf32, lo, hi);
      expect_same_values(gpu_->to_host(gf32), ref, what + " f32");
      Tensor gbf16 = gpu_bf16(x);
      ops::clamp(gbf16, lo, hi);
      expect_same_values(as_f32_host(*gpu_, gbf16), as_f32_host(*gpu_, to_bf16_host(ref)), what + " bf16");
    }
  }
}

// out: [T, hidden] of the block on x ([T, hidden] activations) for tokens [T] i32, all on `backend`.
void run_moe(const MoeFfn& moe, Backend& backend, DType activations, const Tensor& x, const Tensor& tokens,
             const Tensor& out) {
  Workspace workspace(backend), step_workspace(backend);
  ForwardContext ctx{.backend = backend, .workspace = workspace, .step_workspace = step_workspace,
                     .activation_dtype = activations};
  ctx.token_ids = tokens;
  NormedInput in = NormedInput::normalized(x);
  moe.forward(in, out, ctx, SublayerWrite::kStore);
}

// The whole block on CUDA (separate gate and up experts for the clamp, the shared expert, the
// routers of layer 1 (hash) and 2 (sqrt-softplus)) against the CPU block on the same bf16 input.
TEST_F(CudaMoeV4, FixtureMoeBlockMatchesCpu) {
  const DeepseekV4Parts parts;
  const ModelWeights gpu_weights(parts.source.get(), *gpu_, ModelWeightsOptions{});
  const Tensor x = as_f32_host(*gpu_, to_bf16_host(host_copy(parts.reference_tensor("moe_input"))));
  const Tensor tokens = host_copy(parts.reference_tensor("moe_token_ids"));
  for (const int layer : {1, 2}) {
    Tensor ref = Tensor::host(DType::kF32, x.shape());
    run_moe(deepseek_v4_fixture_moe(*parts.weights, layer), *parts.backend, DType::kF32, x, tokens, ref);
    Tensor out = poisoned(DType::kBF16, x.shape());
    run_moe(deepseek_v4_fixture_moe(gpu_weights, layer), *gpu_, DType::kBF16, gpu_bf16(x), gpu_copy(tokens), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance, "DeepSeek-V4 MoE layer " + std::to_string(layer));
  }
}

}  // namespace
}  // namespace strata::test
