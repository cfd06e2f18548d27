#include "strata/model/vision/vision_tower.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding_bag.h"
#include "strata/ops/layer_norm.h"
#include "strata/ops/linear.h"

namespace strata {
namespace {

// A GPU tower's own stream; creating it makes it current, so the caller's stream is restored.
std::unique_ptr<Backend> side_backend(Backend& backend) {
  if (backend.device().is_cpu()) return nullptr;
  std::unique_ptr<Backend> side = make_cuda_backend(backend.device().index);
  STRATA_CHECK_MSG(side != nullptr, "no second stream on the device that holds the vision tower");
  backend.make_current();
  return side;
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
    : options_(options),
      own_backend_(side_backend(backend)),
      backend_(own_backend_ ? *own_backend_ : backend),
      activation_dtype_(backend.device().is_cpu() ? DType::kF32 : DType::kBF16),
      image_workspace_(backend_),
      block_workspace_(backend_) {
  const int64_t d = options.block.hidden_size, t = options.temporal_patch_size, p = options.patch_size;
  const int64_t merged = d * options.spatial_merge_size * options.spatial_merge_size;
  patch_embed_ = w.get_widened("patch_embed.proj.weight", {d, options.in_channels, t, p, p}).reshape({d, options.patch_dim()});
  patch_bias_ = w.get_widened("patch_embed.proj.bias", {d});
  pos_embed_ = w.get_f32("pos_embed.weight", {options.num_position_embeddings, d});
  for (int64_t i = 0; i < options.depth; ++i) blocks_.emplace_back(options.block, w.scope(fmt::format("blocks.{}", i)));
  merger_norm_ = layer_norm_weights(w.scope("merger.norm"), d);
  merger_fc1_ = w.get_widened("merger.linear_fc1.weight", {merged, merged});
  merger_fc1_bias_ = w.get_widened("merger.linear_fc1.bias", {merged});
  merger_fc2_ = w.get_widened("merger.linear_fc2.weight", {options.out_hidden_size, merged});
  merger_fc2_bias_ = w.get_widened("merger.linear_fc2.bias", {options.out_hidden_size});
  // transformers' axial rotary: head_dim / 4 frequencies over head_dim / 2, used for rows and columns.
  const int64_t spatial = d / options.block.num_heads / 2;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (int64_t i = 0; i < spatial; i += 2)
      inv_freq_.push_back(static_cast<float>(
          1.0 / std::pow(options.rope_theta, static_cast<double>(static_cast<float>(i) / static_cast<float>(spatial)))));
  backend.synchronize();  // the weights' copies (on the model's stream) land before the tower's stream reads them
}

VisionTower::~VisionTower() = default;

template <typename T>
Tensor VisionTower::upload(std::vector<T>& values, DType dtype, Shape shape) const {
  Tensor out = image_workspace_.alloc(dtype, shape);
  backend_.copy(out, Tensor::view(values.data(), dtype, shape));
  return out;
}

// An f32 host tensor as activations on the tower's backend.
Tensor VisionTower::to_activations(const Tensor& host_f32) const {
  if (backend_.device().is_cpu()) return host_f32;
  const Tensor f32 = image_workspace_.alloc(DType::kF32, host_f32.shape());
  backend_.copy(f32, host_f32);
  Tensor out = image_workspace_.alloc(activation_dtype_, host_f32.shape());
  ops::convert(f32, out);
  return out;
}

// [P, hidden]: the learned table resampled at each patch's 4 bilinear taps.
Tensor VisionTower::position_embeddings(VisionGrid& grid) const {
  const auto p = static_cast<int64_t>(grid.rows.size());
  const Tensor taps = upload(grid.taps, DType::kI32, {p, 4});
  const Tensor weights = upload(grid.tap_weights, DType::kF32, {p, 4});
  Tensor sums = image_workspace_.alloc(DType::kF32, {p, options_.block.hidden_size});
  ops::embedding_bag(pos_embed_, taps, weights, sums);
  if (activation_dtype_ == DType::kF32) return sums;
  Tensor out = image_workspace_.alloc(activation_dtype_, sums.shape());
  ops::convert(sums, out);
  return out;
}

// Rotary positions and attention segments of one image, on the tower's backend.
VisionPatches VisionTower::patches_of(VisionGrid& grid) const {
  const auto p = static_cast<int64_t>(grid.rows.size());
  std::vector<int32_t> streams = grid.rows;
  streams.insert(streams.end(), grid.cols.begin(), grid.cols.end());
  streams.resize(3 * p, 0);
  std::vector<float> inv_freq = inv_freq_;
  int64_t max_seqlen = 0;
  for (size_t s = 1; s < grid.cu_seqlens.size(); ++s)
    max_seqlen = std::max<int64_t>(max_seqlen, grid.cu_seqlens[s] - grid.cu_seqlens[s - 1]);
  const auto quarter = static_cast<int32_t>(inv_freq_.size() / 2);
  return {.rope_positions = upload(streams, DType::kI32, {3, p}),
          .inv_freq = upload(inv_freq, DType::kF32, {static_cast<int64_t>(inv_freq.size())}),
          .rope = {.rotary_dim = 2 * static_cast<int64_t>(inv_freq_.size()),
                   .mrope = {.section = {quarter, quarter, 0}, .interleaved = false}},
          .segments = {.cu_seqlens = upload(grid.cu_seqlens, DType::kI32,
                                            {static_cast<int64_t>(grid.cu_seqlens.size())}),
                       .max_seqlen = max_seqlen}};
}

// x: [P, hidden] -> [P / merge², out_hidden]: each merge block's patches side by side.
Tensor VisionTower::merge(const Tensor& x) const {
  const int64_t merged = merger_fc1_.dim(0), rows = x.numel() / merged;
  ops::layer_norm(x, merger_norm_.weight, merger_norm_.bias, options_.block.norm_eps, x);
  Tensor mid = image_workspace_.alloc(x.dtype(), {rows, merged});
  ops::linear(x.reshape({rows, merged}), merger_fc1_, merger_fc1_bias_, mid);
  ops::activation(mid, mid, ops::Activation::kGelu);  // nn.GELU(): the erf form
  Tensor out = image_workspace_.alloc(DType::kF32, {rows, options_.out_hidden_size});
  ops::linear(mid, merger_fc2_, merger_fc2_bias_, out);
  return out;
}

Tensor VisionTower::encode(const Tensor& pixel_values, const std::array<int32_t, 3>& grid_thw) const {
  const int64_t p = static_cast<int64_t>(grid_thw[0]) * grid_thw[1] * grid_thw[2], d = options_.block.hidden_size;
  if (pixel_values.rank() != 2 || pixel_values.dim(0) != p || pixel_values.dim(1) != options_.patch_dim() ||
      pixel_values.dtype() != DType::kF32 || !pixel_values.device().is_cpu())
    fail("pixel values {} do not fit the grid {}x{}x{}: expected [{}, {}] f32 on the host", pixel_values.shape().str(),
         grid_thw[0], grid_thw[1], grid_thw[2], p, options_.patch_dim());
  const auto side = static_cast<int32_t>(std::lround(std::sqrt(static_cast<double>(options_.num_position_embeddings))));
  VisionGrid grid = vision_grid(grid_thw, static_cast<int32_t>(options_.spatial_merge_size), side);
  const std::lock_guard<std::mutex> lock(encode_mutex_);  // GEMM plans and the stream are shared
  backend_.make_current();
  image_workspace_.reset();
  Tensor x = image_workspace_.alloc(activation_dtype_, {p, d});
  ops::linear(to_activations(pixel_values), patch_embed_, patch_bias_, x);
  ops::add(x, position_embeddings(grid));
  const VisionPatches patches = patches_of(grid);
  for (const VisionBlock& block : blocks_) {
    block_workspace_.reset();
    block.forward(x, patches, block_workspace_);
  }
  return backend_.to_host(merge(x));  // waits for the tower's stream
}

}  // namespace strata
