// DecoderBlock: the generic pre-norm block. x += mixer(norm(x)); x += ffn(norm2(x)).
// Either part may be absent (Nemotron-H layers hold one of them); Gemma-style blocks add
// norms on the outputs of both parts.
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/norm.h"

namespace strata {

class DecoderBlock final : public Layer {
 public:
  struct Parts {
    RmsNorm input_norm;                // before the mixer
    std::unique_ptr<Mixer> mixer;      // may be null
    RmsNorm post_mixer_norm;           // on the mixer output (Gemma), optional
    RmsNorm pre_ffn_norm;              // before the ffn
    std::unique_ptr<Ffn> ffn;          // may be null
    RmsNorm post_ffn_norm;             // on the ffn output (Gemma), optional
  };
  explicit DecoderBlock(Parts parts) : parts_(std::move(parts)) {}

  LayerCaps caps() const override;
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  Parts parts_;
};

}  // namespace strata
