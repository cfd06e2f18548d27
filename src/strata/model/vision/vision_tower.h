// The Qwen3.5 (Qwen3-VL family) vision tower: patch embedding (a linear over each flattened
// temporal patch), learned position embeddings resampled bilinearly to the image's grid, blocks of
// full attention within each image, and the merger (LayerNorm, then each merge x merge block of
// patches through a GELU MLP into the text model's width). CPU: f32; GPU: bf16 on its own stream.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/model/vision/vision_block.h"
#include "strata/model/vision/vision_grid.h"

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
  // w: the tower's scope (model.visual), loaded on `backend`. On a GPU the tower makes a stream of
  // its own (a second backend on the device), so request threads encode while the engine steps.
  VisionTower(const VisionTowerOptions& options, const WeightScope& w, Backend& backend);
  ~VisionTower();

  // pixel_values: [P, patch_dim()] f32 host, patches in the processor's order; grid_thw: patches
  // per (frame, row, column). Returns [P / merge², out_hidden_size] f32 host. Any thread; encodes
  // run one at a time. On a GPU it leaves the tower's stream current on the calling thread
  // (whoever runs the model next calls its backend's make_current(), as ModelRunner does).
  Tensor encode(const Tensor& pixel_values, const std::array<int32_t, 3>& grid_thw) const;
  const VisionTowerOptions& options() const { return options_; }

 private:
  template <typename T>
  Tensor upload(std::vector<T>& values, DType dtype, Shape shape) const;
  Tensor to_activations(const Tensor& host_f32) const;
  Tensor position_embeddings(VisionGrid& grid) const;
  VisionPatches patches_of(VisionGrid& grid) const;
  Tensor merge(const Tensor& x) const;

  VisionTowerOptions options_;
  std::unique_ptr<Backend> own_backend_;  // the GPU tower's stream; null on the CPU
  Backend& backend_;                      // where encode runs: own_backend_, or the CPU backend
  DType activation_dtype_;                // f32 on the CPU, bf16 on a GPU
  mutable std::mutex encode_mutex_;       // guards the workspaces; one encode at a time
  // Kept between encodes, so device memory is allocated only when an image is the largest yet.
  mutable Workspace image_workspace_;     // the image's activations and metadata, reset per encode
  mutable Workspace block_workspace_;     // one block's temporaries, reset per block
  // Linear weights widened to bf16 on a GPU; position table and norms f32.
  Tensor patch_embed_, patch_bias_;  // [hidden, patch_dim], [hidden]
  Tensor pos_embed_;                 // [num_position_embeddings, hidden] f32
  std::vector<float> inv_freq_;      // [head_dim / 2]: rows' frequencies then the same for columns
  std::vector<VisionBlock> blocks_;
  LayerNormWeights merger_norm_;
  Tensor merger_fc1_, merger_fc1_bias_;  // [4 hidden, 4 hidden], [4 hidden] for merge 2
  Tensor merger_fc2_, merger_fc2_bias_;  // [out_hidden, 4 hidden], [out_hidden]
};

}  // namespace strata
