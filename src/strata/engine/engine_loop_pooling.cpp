// Pooling requests in the engine loop: their prompts run as prefill chunks like any other,
// their rows' outputs (hidden states or classifier scores) come to the host, and the row that
// completes the prompt finishes the request with the pooled vector. Nothing is sampled, and
// finishing frees the sequence's blocks as for any request.
#include "strata/engine/engine_loop.h"

namespace strata {

void EngineLoop::add_pooled_rows(Sequence& seq, const StepRow& row, const Tensor& outputs, int64_t first_output) {
  const PoolerConfig& pooler = *parts_.runner.model().config().pooler;
  const int64_t num_rows = row.logits == LogitsMode::kAll ? row.q_len() : 1;
  const Tensor host = parts_.runner.backend().to_host(outputs.slice_rows(first_output, first_output + num_rows));
  const int32_t first_position = row.num_computed_tokens + row.q_len() - static_cast<int32_t>(num_rows);
  if (first_position == 0) seq.pooling = {};  // a recompute after preemption starts over
  pool_rows(pooler, {host.data_as<const float>(), static_cast<size_t>(host.numel())}, host.dim(1), first_position,
            seq.pooling);
  if (seq.num_computed_tokens < seq.num_tokens()) return;  // a chunk short of the prompt's end
  output_.set_pooled(seq, finish_pooling(pooler, seq.pooling, seq.request->request.pooling->dimensions));
  finish(seq, FinishReason::kStop, std::nullopt);
}

}  // namespace strata
