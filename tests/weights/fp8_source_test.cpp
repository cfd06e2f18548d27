// Fp8WeightSource: checkpoint FP8 tensors joined with their block, channel or tensor scales into
// Strata's 128-wide blocks (codes copied, each block's scale the one covering it), scale tensors
// hidden, float linears quantized under --quantization fp8, and the errors for what cannot load.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "strata/weights/dequantize.h"
#include "strata/weights/fp8.h"
#include "strata/weights/fp8_source.h"
#include "strata/weights/quant_blocks.h"
#include "weights/memory_source.h"
#include "weights_test_util.h"

namespace strata {
namespace {

using test::expect_error;
using test::MemorySource;

// e4m3 codes, NaN codes excluded.
Tensor random_codes(Shape shape, uint32_t seed) {
  Tensor t = Tensor::host(DType::kF8_E4M3, shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint8_t c = static_cast<uint8_t>(rng());
    if ((c & 0x7f) == 0x7f) c = 0x30;
    t.data_as<uint8_t>()[i] = c;
  }
  return t;
}

Tensor f32_values(Shape shape, std::vector<float> values) {
  Tensor t = Tensor::host(DType::kF32, shape);
  std::memcpy(t.data(), values.data(), values.size() * 4);
  return t;
}

// Every block of `got` (fp8_b128 [N, K]) holds the codes of `codes` and scale(row, block).
template <typename ScaleFn>
void expect_blocks(const WeightInfo& got, const Tensor& codes, ScaleFn scale) {
  ASSERT_EQ(got.dtype, DType::kF8_E4M3_B128);
  const int64_t n = codes.dim(0), k = codes.dim(1), blocks = k / kFp8Block;
  const auto* b = static_cast<const BlockF8B128*>(got.data);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < blocks; ++j) {
      ASSERT_EQ(std::memcmp(b[r * blocks + j].qs, codes.data_as<uint8_t>() + r * k + j * kFp8Block, kFp8Block), 0);
      ASSERT_EQ(b[r * blocks + j].d, scale(r, j)) << r << " " << j;
    }
}

TEST(Fp8WeightSource, BlockScalesCoverTheirRowsAndColumns) {
  auto inner = std::make_unique<MemorySource>();
  const Tensor codes = random_codes({200, 384}, 1);
  inner->add("l.q_proj.weight", codes);
  inner->add("l.q_proj.weight_scale_inv", f32_values({2, 3}, {1, 2, 3, 4, 5, 6}));
  inner->add("l.norm.weight", test::random_bf16({384}, 2));
  const Fp8WeightSource source(std::move(inner), {});
  expect_blocks(*source.find("l.q_proj.weight"), codes, [](int64_t r, int64_t j) { return float(r / 128 * 3 + j + 1); });
  EXPECT_EQ(source.find("l.q_proj.weight_scale_inv"), nullptr);
  EXPECT_EQ(source.names(), (std::vector<std::string>{"l.norm.weight", "l.q_proj.weight"}));
  EXPECT_EQ(source.find("l.norm.weight")->dtype, DType::kBF16);
  EXPECT_EQ(source.find("l.q_proj.weight"), source.find("l.q_proj.weight"));  // converted once
}

TEST(Fp8WeightSource, WideColumnBlocksChannelAndTensorScales) {
  auto inner = std::make_unique<MemorySource>();
  const Tensor a = random_codes({130, 512}, 3), b = random_codes({3, 256}, 4), c = random_codes({2, 128}, 5);
  inner->add("a.weight", a);
  inner->add("a.weight_scale_inv", f32_values({2, 2}, {1, 2, 3, 4}));  // 128 x 256 blocks
  inner->add("b.weight", b);
  inner->add("b.weight_scale", f32_values({3, 1}, {0.5f, 0.25f, 0.125f}));  // per channel
  inner->add("b.input_scale", f32_values({1}, {7}));
  inner->add("c.weight", c);
  inner->add("c.weight_scale", f32_values({1}, {0.75f}));  // per tensor
  const Fp8WeightSource source(std::move(inner), {.block_rows = 128, .block_cols = 256});
  expect_blocks(*source.find("a.weight"), a, [](int64_t r, int64_t j) { return float(r / 128 * 2 + j / 2 + 1); });
  expect_blocks(*source.find("b.weight"), b, [](int64_t r, int64_t) { return 0.5f / float(1 << r); });
  expect_blocks(*source.find("c.weight"), c, [](int64_t, int64_t) { return 0.75f; });
  EXPECT_EQ(source.find("b.input_scale"), nullptr);
}

TEST(Fp8WeightSource, RefusesWhatCannotLoad) {
  auto inner = std::make_unique<MemorySource>();
  inner->add("no_scale.weight", random_codes({4, 128}, 6));
  inner->add("bad_scale.weight", random_codes({4, 128}, 7));
  inner->add("bad_scale.weight_scale_inv", f32_values({3, 3}, std::vector<float>(9, 1.f)));
  inner->add("narrow.weight", random_codes({4, 64}, 8));
  inner->add("narrow.weight_scale", f32_values({1}, {1.f}));
  const Fp8WeightSource source(std::move(inner), {});
  expect_error([&] { source.find("no_scale.weight"); }, {"no_scale.weight", "_scale_inv"});
  expect_error([&] { source.find("bad_scale.weight"); }, {"bad_scale.weight_scale_inv", "[3, 3]"});
  expect_error([&] { source.find("narrow.weight"); }, {"narrow.weight", "multiple of 128"});
}

TEST(Fp8WeightSource, QuantizesFloatLinearsOnlyUnderQuantizeFp8) {
  auto inner = std::make_unique<MemorySource>();
  const Tensor q = test::random_bf16({5, 256}, 9);
  inner->add("model.layers.0.self_attn.q_proj.weight", q);
  inner->add("model.layers.0.mlp.gate.weight", test::random_bf16({8, 256}, 10));  // a router
  inner->add("model.embed_tokens.weight", test::random_bf16({16, 256}, 11));
  inner->add("lm_head.weight", test::random_bf16({16, 256}, 12));
  inner->add("model.norm.weight", test::random_bf16({256}, 13));
  const Fp8WeightSource source(std::move(inner), {.quantize = true});
  const WeightInfo* got = source.find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_EQ(got->dtype, DType::kF8_E4M3_B128);
  for (int64_t r = 0; r < 5; ++r) {
    std::vector<float> row(256), back(256);
    dequantize_row(DType::kBF16, q.data_as<uint16_t>() + r * 256, row.data(), 256);
    std::vector<uint8_t> expected(dtype_bytes(DType::kF8_E4M3_B128, 256));
    quantize_row_fp8_b128(row.data(), 256, expected.data());
    ASSERT_EQ(std::memcmp(static_cast<const uint8_t*>(got->data) + r * expected.size(), expected.data(), expected.size()), 0);
    dequantize_row(DType::kF8_E4M3_B128, expected.data(), back.data(), 256);
    for (int j = 0; j < 256; ++j) {
      const float amax = std::abs(*std::max_element(row.begin() + j / 128 * 128, row.begin() + j / 128 * 128 + 128,
                                                    [](float a, float b) { return std::abs(a) < std::abs(b); }));
      ASSERT_LE(std::abs(back[j] - row[j]), std::max(std::abs(row[j]) / 16, amax / 448 / 512) * 1.0001f) << j;
    }
  }
  for (const char* kept : {"model.layers.0.mlp.gate.weight", "model.embed_tokens.weight", "lm_head.weight",
                           "model.norm.weight"})
    EXPECT_EQ(source.find(kept)->dtype, DType::kBF16) << kept;
}

TEST(Fp8WeightSource, CheckpointOptionsFromConfig) {
  using json = nlohmann::json;
  EXPECT_FALSE(fp8_checkpoint_options(json::object()).has_value());
  EXPECT_FALSE(fp8_checkpoint_options(json::parse(R"({"quantization_config": {"quant_method": "mxfp4"}})")));
  const auto fp8 = fp8_checkpoint_options(
      json::parse(R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 256]}})"));
  ASSERT_TRUE(fp8.has_value());
  EXPECT_EQ(fp8->block_rows, 128);
  EXPECT_EQ(fp8->block_cols, 256);
  EXPECT_TRUE(fp8_checkpoint_options(json::parse(R"({"quantization_config": {"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}}})")));
  expect_error([] { fp8_checkpoint_options(json::parse(R"({"quantization_config": {"quant_method": "compressed-tensors",
      "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}}})")); }, {"group_0", "int", "8-bit float"});
  expect_error([] { fp8_checkpoint_options(json::parse(R"({"quantization_config": {"quant_method": "gptq"}})")); },
               {"gptq", "not supported"});
  expect_error([] { fp8_checkpoint_options(json::parse(
                        R"({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 64]}})")); },
               {"[128, 64]", "multiple of 128"});
}

}  // namespace
}  // namespace strata
