#include "strata/engine/engine.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/engine/engine_loop.h"
#include "strata/engine/pooling.h"
#include "strata/kv_events/zmq_event_publisher.h"
#include "strata/lora/lora_set.h"

namespace strata {
namespace {

// The context length: the model's (or --max-model-len), and never more than one sequence
// can hold in the KV pool, so that a sequence alone always fits and never waits forever. A
// sentence-transformers model's max_seq_length bounds it, as vLLM bounds it.
int32_t resolve_max_model_len(const EngineOptions& options, ModelRunner& runner) {
  const ModelConfig& config = runner.model().config();
  int64_t model_len = config.max_position_embeddings;
  if (config.pooler && config.pooler->max_seq_length > 0) model_len = std::min(model_len, config.pooler->max_seq_length);
  const int64_t pool_tokens = runner.num_kv_blocks() * runner.block_size();
  if (options.max_model_len > 0) {
    if (options.max_model_len > pool_tokens)
      fail("--max-model-len {} needs {} KV blocks of {} tokens for one sequence, but the pool holds {} ({} tokens); "
           "raise --num-kv-blocks (or --gpu-memory-utilization) or lower --max-model-len",
           options.max_model_len, (options.max_model_len + runner.block_size() - 1) / runner.block_size(),
           runner.block_size(), runner.num_kv_blocks(), pool_tokens);
    return static_cast<int32_t>(std::min<int64_t>(options.max_model_len, model_len));
  }
  if (pool_tokens < model_len)
    spdlog::warn("the KV pool holds {} tokens, fewer than the model's {}: max_model_len is {} (raise --num-kv-blocks "
                 "or --gpu-memory-utilization for more)", pool_tokens, model_len, pool_tokens);
  return static_cast<int32_t>(std::min(model_len, pool_tokens));
}

// Ids the model has no embedding or logit for: refused here, since a step would stop on them.
void check_token_ids(const GenerationRequest& request, int64_t vocab_size) {
  for (int32_t id : request.prompt_ids)
    if (id < 0 || id >= vocab_size)
      fail("prompt token id {} is outside the model's vocabulary; give ids in [0, {})", id, vocab_size);
  for (const LogitBias& bias : request.sampling.logit_bias)
    if (bias.token_id >= vocab_size)
      fail("logit_bias names token {}, outside the model's vocabulary; give ids in [0, {})", bias.token_id, vocab_size);
}

// What separates a pooling model's requests from a generative model's.
void check_runner(const GenerationRequest& request, const std::optional<PoolerConfig>& pooler, int64_t hidden_size) {
  if (!pooler) {
    if (request.pooling)
      fail("this model generates text; embeddings and scores need a pooling model (an embedding or "
           "sequence-classification checkpoint, or --runner pooling)");
    return;
  }
  if (!request.pooling)
    fail("this is a pooling model ({}); it does not generate text: use /v1/embeddings, /v1/score, /v1/rerank or "
         "/v1/classify (serve a generative model for completions)",
         pooler->head == ModelHead::kClassifier ? "a classifier or cross-encoder" : "an embedding model");
  if (request.n != 1 || request.prompt_logprobs >= 0)
    fail("a pooling request takes n = 1 and no prompt_logprobs");
  const int32_t dimensions = request.pooling->dimensions;
  if (dimensions == 0) return;
  if (pooler->head != ModelHead::kHiddenStates || !pooler->matryoshka)
    fail("this model does not support matryoshka representation: 'dimensions' {} cannot be served; leave it out",
         dimensions);
  const int64_t embedding_size = pooler->embedding_size(hidden_size);
  if (dimensions < 1 || dimensions > embedding_size)
    fail("dimensions must be between 1 and the model's embedding size {}, got {}", embedding_size, dimensions);
  const std::vector<int64_t>& allowed = pooler->matryoshka_dimensions;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), dimensions) == allowed.end())
    fail("dimensions {} is not one this model was trained for; use one of {}", dimensions, fmt::join(allowed, ", "));
}

// A draft model proposes token ids the target reads: the vocabularies must be the same.
void check_draft_runner(const SpeculativeOptions& spec, ModelRunner& runner, ModelRunner* draft_runner) {
  if (spec.uses_draft_runner() != (draft_runner != nullptr))
    fail("speculative config: {}",
         draft_runner ? "a draft runner was given, but the method is none of draft_model, mtp, eagle3"
                      : "methods draft_model, mtp and eagle3 need their runner beside the target's");
  if (draft_runner == nullptr) return;
  const ModelConfig &target = runner.model().config(), &draft = draft_runner->model().config();
  const bool eagle3_head = draft_runner->model().parts().eagle3.defined();
  if (eagle3_head != spec.uses_eagle3())
    fail("speculative config: {}", eagle3_head ? "an EAGLE-3 head was given as the runner, but the method is not eagle3"
                                               : "method eagle3 needs an EAGLE-3 head as its runner");
  // An EAGLE-3 head drafts in a vocabulary of its own, mapped into the target's (checked when built).
  if (!eagle3_head && draft.vocab_size != target.vocab_size)
    fail("--speculative-config: the draft model {} has a vocabulary of {} tokens, the target's has {}; a draft "
         "must share the target's tokenizer (pick a smaller model of the same family)", spec.draft_model,
         draft.vocab_size, target.vocab_size);
  if (&draft_runner->backend() != &runner.backend())
    fail("--speculative-config: the draft model must run on the target's backend");
  if (draft_runner->model().config().pooler)
    fail("--speculative-config: the draft model {} is a pooling model; a draft must generate text", spec.draft_model);
}

// The prefix cache's block events, published as vLLM does when --kv-events-config asks.
std::unique_ptr<KvEventPublisher> open_kv_event_publisher(const EngineOptions& options) {
  if (!options.kv_events.publishes()) return nullptr;
  if (!options.enable_prefix_caching)
    spdlog::warn("--kv-events-config: the prefix cache is off (--no-enable-prefix-caching, or an encoder model), so "
                 "no block events will be published");
  return std::make_unique<ZmqEventPublisher>(options.kv_events);
}

}  // namespace

Engine::Engine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
               const EngineOptions& options, ModelRunner* draft_runner)
    : options_(options) {
  validate_engine_options(options);
  check_draft_runner(options.speculative, runner, draft_runner);
  max_model_len_ = resolve_max_model_len(options, runner);
  // A hybrid model's sequence holds a slot for its whole life: without one nothing could run.
  if (const SsmStatePool* ssm = runner.ssm_pool(); ssm != nullptr && ssm->capacity() < 1)
    fail("the model has recurrent layers, but its SSM state pool has no slot for a sequence; give it at least one "
         "(strata serve sizes it from --max-num-seqs and --ssm-cache-slots)");
  vocab_size_ = runner.model().config().vocab_size;
  hidden_size_ = runner.model().config().hidden_size;
  pooler_ = runner.model().config().pooler;
  if (runner.model().vision_tower() != nullptr)
    image_token_id_ = static_cast<int32_t>(runner.model().config().get_int("image_token_id", -1));
  options_.block_size = static_cast<int32_t>(runner.block_size());
  num_token_types_ = runner.model().num_token_types();
  // An encoder's outputs depend on later tokens: a prompt runs in one step, and a cached
  // prefix (computed without the rest of its prompt) would be wrong.
  causal_ = runner.model().causal();
  if (!causal_) options_.enable_chunked_prefill = options_.enable_prefix_caching = false;
  num_lora_slots_ = runner.lora() != nullptr ? runner.lora()->num_slots() : 0;
  // Drafts are proposed from the newest token, so speculative decoding runs the synchronous loop;
  // so do tensor-parallel ranks, whose steps carry every token from the host.
  options_.async_scheduling = options.speculative.num_speculative_tokens == 0 && !runner.splits_over_ranks() &&
                              options.async_scheduling.value_or(!runner.backend().device().is_cpu());
  const SpeculativeOptions& spec = options.speculative;
  if (spec.num_speculative_tokens < 0 || spec.num_speculative_tokens >= runner.max_verify_tokens() ||
      spec.prompt_lookup_min < 1 || spec.prompt_lookup_max < spec.prompt_lookup_min)
    fail("speculative config: num_speculative_tokens {} must be in [0, {}] and 1 <= prompt_lookup_min {} <= "
         "prompt_lookup_max {}", spec.num_speculative_tokens, runner.max_verify_tokens() - 1, spec.prompt_lookup_min,
         spec.prompt_lookup_max);
  next_request_id_ = options.data_parallel_rank + 1;
  kv_events_ = open_kv_event_publisher(options_);
  loop_ = std::make_unique<EngineLoop>(EngineLoopParts{.runner = runner,
                                                       .tokenizer = tokenizer,
                                                       .eos_token_ids = std::move(eos_token_ids),
                                                       .options = options_,
                                                       .max_model_len = max_model_len_,
                                                       .stats = stats_,
                                                       .draft_runner = draft_runner,
                                                       .kv_events = kv_events_.get()});
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() { shutdown(std::chrono::milliseconds(0)); }

// EngineLoop::iterate handles what a step throws; once the device is lost it stops for good.
void Engine::run() {
  while (true) {
    const bool busy = loop_->iterate();
    if (loop_->fatal_error()) break;
    if (stopping_.load() && !busy) break;
  }
}

std::optional<std::string> Engine::fatal_error() const { return loop_->fatal_error(); }

// Images fill their placeholders in the prompt; the prefix cache keys their blocks by the
// images' content as well as the tokens (the placeholders alone are the same for every image).
void Engine::check_images(GenerationRequest& request) const {
  if (image_token_id_ < 0)
    fail("this model takes text only: it has no vision tower (the checkpoint has no model.visual.*); send the "
         "request without images");
  if (request.pooling) fail("a pooling request takes no images");
  request.images->check_against(request.prompt_ids, image_token_id_, hidden_size_);
  request.cache_key = (request.cache_key ^ request.images->content_hash()) * 0x9e3779b97f4a7c15ULL + 1;
}

void Engine::check_prompt_length(const GenerationRequest& request) const {
  const int64_t prompt_len = static_cast<int64_t>(request.prompt_ids.size());
  if (request.pooling && prompt_len > max_model_len_)
    fail("the input has {} tokens, more than this model's limit of {} tokens; shorten it, or ask for truncation with "
         "truncate_prompt_tokens (-1: cut to the limit)", prompt_len, max_model_len_);
  if (!request.pooling && prompt_len >= max_model_len_)
    fail("the prompt has {} tokens, but the maximum context length is {} tokens; shorten the prompt (or raise "
         "--max-model-len, which the KV pool's --num-kv-blocks bounds)", prompt_len, max_model_len_);
  if (!causal_ && prompt_len > options_.max_num_batched_tokens)
    fail("the input has {} tokens; this encoder model reads an input whole in one step, which takes at most {} "
         "(--max-num-batched-tokens); shorten it or raise --max-num-batched-tokens", prompt_len,
         options_.max_num_batched_tokens);
  if (!options_.enable_chunked_prefill && prompt_len > options_.max_num_batched_tokens)
    fail("the prompt has {} tokens, more than one step takes with chunked prefill off (--max-num-batched-tokens "
         "{}); shorten the prompt, raise --max-num-batched-tokens or drop --no-enable-chunked-prefill",
         prompt_len, options_.max_num_batched_tokens);
}

// A pair input's segments reach models that embed them (BERT); others read the tokens alone.
void Engine::check_token_types(GenerationRequest& request) const {
  if (num_token_types_ == 0) {
    request.token_type_ids.reset();
    return;
  }
  if (request.token_type_ids->size() != request.prompt_ids.size())
    fail("token_type_ids has {} entries for {} prompt tokens; give one per token", request.token_type_ids->size(),
         request.prompt_ids.size());
  for (int32_t type : *request.token_type_ids)
    if (type < 0 || type >= num_token_types_)
      fail("token type {} is outside the model's {} token types", type, num_token_types_);
}

std::shared_ptr<RequestStream> Engine::submit(GenerationRequest request) {
  if (stopping_.load()) fail("the server is shutting down; retry on another instance");
  if (auto fatal = fatal_error()) fail("the engine has stopped after a device failure ({}); retry shortly", *fatal);
  if (request.prompt_ids.empty()) fail("the prompt is empty; give at least one token");
  check_runner(request, pooler_, hidden_size_);
  check_prompt_length(request);
  if (request.max_tokens < 0) fail("max_tokens must be at least 0, got {}", request.max_tokens);
  if (request.prompt_logprobs < -1 || request.prompt_logprobs > kMaxPromptLogprobs)
    fail("prompt_logprobs must be between 0 and {}, got {}", kMaxPromptLogprobs, request.prompt_logprobs);
  if (request.n < 1 || request.n > kMaxChoices) fail("n must be between 1 and {}, got {}", kMaxChoices, request.n);
  if (request.lora_slot < -1 || request.lora_slot >= num_lora_slots_)
    fail("LoRA slot {} does not exist; this engine has {} adapters", request.lora_slot, num_lora_slots_);
  if (auto error = request.sampling.validate()) fail("{}", *error);
  check_token_ids(request, vocab_size_);
  if (request.images) check_images(request);
  if (request.token_type_ids) check_token_types(request);
  auto state = std::make_shared<RequestState>();
  state->request_id = next_request_id_.fetch_add(options_.data_parallel_size);
  state->request = std::move(request);
  state->stream = std::make_shared<RequestStream>(state->request_id);
  state->arrival = Clock::now();
  state->pools_every_position = pooler_ && pools_every_position(*pooler_);
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
