// What a backend cannot run is refused when the model is built, not mid-step: each op's
// check names the layer, the value and what is supported, for a CUDA device; the CPU takes
// every size. (The checks are pure functions of the device, so no GPU is needed here.)
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/ops/block_sparse_attention.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/moe.h"
#include "strata/ops/paged_attention.h"
#include "strata/ops/per_layer_embedding.h"
#include "strata/ops/ssd_scan.h"

namespace strata {
namespace {

const Device kGpu{DeviceType::kCuda, 0};
const Device kCpu{};

template <typename F> std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LayerLimits, AttentionHeadSizesWithoutACudaKernelAreRefused) {
  const std::string message =
      error_of([] { ops::check_paged_attention_supported(kGpu, 80, "model.layers.3.self_attn"); });
  EXPECT_NE(message.find("model.layers.3.self_attn"), std::string::npos) << message;
  EXPECT_NE(message.find("head size 80"), std::string::npos) << message;
  EXPECT_NE(message.find("32, 48, 64, 96, 128, 192, 256"), std::string::npos) << message;
  for (int64_t d : ops::kCudaAttentionHeadDims) EXPECT_NO_THROW(ops::check_paged_attention_supported(kGpu, d, "x"));
  EXPECT_NO_THROW(ops::check_paged_attention_supported(kCpu, 80, "x"));
}

TEST(LayerLimits, ConvKernelSizes) {
  EXPECT_NE(error_of([] { ops::check_causal_conv1d_supported(kGpu, 17, "model.layers.0.mixer"); }).find("at most 16"),
            std::string::npos);
  EXPECT_NO_THROW(ops::check_causal_conv1d_supported(kCpu, 17, "x"));
  EXPECT_NO_THROW(ops::check_causal_conv1d_supported(kGpu, 10, "x"));  // Qwen4-Exp's dilated PLE conv
  EXPECT_NO_THROW(ops::check_causal_conv1d_supported(kGpu, 4, "x"));
  EXPECT_THROW(ops::check_causal_conv1d_supported(kCpu, 1, "x"), Error);  // no backend takes it
}

// Qwen4-Exp: the CUDA n-gram kernel's fixed arrays and QSA's logits in shared memory.
TEST(LayerLimits, Qwen4ExpNgramsAndQsaBudget) {
  ops::NgramHash hash{.ngram_size = 3, .heads_per_ngram = 2};
  EXPECT_NO_THROW(ops::check_per_layer_embedding_supported(kGpu, hash, "x"));
  hash.ngram_size = 9;
  const std::string message =
      error_of([&] { ops::check_per_layer_embedding_supported(kGpu, hash, "model.layers.1.ple"); });
  EXPECT_NE(message.find("model.layers.1.ple: n-gram size 9"), std::string::npos) << message;
  EXPECT_NO_THROW(ops::check_per_layer_embedding_supported(kCpu, hash, "x"));
  hash = {.ngram_size = 3, .heads_per_ngram = 17};  // 34 heads
  EXPECT_THROW(ops::check_per_layer_embedding_supported(kGpu, hash, "x"), Error);
  EXPECT_NO_THROW(ops::check_block_sparse_attention_supported(kGpu, 8188, 4, "x"));
  EXPECT_NE(error_of([] { ops::check_block_sparse_attention_supported(kGpu, 8192, 4, "x"); }).find("at most 8192"),
            std::string::npos);
  EXPECT_NO_THROW(ops::check_block_sparse_attention_supported(kCpu, 1 << 20, 4, "x"));
}

TEST(LayerLimits, RecurrentStateSizes) {
  EXPECT_THROW(ops::check_gated_delta_rule_supported(kGpu, 96, "x"), Error);
  EXPECT_NO_THROW(ops::check_gated_delta_rule_supported(kGpu, 128, "x"));
  EXPECT_NO_THROW(ops::check_gated_delta_rule_supported(kCpu, 96, "x"));
  const std::string message = error_of([] { ops::check_ssd_scan_supported(kGpu, 64, 48, "model.layers.1.mixer"); });
  EXPECT_NE(message.find("ssm_state_size 48"), std::string::npos) << message;
  EXPECT_THROW(ops::check_ssd_scan_supported(kGpu, 512, 128, "x"), Error);
  EXPECT_NO_THROW(ops::check_ssd_scan_supported(kGpu, 64, 128, "x"));
  EXPECT_NO_THROW(ops::check_ssd_scan_supported(kCpu, 512, 48, "x"));
}

TEST(LayerLimits, ExpertShapes) {
  EXPECT_THROW(ops::check_experts_supported(kGpu, ops::kCudaMaxExperts + 1, 64, 64, "x"), Error);
  const std::string message = error_of([] { ops::check_experts_supported(kGpu, 8, 64, 36, "model.layers.2.mlp"); });
  EXPECT_NE(message.find("model.layers.2.mlp"), std::string::npos) << message;
  EXPECT_NO_THROW(ops::check_experts_supported(kGpu, 8, 64, 32, "x"));
  EXPECT_NO_THROW(ops::check_experts_supported(kCpu, 4096, 63, 36, "x"));
}

}  // namespace
}  // namespace strata
