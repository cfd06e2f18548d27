// The Qwen3.5 (Qwen3-VL family) vision tower on the CPU backend: patch embedding (a linear over
// each flattened temporal patch), learned position embeddings resampled bilinearly to the image's
// grid, blocks of full attention within each image, and the merger (LayerNorm, then each
// merge x merge block of patches through a GELU MLP into the text model's width).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/model/vision/vision_block.h"

namespace strata {

struct VisionTowerOptions {
  VisionBlockOptions block;
  int64_t depth = 0;
  int64_t in_channels = 3;
  int64_t patch_size = 16;
  int64_t temporal_patch_size = 2;
  int64_t spatial_merge_size = 2;
  int64_t out_hidden_size = 0;
  int64_t num_position_embeddings = 0;  // a square grid of side sqrt(this)
  double rope_theta = 10000.0;

  int64_t patch_dim() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
};

// From config.json's vision_config (transformers' Qwen3_5VisionConfig defaults where absent).
VisionTowerOptions vision_tower_options(const nlohmann::json& vision_config);

class VisionTower {
 public:
  // w: the tower's scope (model.visual); its temporaries come from `backend` (the CPU).
  VisionTower(const VisionTowerOptions& options, const WeightScope& w, Backend& backend);

  // pixel_values: [P, patch_dim()] f32 host, patches in the processor's order; grid_thw: patches
  // per (frame, row, column). Returns [P / merge², out_hidden_size] f32 host.
  Tensor encode(const Tensor& pixel_values, const std::array<int32_t, 3>& grid_thw) const;
  const VisionTowerOptions& options() const { return options_; }

 private:
  VisionPatches patches_of(const std::array<int32_t, 3>& grid_thw, Tensor& pos_embeds) const;
  Tensor merge(const Tensor& x) const;

  VisionTowerOptions options_;
  Backend& backend_;
  Tensor patch_embed_, patch_bias_;  // [hidden, patch_dim], [hidden]
  Tensor pos_embed_;                 // [num_position_embeddings, hidden] f32
  std::vector<float> inv_freq_;      // [head_dim / 2]: rows' frequencies then the same for columns
  std::vector<VisionBlock> blocks_;
  LayerNormWeights merger_norm_;
  Tensor merger_fc1_, merger_fc1_bias_;  // [4 hidden, 4 hidden], [4 hidden] for merge 2
  Tensor merger_fc2_, merger_fc2_bias_;  // [out_hidden, 4 hidden], [out_hidden]
};

}  // namespace strata
