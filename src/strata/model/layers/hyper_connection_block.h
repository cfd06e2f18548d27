// A decoder block over hyper-connection streams (DeepSeek-V4): x is [T, n * hidden]; each
// sublayer reads the streams collapsed by its HyperConnection, normed, and its output expands
// back into the mixed streams. No residual add of its own: the expansion carries it. The streams
// and their HyperConnections are whole on every rank; the block splits when its mixer and ffn do.
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/hyper_connection.h"
#include "strata/model/layers/norm.h"

namespace strata {

class HyperConnectionBlock final : public Layer {
 public:
  struct Parts {
    int64_t hidden_size = 0;
    std::unique_ptr<HyperConnection> mixer_hc;
    RmsNorm mixer_norm;  // [hidden]
    std::unique_ptr<Mixer> mixer;
    std::unique_ptr<HyperConnection> ffn_hc;
    RmsNorm ffn_norm;  // [hidden]
    std::unique_ptr<Ffn> ffn;
  };
  explicit HyperConnectionBlock(Parts parts) : parts_(std::move(parts)) {}
  LayerCaps caps() const override;
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  Parts parts_;
};

}  // namespace strata
