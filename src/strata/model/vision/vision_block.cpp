#include "strata/model/vision/vision_block.h"

#include <cmath>

#include "strata/core/error.h"

#include "strata/ops/elementwise.h"
#include "strata/ops/layer_norm.h"
#include "strata/ops/linear.h"

namespace strata {

LayerNormWeights layer_norm_weights(const WeightScope& w, int64_t dim) {
  return {w.get_f32("weight", {dim}), w.get_f32("bias", {dim})};
}

VisionBlock::VisionBlock(const VisionBlockOptions& options, const WeightScope& w) : options_(options) {
  const int64_t d = options.hidden_size, inter = options.intermediate_size;
  if (options.num_heads < 1 || d % options.num_heads != 0 || (d / options.num_heads) % 4 != 0)
    fail("{}: vision hidden_size {} over num_heads {} must give a head size divisible by 4 (2-D rotary)",
         w.prefix(), d, options.num_heads);
  ops::check_varlen_attention_supported(w.device(), d / options.num_heads, w.prefix());
  norm1_ = layer_norm_weights(w.scope("norm1"), d);
  norm2_ = layer_norm_weights(w.scope("norm2"), d);
  qkv_ = w.get_widened("attn.qkv.weight", {3 * d, d});
  qkv_bias_ = w.get_widened("attn.qkv.bias", {3 * d});
  proj_ = w.get_widened("attn.proj.weight", {d, d});
  proj_bias_ = w.get_widened("attn.proj.bias", {d});
  fc1_ = w.get_widened("mlp.linear_fc1.weight", {inter, d});
  fc1_bias_ = w.get_widened("mlp.linear_fc1.bias", {inter});
  fc2_ = w.get_widened("mlp.linear_fc2.weight", {d, inter});
  fc2_bias_ = w.get_widened("mlp.linear_fc2.bias", {d});
}

// q, k and v from row slices of the fused projection, so each is contiguous [P, H, head_dim].
void VisionBlock::attention(const Tensor& h, const VisionPatches& patches, const Tensor& out,
                            Workspace& scratch) const {
  const int64_t p = h.dim(0), d = options_.hidden_size, heads = options_.num_heads, hd = d / heads;
  Tensor qkv[3];
  for (int64_t i = 0; i < 3; ++i) {
    qkv[i] = scratch.alloc(h.dtype(), {p, heads, hd});
    ops::linear(h, qkv_.slice_rows(i * d, (i + 1) * d), qkv_bias_.slice_rows(i * d, (i + 1) * d),
                qkv[i].reshape({p, d}));
  }
  ops::rope(qkv[0], qkv[1], patches.rope_positions, patches.inv_freq, patches.rope);
  Tensor attn = scratch.alloc(h.dtype(), {p, heads, hd});
  ops::varlen_attention(qkv[0], qkv[1], qkv[2], patches.segments, 1.0f / std::sqrt(static_cast<float>(hd)), attn);
  ops::linear(attn.reshape({p, d}), proj_, proj_bias_, out);
}

void VisionBlock::forward(const Tensor& x, const VisionPatches& patches, Workspace& scratch) const {
  const int64_t p = x.dim(0), d = options_.hidden_size;
  Tensor h = scratch.alloc(x.dtype(), {p, d}), delta = scratch.alloc(x.dtype(), {p, d});
  ops::layer_norm(x, norm1_.weight, norm1_.bias, options_.norm_eps, h);
  attention(h, patches, delta, scratch);
  ops::add(x, delta);
  ops::layer_norm(x, norm2_.weight, norm2_.bias, options_.norm_eps, h);
  Tensor mid = scratch.alloc(x.dtype(), {p, options_.intermediate_size});
  ops::linear(h, fc1_, fc1_bias_, mid);
  ops::activation(mid, mid, options_.act);
  ops::linear(mid, fc2_, fc2_bias_, delta);
  ops::add(x, delta);
}

}  // namespace strata
