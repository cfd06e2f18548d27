#include "strata/engine/offline_generate.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

std::vector<int32_t> generate_offline(ModelRunner& runner, const OfflineGenerateRequest& request,
                                      const std::function<bool(int32_t)>& on_token) {
  if (request.prompt_ids.empty()) fail("the prompt is empty; give at least one token");
  const int64_t max_len = runner.model().config().max_position_embeddings;
  if (static_cast<int64_t>(request.prompt_ids.size()) >= max_len)
    fail("the prompt has {} tokens; the model's context is {}", request.prompt_ids.size(), max_len);
  DirectSession session(runner);
  const int64_t id = session.add_sequence();
  Sampler sampler(request.sampling);
  std::vector<int32_t> output;
  size_t fed = 0;
  Tensor logits;
  while (fed < request.prompt_ids.size()) {  // prefill, in chunks if asked
    size_t n = request.prompt_ids.size() - fed;
    if (request.prefill_chunk > 0) n = std::min<size_t>(n, request.prefill_chunk);
    logits = session.step({{.seq_id = id, .token_ids = {request.prompt_ids.begin() + fed,
                                                         request.prompt_ids.begin() + fed + n}}})[0];
    fed += n;
  }
  while (static_cast<int32_t>(output.size()) < request.max_tokens &&
         session.num_tokens(id) < max_len) {
    std::span<float> row(logits.data_as<float>(), static_cast<size_t>(logits.dim(1)));
    const int32_t token = sampler.sample(row, request.prompt_ids, output).token_id;
    output.push_back(token);
    const bool is_stop = std::find(request.stop_token_ids.begin(), request.stop_token_ids.end(),
                                   token) != request.stop_token_ids.end();
    if (on_token && !on_token(token)) break;
    if (is_stop && !request.ignore_eos) break;
    if (static_cast<int32_t>(output.size()) == request.max_tokens) break;
    logits = session.step({{.seq_id = id, .token_ids = {token}}})[0];
  }
  return output;
}

}  // namespace strata
