#include "strata/engine/engine.h"

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/engine/engine_loop.h"
#include "strata/lora/lora_set.h"

namespace strata {

Engine::Engine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
               const EngineOptions& options)
    : options_(options) {
  const int64_t model_len = runner.model().config().max_position_embeddings;
  max_model_len_ = static_cast<int32_t>(options.max_model_len > 0 ? std::min<int64_t>(options.max_model_len, model_len)
                                                                   : model_len);
  options_.block_size = static_cast<int32_t>(runner.block_size());
  num_lora_slots_ = runner.lora() != nullptr ? runner.lora()->num_slots() : 0;
  // Drafts are proposed from the newest token, so speculative decoding runs the synchronous loop.
  options_.async_scheduling = options.speculative.num_speculative_tokens == 0 &&
                              options.async_scheduling.value_or(!runner.backend().device().is_cpu());
  const NgramOptions& spec = options.speculative;
  if (spec.num_speculative_tokens < 0 || spec.num_speculative_tokens >= runner.max_verify_tokens() ||
      spec.prompt_lookup_min < 1 || spec.prompt_lookup_max < spec.prompt_lookup_min)
    fail("speculative config: num_speculative_tokens {} must be in [0, {}] and 1 <= prompt_lookup_min {} <= "
         "prompt_lookup_max {}", spec.num_speculative_tokens, runner.max_verify_tokens() - 1, spec.prompt_lookup_min,
         spec.prompt_lookup_max);
  loop_ = std::make_unique<EngineLoop>(EngineLoopParts{.runner = runner,
                                                       .tokenizer = tokenizer,
                                                       .eos_token_ids = std::move(eos_token_ids),
                                                       .options = options_,
                                                       .max_model_len = max_model_len_,
                                                       .stats = stats_});
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() { shutdown(std::chrono::milliseconds(0)); }

void Engine::run() {
  while (true) {
    const bool busy = loop_->iterate();
    if (stopping_.load() && !busy) break;
  }
}

std::shared_ptr<RequestStream> Engine::submit(GenerationRequest request) {
  if (stopping_.load()) fail("the server is shutting down; retry on another instance");
  if (request.prompt_ids.empty()) fail("the prompt is empty; give at least one token");
  const int64_t prompt_len = static_cast<int64_t>(request.prompt_ids.size());
  if (prompt_len >= max_model_len_)
    fail("the prompt has {} tokens, but the maximum context length is {} tokens; shorten the prompt",
         prompt_len, max_model_len_);
  if (request.max_tokens < 1) fail("max_tokens must be at least 1, got {}", request.max_tokens);
  if (request.n < 1 || request.n > 128) fail("n must be between 1 and 128, got {}", request.n);
  if (request.lora_slot < -1 || request.lora_slot >= num_lora_slots_)
    fail("LoRA slot {} does not exist; this engine has {} adapters", request.lora_slot, num_lora_slots_);
  if (auto error = request.sampling.validate()) fail("{}", *error);
  auto state = std::make_shared<RequestState>();
  state->request_id = next_request_id_++;
  state->request = std::move(request);
  state->stream = std::make_shared<RequestStream>(state->request_id);
  state->arrival = Clock::now();
  auto stream = state->stream;
  loop_->enqueue(std::move(state));
  return stream;
}

void Engine::cancel(int64_t request_id) { loop_->cancel(request_id); }

void Engine::shutdown(std::chrono::milliseconds deadline) {
  if (!thread_.joinable()) return;
  stopping_ = true;
  const auto until = Clock::now() + deadline;
  while (Clock::now() < until && stats_.snapshot().num_running + stats_.snapshot().num_waiting > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  loop_->cancel_all();
  thread_.join();
}

}  // namespace strata
