#include "strata/engine/local_engine.h"

#include "strata/core/error.h"

namespace strata {

EngineOptions LocalEngine::single_sequence_options() {
  EngineOptions options;
  options.max_num_seqs = 1;
  return options;
}

LocalEngine::LocalEngine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
                         const EngineOptions& options, ModelRunner* draft_runner) {
  runner.capture_decode_graphs(options.max_num_seqs);
  engine_ = std::make_unique<Engine>(runner, tokenizer, std::move(eos_token_ids), options, draft_runner);
}

LocalEngine::~LocalEngine() = default;

std::vector<int32_t> LocalEngine::generate(GenerationRequest request, const std::function<bool(int32_t)>& on_token) {
  if (request.n != 1) fail("LocalEngine generates one choice; got n = {}", request.n);
  const std::shared_ptr<RequestStream> stream = engine_->submit(std::move(request));
  std::vector<int32_t> output;
  bool stopped = false;
  while (true) {
    std::optional<RequestUpdate> update = stream->pop(std::chrono::milliseconds(100));
    if (!update) continue;
    for (const ChoiceDelta& delta : update->deltas)
      for (int32_t token : delta.token_ids) {
        if (stopped) break;
        output.push_back(token);
        if (on_token && !on_token(token)) {
          stopped = true;
          engine_->cancel(stream->request_id());
        }
      }
    if (update->finished) {
      if (!update->error.empty() && !stopped) fail("generation failed: {}", update->error);
      return output;
    }
  }
}

}  // namespace strata
