// EncoderBlock: an encoder's block around bidirectional attention (LayerCaps::causal is false).
// Post-norm (BERT): x = norm(x + mixer(x)); x = ffn_norm(x + ffn(x)). Pre-norm (ModernBERT):
// x += mixer(norm(x)) (no norm where mixer_norm is undefined: its first layer); x += ffn(ffn_norm(x)).
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/layer_norm.h"

namespace strata {

class EncoderBlock final : public Layer {
 public:
  struct Parts {
    std::unique_ptr<Mixer> mixer;
    LayerNorm mixer_norm;  // post-norm: on x + mixer(x); pre-norm: on the mixer's input, or undefined
    std::unique_ptr<Ffn> ffn;
    LayerNorm ffn_norm;    // post-norm: on x + ffn(x); pre-norm: on the ffn's input
    bool pre_norm = false;
  };
  explicit EncoderBlock(Parts parts) : parts_(std::move(parts)) {}

  LayerCaps caps() const override { return parts_.mixer->caps(); }
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  void forward_pre_norm(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;

  Parts parts_;
};

}  // namespace strata
