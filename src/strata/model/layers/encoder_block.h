// EncoderBlock: BERT's post-norm block. x = norm(x + mixer(x)); x = ffn_norm(x + ffn(x)).
// The mixer is bidirectional attention, so the block is not causal (LayerCaps::causal).
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/layer_norm.h"

namespace strata {

class EncoderBlock final : public Layer {
 public:
  struct Parts {
    std::unique_ptr<Mixer> mixer;
    LayerNorm mixer_norm;  // on x + mixer(x)
    std::unique_ptr<Ffn> ffn;
    LayerNorm ffn_norm;    // on x + ffn(x)
  };
  explicit EncoderBlock(Parts parts) : parts_(std::move(parts)) {}

  LayerCaps caps() const override { return parts_.mixer->caps(); }
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  Parts parts_;
};

}  // namespace strata
