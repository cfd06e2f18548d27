#include "strata/weights/fp8.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "strata/core/error.h"
#include "strata/weights/quant_blocks.h"

namespace strata {

WeightQuantization parse_weight_quantization(std::string_view name) {
  if (name.empty() || name == "none") return WeightQuantization::kNone;
  if (name == "fp8") return WeightQuantization::kFp8;
  fail("--quantization '{}' is not supported; use fp8 (FP8 checkpoints load without it)", name);
}

namespace {

// The module a weight belongs to: "model.layers.0.mlp.gate.weight" -> "gate".
std::string_view module_of(std::string_view name) {
  name.remove_suffix(std::string_view(".weight").size());
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

}  // namespace

bool fp8_quantizable(std::string_view name, const Shape& shape) {
  if (shape.rank != 2 || shape[1] % kFp8Block != 0 || !name.ends_with(".weight")) return false;
  // Routers ("gate" in Qwen/Mixtral/Nemotron MoE blocks, "router" in gpt-oss) pick experts:
  // their logits stay exact. Embedding tables are gathered, not multiplied.
  static constexpr std::array<std::string_view, 7> kKept = {"gate", "router", "shared_expert_gate", "embed_tokens",
                                                            "lm_head", "embeddings", "wte"};
  const std::string_view module = module_of(name);
  return std::find(kKept.begin(), kKept.end(), module) == kKept.end();
}

void quantize_row_fp8_b128(const float* src, int64_t k, void* dst) {
  STRATA_CHECK(k % kFp8Block == 0);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t b = 0; b < k / kFp8Block; ++b) {
    const float* x = src + b * kFp8Block;
    float amax = 0.f;
    for (int j = 0; j < kFp8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
    BlockF8B128 block;
    block.d = amax / 448.f;
    for (int j = 0; j < kFp8Block; ++j) block.qs[j] = block.d > 0.f ? f32_to_fp8_e4m3(x[j] / block.d) : 0;
    std::memcpy(out + b * sizeof(BlockF8B128), &block, sizeof(block));
  }
}

}  // namespace strata
