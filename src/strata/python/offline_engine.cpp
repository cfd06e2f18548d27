#include "strata/python/offline_engine.h"

#include <algorithm>
#include <filesystem>

#include "strata/cli/default_model.h"
#include "strata/cli/rank_command.h"
#include "strata/core/error.h"
#include "strata/engine/prompt_truncation.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_request.h"
#include "strata/text/id_tokenizer.h"

namespace strata::python {
namespace {

// A model split over ranks: the others run as `strata rank` with this model's flags.
void prepare_ranks(OfflineEngineOptions& options) {
  cli::ModelFlags& model = options.model;
  if (model.tensor_parallel.size * model.pipeline_parallel.size == 1) return;
  if (options.rank_program.empty())
    fail("tensor_parallel_size {} and pipeline_parallel_size {} need the strata command to run the other ranks, and "
         "none was found; install the package with pip install . (it installs strata), or build the strata target",
         model.tensor_parallel.size, model.pipeline_parallel.size);
  model.rank_command = cli::rank_command(options.rank_program, model, options.lora);
}

}  // namespace

OfflineEngine::OfflineEngine(OfflineEngineOptions options) : options_(std::move(options)) {
  validate_engine_options(options_.engine);
  cli::ModelFlags& model = options_.model;
  if (model.model.empty()) model.model = cli::default_model_path();
  cli::resolve_model_name(model);
  // As strata serve sizes them: live sequences, n > 1 forks and the prefix cache's snapshots.
  model.num_ssm_slots = 2 * options_.engine.max_num_seqs + options_.engine.ssm_cache_slots;
  options_.engine.num_kv_blocks = model.num_kv_blocks;
  prepare_ranks(options_);
  open_ = cli::open_model(model, options_.engine.speculative);
  config_ = open_.loaded.config;
  if (options_.skip_tokenizer_init) {
    tokenizer_.tokenizer = text::make_id_tokenizer(static_cast<int32_t>(vocab_size()));
    tokenizer_.eos_token_ids.assign(open_.loaded.config.eos_token_ids.begin(), open_.loaded.config.eos_token_ids.end());
  } else {
    const std::string& path = options_.tokenizer.empty() ? model.model : options_.tokenizer;
    tokenizer_ = cli::open_model_tokenizer(path, open_.loaded.config);
  }
  if (options_.lora) {
    lora_set_ = std::make_unique<LoraSet>(*options_.lora, open_.loaded.config, *open_.backend, cli::lora_placement(open_));
    // The other ranks load the same folder into the same slot before the next step.
    lora_slots_ = std::make_unique<LoraSlotCache>(*lora_set_, [runner = open_.runner.get()](int32_t slot,
                                                                                            const LoraRequest& lora) {
      runner->repeat_lora_load(slot, lora.name, std::filesystem::absolute(lora.path).string());
    });
    open_.runner->set_lora(lora_set_.get());
  }
  vision_ = server::vision_input(open_.loaded, model.model, options_.images);
  if (!open_.backend->device().is_cpu()) open_.runner->capture_decode_graphs(options_.engine.max_num_seqs);
  engine_ = std::make_unique<Engine>(*open_.runner, *tokenizer_.tokenizer, tokenizer_.eos_token_ids, options_.engine,
                                     open_.draft_runner.get());
  max_model_len_ = engine_->max_model_len();
}

void OfflineEngine::close() {
  const std::lock_guard lock(generate_mutex_);
  if (!engine_) return;
  engine_->shutdown(std::chrono::milliseconds(0));
  engine_.reset();
  vision_.reset();
  lora_slots_.reset();
  lora_set_.reset();
  // Destroyed in OpenModel's member order: the runners, then the group (which stops the ranks).
  const cli::OpenModel closing = std::move(open_);
}

void OfflineEngine::require_open() const {
  if (!engine_) fail("this LLM was closed; make a new LLM to run {}", model_path());
}

std::vector<RequestOutput> OfflineEngine::generate(std::vector<GenerationRequest> requests,
                                                   const std::vector<std::optional<LoraRequest>>& loras,
                                                   const BatchGenerateOptions& options) {
  const std::lock_guard lock(generate_mutex_);
  require_open();
  if (!loras.empty()) {
    STRATA_CHECK(loras.size() == requests.size());
    const bool any = std::ranges::any_of(loras, [](const auto& lora) { return lora.has_value(); });
    if (any && !lora_slots_) fail("lora_request needs an LLM made with enable_lora=True (and max_lora_rank at least "
                                  "the adapters' rank)");
    const std::vector<int32_t> slots = any ? lora_slots_->slots_for(loras) : std::vector<int32_t>(loras.size(), -1);
    for (size_t i = 0; i < requests.size(); ++i) {
      if (slots[i] < 0) continue;
      requests[i].lora_slot = slots[i];
      requests[i].cache_key = lora_cache_key(std::to_string(loras[i]->id));
    }
  }
  return generate_batch(*engine_, std::move(requests), options);
}

const text::Tokenizer& OfflineEngine::text_tokenizer() const {
  if (options_.skip_tokenizer_init)
    fail("this LLM was made with skip_tokenizer_init=True; give token-id prompts, or drop skip_tokenizer_init");
  if (!tokenizer_.has_text)
    fail("{} has no tokenizer.json; give token-id prompts, or a tokenizer: LLM(model, tokenizer=PATH)", model_path());
  return *tokenizer_.tokenizer;
}

std::vector<int32_t> OfflineEngine::encode(const std::string& text, bool add_special_tokens, int64_t max_tokens) const {
  return text_tokenizer().encode(text, add_special_tokens, max_tokens);
}

int64_t OfflineEngine::truncation_max_tokens(std::optional<int64_t> truncate_prompt_tokens) const {
  return strata::truncation_max_tokens(truncate_prompt_tokens, max_model_len());
}

std::string OfflineEngine::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  return text_tokenizer().decode(ids, skip_special_tokens);
}

std::pair<std::vector<int32_t>, std::vector<int32_t>> OfflineEngine::encode_pair_types(const std::string& a,
                                                                                       const std::string& b,
                                                                                       bool add_special_tokens,
                                                                                       int64_t max_tokens) const {
  std::vector<int32_t> type_ids;
  std::vector<int32_t> ids = text_tokenizer().encode_pair(a, b, add_special_tokens, &type_ids, max_tokens);
  return {std::move(ids), std::move(type_ids)};
}

ChatPrompt OfflineEngine::encode_chat(const nlohmann::ordered_json& body, const text::ChatPromptOptions& options) const {
  try {
    std::vector<std::string> image_urls;
    const ChatRenderRequest request = server::read_conversation(body, &image_urls);
    if (image_urls.empty()) return {.ids = text::encode_conversation(text_tokenizer(), request, options)};
    require_open();  // the vision tower went with the model
    if (!vision_)
      fail("{} takes text only (it has no vision tower: the checkpoint has no model.visual.*); send the messages "
           "without images", model_path());
    const std::string prompt = text::render_conversation(text_tokenizer(), request, options);
    server::VisionPrompt vision = server::encode_with_images(*vision_, text_tokenizer(), prompt, image_urls, "messages");
    return {.ids = std::move(vision.ids), .images = std::move(vision.images)};
  } catch (const server::ApiError& e) {
    fail("{}", e.what());  // the server's 400s: the same checks, raised as StrataError here
  }
}

}  // namespace strata::python
