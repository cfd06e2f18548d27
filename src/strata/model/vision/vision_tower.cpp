#include "strata/model/vision/vision_tower.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/vision/vision_grid.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding_bag.h"
#include "strata/ops/layer_norm.h"
#include "strata/ops/linear.h"

namespace strata {
namespace {

Tensor host_copy(Backend& backend, const void* data, DType dtype, Shape shape) {
  Tensor out = backend.empty(dtype, shape);
  std::memcpy(out.data(), data, out.nbytes());
  return out;
}

}  // namespace

VisionTowerOptions vision_tower_options(const nlohmann::json& c) {
  VisionTowerOptions o;
  o.block = {.hidden_size = c.value("hidden_size", int64_t{1152}),
             .intermediate_size = c.value("intermediate_size", int64_t{4304}),
             .num_heads = c.value("num_heads", int64_t{16}),
             .act = ops::parse_activation(c.value("hidden_act", std::string("gelu_pytorch_tanh")))};
  o.depth = c.value("depth", int64_t{27});
  o.in_channels = c.value("in_channels", int64_t{3});
  o.patch_size = c.value("patch_size", int64_t{16});
  o.temporal_patch_size = c.value("temporal_patch_size", int64_t{2});
  o.spatial_merge_size = c.value("spatial_merge_size", int64_t{2});
  o.out_hidden_size = c.value("out_hidden_size", int64_t{3584});
  o.num_position_embeddings = c.value("num_position_embeddings", int64_t{2304});
  if (c.contains("rope_parameters") && c["rope_parameters"].is_object())
    o.rope_theta = c["rope_parameters"].value("rope_theta", 10000.0);
  const auto side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(o.num_position_embeddings))));
  if (side * side != o.num_position_embeddings || o.depth < 1 || o.spatial_merge_size < 1)
    fail("vision_config: num_position_embeddings {} must be a square, depth {} and spatial_merge_size {} positive",
         o.num_position_embeddings, o.depth, o.spatial_merge_size);
  return o;
}

VisionTower::VisionTower(const VisionTowerOptions& options, const WeightScope& w, Backend& backend)
    : options_(options), backend_(backend) {
  const int64_t d = options.block.hidden_size, t = options.temporal_patch_size, p = options.patch_size;
  const int64_t merged = d * options.spatial_merge_size * options.spatial_merge_size;
  patch_embed_ = w.get("patch_embed.proj.weight", {d, options.in_channels, t, p, p}).reshape({d, options.patch_dim()});
  patch_bias_ = w.get("patch_embed.proj.bias", {d});
  pos_embed_ = w.get_f32("pos_embed.weight", {options.num_position_embeddings, d});
  for (int64_t i = 0; i < options.depth; ++i) blocks_.emplace_back(options.block, w.scope(fmt::format("blocks.{}", i)));
  merger_norm_ = layer_norm_weights(w.scope("merger.norm"), d);
  merger_fc1_ = w.get("merger.linear_fc1.weight", {merged, merged});
  merger_fc1_bias_ = w.get("merger.linear_fc1.bias", {merged});
  merger_fc2_ = w.get("merger.linear_fc2.weight", {options.out_hidden_size, merged});
  merger_fc2_bias_ = w.get("merger.linear_fc2.bias", {options.out_hidden_size});
  // transformers' axial rotary: head_dim / 4 frequencies over head_dim / 2, used for rows and columns.
  const int64_t spatial = d / options.block.num_heads / 2;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (int64_t i = 0; i < spatial; i += 2)
      inv_freq_.push_back(static_cast<float>(
          1.0 / std::pow(options.rope_theta, static_cast<double>(static_cast<float>(i) / static_cast<float>(spatial)))));
}

// Rotary positions, segments and the resampled position embeddings [P, hidden] of one image.
VisionPatches VisionTower::patches_of(const std::array<int32_t, 3>& grid_thw, Tensor& pos_embeds) const {
  const auto side = static_cast<int32_t>(std::lround(std::sqrt(static_cast<double>(options_.num_position_embeddings))));
  VisionGrid grid = vision_grid(grid_thw, static_cast<int32_t>(options_.spatial_merge_size), side);
  const auto p = static_cast<int64_t>(grid.rows.size());
  std::vector<int32_t> streams = grid.rows;
  streams.insert(streams.end(), grid.cols.begin(), grid.cols.end());
  streams.resize(3 * p, 0);
  const Tensor taps = host_copy(backend_, grid.taps.data(), DType::kI32, {p, 4});
  const Tensor weights = host_copy(backend_, grid.tap_weights.data(), DType::kF32, {p, 4});
  ops::embedding_bag(pos_embed_, taps, weights, pos_embeds);
  const auto quarter = static_cast<int32_t>(inv_freq_.size() / 2);
  return {.rope_positions = host_copy(backend_, streams.data(), DType::kI32, {3, p}),
          .inv_freq = host_copy(backend_, inv_freq_.data(), DType::kF32, {static_cast<int64_t>(inv_freq_.size())}),
          .rope = {.rotary_dim = 2 * static_cast<int64_t>(inv_freq_.size()),
                   .mrope = {.section = {quarter, quarter, 0}, .interleaved = false}},
          .cu_seqlens = std::move(grid.cu_seqlens)};
}

// x: [P, hidden] -> [P / merge², out_hidden]: each merge block's patches side by side.
Tensor VisionTower::merge(const Tensor& x) const {
  const int64_t merged = merger_fc1_.dim(0), rows = x.numel() / merged;
  ops::layer_norm(x, merger_norm_.weight, merger_norm_.bias, options_.block.norm_eps, x);
  Tensor mid = backend_.empty(DType::kF32, {rows, merged});
  ops::linear(x.reshape({rows, merged}), merger_fc1_, merger_fc1_bias_, mid);
  ops::activation(mid, mid, ops::Activation::kGelu);  // nn.GELU(): the erf form
  Tensor out = backend_.empty(DType::kF32, {rows, options_.out_hidden_size});
  ops::linear(mid, merger_fc2_, merger_fc2_bias_, out);
  return out;
}

Tensor VisionTower::encode(const Tensor& pixel_values, const std::array<int32_t, 3>& grid_thw) const {
  const int64_t p = static_cast<int64_t>(grid_thw[0]) * grid_thw[1] * grid_thw[2], d = options_.block.hidden_size;
  if (pixel_values.rank() != 2 || pixel_values.dim(0) != p || pixel_values.dim(1) != options_.patch_dim() ||
      pixel_values.dtype() != DType::kF32)
    fail("pixel values {} do not fit the grid {}x{}x{}: expected [{}, {}] f32", pixel_values.shape().str(),
         grid_thw[0], grid_thw[1], grid_thw[2], p, options_.patch_dim());
  Tensor x = backend_.empty(DType::kF32, {p, d}), pos_embeds = backend_.empty(DType::kF32, {p, d});
  ops::linear(pixel_values, patch_embed_, patch_bias_, x);
  const VisionPatches patches = patches_of(grid_thw, pos_embeds);
  ops::add(x, pos_embeds);
  for (const VisionBlock& block : blocks_) block.forward(x, patches, backend_);
  return merge(x);
}

}  // namespace strata
