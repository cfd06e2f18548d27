// MoE op fronts on the CPU: routing picks and weights, grouping order and offsets, grouped
// linear against one linear per token, the weighted combine, and the pair-order decode path.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "strata/ops/activation.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"
#include "strata/ops/moe.h"
#include "test_support.h"

namespace strata::ops {
namespace {

Tensor i32(std::vector<int32_t> values, Shape shape) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

TEST(MoeOps, SoftmaxTopKRenormalisedAndSigmoidScaled) {
  Tensor logits = Tensor::host(DType::kF32, {2, 4});
  const float values[] = {0.f, 2.f, 1.f, 2.f, -1.f, -1.f, 3.f, 0.f};
  std::copy(values, values + 8, logits.data_as<float>());
  Tensor ids = Tensor::host(DType::kI32, {2, 2});
  Tensor weights = Tensor::host(DType::kF32, {2, 2});
  moe_route(logits, ids, weights, {.top_k = 2, .norm_topk_prob = true});
  // Row 0 ties experts 1 and 3: the lower id comes first; equal scores -> 0.5 each.
  EXPECT_EQ(std::vector<int32_t>(ids.data_as<int32_t>(), ids.data_as<int32_t>() + 4),
            (std::vector<int32_t>{1, 3, 2, 3}));
  EXPECT_FLOAT_EQ(weights.data_as<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(weights.data_as<float>()[2], 1.0f / (1.0f + std::exp(-3.0f)));
  Tensor id1 = Tensor::host(DType::kI32, {2, 1});
  Tensor weight1 = Tensor::host(DType::kF32, {2, 1});
  moe_route(logits, id1, weight1,
            {.top_k = 1, .scoring = MoeScoring::kSigmoid, .norm_topk_prob = false,
             .routed_scaling_factor = 2.0f});
  EXPECT_EQ(id1.data_as<int32_t>()[0], 1);
  EXPECT_EQ(id1.data_as<int32_t>()[1], 2);
  EXPECT_FLOAT_EQ(weight1.data_as<float>()[0], 2.0f / (1.0f + std::exp(-2.0f)));
}

// Biased routing: the bias decides which experts, the unbiased sigmoid how much; with groups
// only the experts of the two best groups (by their top-two sum) can be chosen.
TEST(MoeOps, BiasedRoutingChoosesByBiasWeighsBySigmoidWithinGroups) {
  Tensor logits = Tensor::host(DType::kF32, {1, 8});
  const float values[] = {2.f, 1.f, 0.f, 0.f, 1.5f, -1.f, 0.5f, 0.5f};
  std::copy(values, values + 8, logits.data_as<float>());
  Tensor bias = Tensor::host(DType::kF32, {8});
  const float biases[] = {0.f, 0.f, 0.6f, 0.f, 0.f, 0.f, 0.f, 0.f};
  std::copy(biases, biases + 8, bias.data_as<float>());
  auto sigmoid = [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  Tensor ids = Tensor::host(DType::kI32, {1, 2});
  Tensor weights = Tensor::host(DType::kF32, {1, 2});
  // One group: choice scores are 0.881, 0.731, 1.1, 0.5, 0.818, ...: experts 2 then 0.
  moe_route_biased(logits, bias, ids, weights,
                   {.top_k = 2, .scoring = MoeScoring::kSigmoid, .norm_topk_prob = true, .routed_scaling_factor = 2.5f});
  EXPECT_EQ(ids.data_as<int32_t>()[0], 2);
  EXPECT_EQ(ids.data_as<int32_t>()[1], 0);
  const float sum = sigmoid(0.f) + sigmoid(2.f);
  EXPECT_FLOAT_EQ(weights.data_as<float>()[0], sigmoid(0.f) / sum * 2.5f);
  EXPECT_FLOAT_EQ(weights.data_as<float>()[1], sigmoid(2.f) / sum * 2.5f);
  // Four groups of two: sums {0,1} 1.61, {2,3} 1.6, {4,5} 1.09, {6,7} 1.24. With one group
  // eligible, both picks come from {0, 1}; with two, {0,1} and {2,3}.
  moe_route_biased(logits, bias, ids, weights,
                   {.top_k = 2, .scoring = MoeScoring::kSigmoid, .norm_topk_prob = false, .n_group = 4, .topk_group = 1});
  EXPECT_EQ(ids.data_as<int32_t>()[0], 0);
  EXPECT_EQ(ids.data_as<int32_t>()[1], 1);
  EXPECT_FLOAT_EQ(weights.data_as<float>()[1], sigmoid(1.f));
  moe_route_biased(logits, bias, ids, weights,
                   {.top_k = 2, .scoring = MoeScoring::kSigmoid, .norm_topk_prob = false, .n_group = 4, .topk_group = 2});
  EXPECT_EQ(ids.data_as<int32_t>()[0], 2);
  EXPECT_EQ(ids.data_as<int32_t>()[1], 0);
}

double sqrt_softplus(double x) { return std::sqrt(std::log1p(std::exp(x))); }

// sqrt(softplus) scores 1.46, 1.15, 0.83, 0.83, 1.30, 0.56, 0.99, 0.99; the bias lifts expert 2 to
// 1.43, past expert 4: experts 0 then 2, weighted by their unbiased scores.
TEST(MoeOps, BiasedRoutingScoresBySqrtSoftplus) {
  const Tensor logits = [] {
    Tensor t = Tensor::host(DType::kF32, {1, 8});
    const float values[] = {2.f, 1.f, 0.f, 0.f, 1.5f, -1.f, 0.5f, 0.5f};
    std::copy(values, values + 8, t.data_as<float>());
    return t;
  }();
  Tensor bias = Tensor::host(DType::kF32, {8});
  const float biases[] = {0.f, 0.f, 0.6f, 0.f, 0.f, 0.f, 0.f, 0.f};
  std::copy(biases, biases + 8, bias.data_as<float>());
  Tensor ids = Tensor::host(DType::kI32, {1, 2}), weights = Tensor::host(DType::kF32, {1, 2});
  moe_route_biased(logits, bias, ids, weights,
                   {.top_k = 2, .scoring = MoeScoring::kSqrtSoftplus, .norm_topk_prob = true, .routed_scaling_factor = 1.5f});
  EXPECT_EQ(ids.data_as<int32_t>()[0], 0);
  EXPECT_EQ(ids.data_as<int32_t>()[1], 2);
  const double sum = sqrt_softplus(2.0) + sqrt_softplus(0.0);
  EXPECT_NEAR(weights.data_as<float>()[0], sqrt_softplus(2.0) / sum * 1.5, 1e-6);
  EXPECT_NEAR(weights.data_as<float>()[1], sqrt_softplus(0.0) / sum * 1.5, 1e-6);
}

// Hash routing: each token's experts are its table row whatever the logits; weights are the
// row's scores renormalised and scaled.
TEST(MoeOps, TableRoutingTakesEachTokensRow) {
  const Tensor logits = test::random_f32({3, 4}, 101, -3.f, 3.f);
  const Tensor tokens = i32({2, 0, 2}, {3}), table = i32({1, 3, 0, 2, 2, 1}, {3, 2});
  Tensor ids = Tensor::host(DType::kI32, {3, 2}), weights = Tensor::host(DType::kF32, {3, 2});
  moe_route_by_table(logits, tokens, table, ids, weights,
                     {.top_k = 2, .scoring = MoeScoring::kSqrtSoftplus, .norm_topk_prob = true, .routed_scaling_factor = 1.5f});
  EXPECT_EQ(std::vector<int32_t>(ids.data_as<int32_t>(), ids.data_as<int32_t>() + 6),
            (std::vector<int32_t>{2, 1, 1, 3, 2, 1}));
  for (int64_t t = 0; t < 3; ++t) {
    const int32_t* row = ids.data_as<int32_t>() + t * 2;
    const double a = sqrt_softplus(logits.data_as<float>()[t * 4 + row[0]]);
    const double b = sqrt_softplus(logits.data_as<float>()[t * 4 + row[1]]);
    EXPECT_NEAR(weights.data_as<float>()[t * 2], a / (a + b) * 1.5, 1e-6) << t;
    EXPECT_NEAR(weights.data_as<float>()[t * 2 + 1], b / (a + b) * 1.5, 1e-6) << t;
  }
}

// Rows 0-1 belong to expert 1 (expert 0 and 2 own none), rows 2-4 to expert 3; without
// offsets the one bias row goes everywhere.
TEST(MoeOps, GroupedBiasAddsEachRowsExpertBias) {
  Tensor y = Tensor::host(DType::kF32, {5, 2});
  for (int i = 0; i < 10; ++i) y.data_as<float>()[i] = static_cast<float>(i);
  Tensor bias = Tensor::host(DType::kF32, {4, 2});
  for (int i = 0; i < 8; ++i) bias.data_as<float>()[i] = 100.0f * static_cast<float>(i / 2) + static_cast<float>(i % 2);
  add_grouped_bias(y, bias, i32({0, 0, 2, 2, 5}, {5}));
  EXPECT_EQ(std::vector<float>(y.data_as<float>(), y.data_as<float>() + 10),
            (std::vector<float>{100, 102, 102, 104, 304, 306, 306, 308, 308, 310}));
  add_grouped_bias(y, bias.slice_rows(3, 4), Tensor());
  EXPECT_EQ(y.data_as<float>()[0], 400.0f);
  EXPECT_EQ(y.data_as<float>()[9], 611.0f);
}

TEST(MoeOps, GroupSortsPairsByExpertStably) {
  const Tensor ids = i32({2, 0, 1, 2, 2, 1}, {3, 2});
  const MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {6}),
                         .token_rows = Tensor::host(DType::kI32, {6}),
                         .expert_offsets = Tensor::host(DType::kI32, {4})};
  moe_group(ids, groups);
  auto vec = [](const Tensor& t) {
    return std::vector<int32_t>(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel());
  };
  EXPECT_EQ(vec(groups.sorted_pairs), (std::vector<int32_t>{1, 2, 5, 0, 3, 4}));
  EXPECT_EQ(vec(groups.token_rows), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(vec(groups.expert_offsets), (std::vector<int32_t>{0, 1, 3, 6}));
}

// Expert parallelism: this group holds experts 1 and 2 of the routing's ids; the pair of expert 0
// comes last, and neither the grouped linear nor the grouped bias writes its row.
TEST(MoeOps, GroupPutsOtherRanksExpertsLast) {
  const Tensor ids = i32({2, 0, 1, 2, 2, 1}, {3, 2});
  const MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {6}),
                         .token_rows = Tensor::host(DType::kI32, {6}),
                         .expert_offsets = Tensor::host(DType::kI32, {3}),
                         .first_expert = 1};
  moe_group(ids, groups);
  auto vec = [](const Tensor& t) {
    return std::vector<int32_t>(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel());
  };
  EXPECT_EQ(vec(groups.sorted_pairs), (std::vector<int32_t>{2, 5, 0, 3, 4, 1}));
  EXPECT_EQ(vec(groups.token_rows), (std::vector<int32_t>{1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(vec(groups.expert_offsets), (std::vector<int32_t>{0, 2, 5}));
  Tensor out = Tensor::host(DType::kF32, {6, 1});
  std::fill_n(out.data_as<float>(), 6, -7.0f);
  Tensor x = Tensor::host(DType::kF32, {6, 1});
  std::fill_n(x.data_as<float>(), 6, 1.0f);
  Tensor weights = Tensor::host(DType::kF32, {2, 1, 1});
  weights.data_as<float>()[0] = 2.0f;
  weights.data_as<float>()[1] = 3.0f;
  Tensor bias = Tensor::host(DType::kF32, {2, 1});
  bias.data_as<float>()[0] = 10.0f;
  bias.data_as<float>()[1] = 100.0f;
  grouped_linear(x, weights, groups.expert_offsets, out);
  add_grouped_bias(out, bias, groups.expert_offsets);
  EXPECT_EQ(std::vector<float>(out.data_as<float>(), out.data_as<float>() + 6),
            (std::vector<float>{12, 12, 103, 103, 103, -7}));
}

// Token dispatch over 2 ranks of 4 experts (rank 0: experts 0, 1; rank 1: 2, 3): exact pair
// counts per destination, and the packed rows in pair order with padding (expert 4, zeros) after.
TEST(MoeOps, DispatchCountsAndPacksPairsPerRank) {
  const Tensor ids = i32({3, 0, 2, 3, 1, 2}, {3, 2});
  Tensor counts = Tensor::host(DType::kI32, {2});
  moe_count_by_rank(ids, 4, counts);
  EXPECT_EQ(std::vector<int32_t>(counts.data_as<int32_t>(), counts.data_as<int32_t>() + 2),
            (std::vector<int32_t>{2, 4}));
  Tensor x = Tensor::host(DType::kF32, {3, 1});
  for (int i = 0; i < 3; ++i) x.data_as<float>()[i] = 10.0f * (i + 1);
  const MoeDispatchRows rows{.num_experts = 4, .send_x = Tensor::host(DType::kF32, {10, 1}),
                             .send_ids = Tensor::host(DType::kI32, {10, 1}),
                             .pair_rows = Tensor::host(DType::kI32, {6})};
  moe_pack_by_rank(x, ids, 2, rows);  // capacity 5
  auto vec = [](const Tensor& t) {
    return std::vector<int32_t>(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel());
  };
  EXPECT_EQ(vec(rows.send_ids), (std::vector<int32_t>{0, 1, 4, 4, 4, 3, 2, 3, 2, 4}));
  EXPECT_EQ(vec(rows.pair_rows), (std::vector<int32_t>{5, 0, 6, 7, 1, 8}));
  EXPECT_EQ(std::vector<float>(rows.send_x.data_as<float>(), rows.send_x.data_as<float>() + 10),
            (std::vector<float>{10, 30, 0, 0, 0, 10, 20, 20, 30, 0}));
}

// Rows with no tokens (a rank whose slice of a short step is empty) count and pack nothing.
TEST(MoeOps, DispatchOfNoTokensSendsPaddingOnly) {
  const Tensor ids = Tensor::host(DType::kI32, {0, 2});
  Tensor counts = Tensor::host(DType::kI32, {4});
  moe_count_by_rank(ids, 8, counts);
  EXPECT_EQ(std::vector<int32_t>(counts.data_as<int32_t>(), counts.data_as<int32_t>() + 4),
            (std::vector<int32_t>{0, 0, 0, 0}));
  const MoeDispatchRows rows{.num_experts = 8, .send_x = Tensor::host(DType::kF32, {4, 3}),
                             .send_ids = Tensor::host(DType::kI32, {4, 1}),
                             .pair_rows = Tensor::host(DType::kI32, {0})};
  moe_pack_by_rank(Tensor::host(DType::kF32, {0, 3}), ids, 4, rows);
  EXPECT_EQ(std::vector<int32_t>(rows.send_ids.data_as<int32_t>(), rows.send_ids.data_as<int32_t>() + 4),
            (std::vector<int32_t>{8, 8, 8, 8}));
}

TEST(MoeOps, GroupedLinearAndCombineMatchPerTokenExperts) {
  const int64_t t = 5, k = 2, e = 3, hidden = 8, out_dim = 8;
  const Tensor x = test::random_f32({t, hidden}, 1);
  const Tensor w = test::random_bf16({e, out_dim, hidden}, 2);
  const Tensor ids = i32({0, 2, 1, 2, 2, 0, 1, 0, 2, 1}, {t, k});
  Tensor topk_w = test::random_f32({t, k}, 3, 0.f, 1.f);
  const MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {t * k}),
                         .token_rows = Tensor::host(DType::kI32, {t * k}),
                         .expert_offsets = Tensor::host(DType::kI32, {e + 1})};
  moe_group(ids, groups);
  Tensor xs = Tensor::host(DType::kF32, {t * k, hidden});
  for (int64_t i = 0; i < t * k; ++i)
    std::copy_n(x.data_as<float>() + groups.token_rows.data_as<int32_t>()[i] * hidden, hidden,
                xs.data_as<float>() + i * hidden);
  Tensor ys = Tensor::host(DType::kF32, {t * k, out_dim});
  grouped_linear(xs, w, groups.expert_offsets, ys);
  Tensor out = Tensor::host(DType::kF32, {t, out_dim});
  moe_combine(ys, groups.sorted_pairs, topk_w, out);
  Tensor expected = Tensor::host(DType::kF32, {t, out_dim});
  std::fill_n(expected.data_as<float>(), t * out_dim, 0.f);
  Tensor one = Tensor::host(DType::kF32, {1, out_dim});
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const int32_t expert = ids.data_as<int32_t>()[i * k + j];
      linear(x.slice_rows(i, i + 1), w.slice_rows(expert, expert + 1).reshape({out_dim, hidden}),
             Tensor(), one);
      for (int64_t c = 0; c < out_dim; ++c)
        expected.data_as<float>()[i * out_dim + c] += one.data_as<float>()[c] * topk_w.data_as<float>()[i * k + j];
    }
  }
  EXPECT_LT(test::max_abs_diff(out, expected), 1e-6f);
}

// The decode path: expert_linear in pair order (x per token, then gated x per pair) and the
// combine without a permutation, adding into a residual, equal the grouped path to 1e-6.
TEST(MoeOps, PairOrderProductsAndCombineMatchGroupedPath) {
  const int64_t t = 2, k = 3, e = 4, hidden = 16, inter = 8;
  const Tensor x = test::random_f32({t, hidden}, 11);
  const Tensor gate_up = test::random_bf16({e, 2 * inter, hidden}, 12);
  const Tensor down = test::random_bf16({e, hidden, inter}, 13);
  const Tensor ids = i32({3, 0, 2, 1, 3, 0}, {t, k});
  const Tensor topk_w = test::random_f32({t, k}, 14, 0.f, 1.f);
  Tensor gu = Tensor::host(DType::kF32, {t * k, 2 * inter}), ys = Tensor::host(DType::kF32, {t * k, hidden});
  expert_linear(x, gate_up, ids, gu);
  expert_linear(gu, down, ids, ys, {.gated_input = Activation::kSilu});
  Tensor out = test::random_f32({t, hidden}, 15);
  Tensor expected = Tensor::host(DType::kF32, {t, hidden});
  std::copy_n(out.data_as<float>(), t * hidden, expected.data_as<float>());
  moe_combine(ys, Tensor(), topk_w, out, {.accumulate = true});

  Tensor one_gu = Tensor::host(DType::kF32, {1, 2 * inter}), act = Tensor::host(DType::kF32, {1, inter});
  Tensor one = Tensor::host(DType::kF32, {1, hidden});
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      const int32_t expert = ids.data_as<int32_t>()[i * k + j];
      linear(x.slice_rows(i, i + 1), gate_up.slice_rows(expert, expert + 1).reshape({2 * inter, hidden}), Tensor(),
             one_gu);
      gated_activation_halves(one_gu, act, Activation::kSilu);
      linear(act, down.slice_rows(expert, expert + 1).reshape({hidden, inter}), Tensor(), one);
      for (int64_t c = 0; c < hidden; ++c)
        expected.data_as<float>()[i * hidden + c] += one.data_as<float>()[c] * topk_w.data_as<float>()[i * k + j];
    }
  }
  EXPECT_LT(test::max_abs_diff(out, expected), 1e-5f);
  EXPECT_GT(test::max_abs_diff(out, x), 1e-2f);  // not the untouched input
}

}  // namespace
}  // namespace strata::ops
