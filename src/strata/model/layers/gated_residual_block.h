// A Qwen4-Exp decoder block over gated hyper-connection streams (transformers'
// Qwen4ExpTextDecoderLayer): x is [T, n * hidden]; an optional per-layer embedding is added to
// the streams first; then the mixer and the feed-forward each read the streams mixed by their
// GatedResidual (no norm of their own) and inject their output back into every stream.
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/gated_residual.h"
#include "strata/model/layers/per_layer_embedding.h"

namespace strata {

class GatedResidualBlock final : public Layer {
 public:
  struct Parts {
    int64_t hidden_size = 0;
    std::unique_ptr<PerLayerEmbedding> ple;  // or null
    std::unique_ptr<GatedResidual> mixer_hc;
    std::unique_ptr<Mixer> mixer;
    std::unique_ptr<GatedResidual> ffn_hc;
    std::unique_ptr<Ffn> ffn;
  };
  explicit GatedResidualBlock(Parts parts) : parts_(std::move(parts)) {}
  LayerCaps caps() const override;
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  Parts parts_;
};

}  // namespace strata
