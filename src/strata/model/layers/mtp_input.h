// The input stage of a multi-token-prediction (MTP) module, as vLLM's Qwen3NextMultiTokenPredictor
// runs it: the embedding of token t + 1 and the target's hidden state at position t, each
// RMS-normed, joined as [embedding, hidden] and projected back to the model's width by fc.
#pragma once

#include "strata/model/forward_context.h"
#include "strata/model/layers/norm.h"

namespace strata {

struct MtpInput {
  RmsNorm embedding_norm;  // pre_fc_norm_embedding [hidden]
  RmsNorm hidden_norm;     // pre_fc_norm_hidden [hidden]
  Tensor fc;               // [hidden, 2 * hidden]

  bool defined() const { return fc.defined(); }
  // x: [T, hidden] the tokens' embeddings, replaced in place by the module's input.
  // hidden: [T, hidden] activation dtype, the target's (or the previous MTP step's) states.
  void apply(const Tensor& hidden, const Tensor& x, ForwardContext& ctx) const;
};

}  // namespace strata
