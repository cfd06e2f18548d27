// The first decoder layer of an EAGLE-3 head (vLLM's llama_eagle3 layer 0, "midlayer"). Each token joins its
// embedding (the residual stream x on entry) with the hidden state the step carries
// (input_hidden_states): the target's auxiliary states [T, 3 * target_hidden], which fc projects to
// hidden, or the head's own pre-norm output [T, hidden] when drafts are chained:
//   g = fc(aux) or the state;  r = g + attn([input_norm(x), hidden_norm(g)]);  x = r + mlp(post_norm(r))
#pragma once

#include <memory>

#include "strata/model/layer.h"
#include "strata/model/layers/norm.h"

namespace strata {

class Eagle3Block final : public Layer {
 public:
  struct Parts {
    Tensor fc;                   // [hidden, 3 * target_hidden]
    RmsNorm input_norm;          // [hidden], on the embedding
    RmsNorm hidden_norm;         // [hidden], on g
    bool norm_before_residual = false;  // the residual is hidden_norm(g) rather than g (config.json)
    std::unique_ptr<Mixer> attention;   // q, k, v take [T, 2 * hidden]
    RmsNorm post_attention_norm;        // [hidden]
    std::unique_ptr<Ffn> mlp;
  };
  explicit Eagle3Block(Parts parts) : parts_(std::move(parts)) {}

  LayerCaps caps() const override { return parts_.attention->caps(); }
  // x: [T, hidden] the tokens' embeddings -> the stream later layers add to (the pre-norm output of a
  // one-layer head).
  void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const override;

 private:
  // g: the fc'd auxiliary states or the chained state, [T, hidden].
  Tensor combined_input(const StepBatch& step, ForwardContext& ctx) const;

  Parts parts_;
};

}  // namespace strata
