// One block of a Qwen-VL vision tower: pre-LayerNorm attention over each image's patches (no
// mask inside an image, nothing across images) with 2-D rotary positions, then a pre-LayerNorm
// MLP, each added to the residual. Weights as transformers names them under blocks.<i>;
// activations f32 on the CPU, bf16 on a GPU (the dtype of x), f32 math inside every op.
#pragma once

#include <vector>

#include "strata/model/model_weights.h"
#include "strata/model/workspace.h"
#include "strata/ops/activation.h"
#include "strata/ops/rope.h"
#include "strata/ops/varlen_attention.h"

namespace strata {

struct VisionBlockOptions {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_heads = 0;
  ops::Activation act = ops::Activation::kGeluTanh;
  float norm_eps = 1e-6f;
};

// What every block of one image shares: rotary positions and attention segments.
struct VisionPatches {
  Tensor rope_positions;           // [3, P] i32: grid row, grid column, unused
  Tensor inv_freq;                 // [head_dim / 2] f32: the axial frequencies, rows' then columns'
  ops::RopeParams rope;            // rotary over the whole head, rows then columns
  ops::VarlenSegments segments;    // one attention segment per frame
};

struct LayerNormWeights {
  Tensor weight, bias;  // [D] f32 each
};

class VisionBlock {
 public:
  VisionBlock(const VisionBlockOptions& options, const WeightScope& w);
  // x: [P, hidden] f32 or bf16, updated in place; temporaries from `scratch` (reset by the caller).
  void forward(const Tensor& x, const VisionPatches& patches, Workspace& scratch) const;

 private:
  void attention(const Tensor& h, const VisionPatches& patches, const Tensor& out, Workspace& scratch) const;

  VisionBlockOptions options_;
  LayerNormWeights norm1_, norm2_;
  // Linear weights widened to bf16 on a GPU (never a quantized kernel's shared scratch):
  Tensor qkv_, qkv_bias_;    // [3 hidden, hidden], [3 hidden]: q | k | v rows
  Tensor proj_, proj_bias_;  // [hidden, hidden], [hidden]
  Tensor fc1_, fc1_bias_;    // [intermediate, hidden], [intermediate]
  Tensor fc2_, fc2_bias_;    // [hidden, intermediate], [hidden]
};

LayerNormWeights layer_norm_weights(const WeightScope& w, int64_t dim);

}  // namespace strata
