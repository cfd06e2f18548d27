#include "strata/python/offline_engine.h"

#include "strata/cli/default_model.h"
#include "strata/core/error.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/id_tokenizer.h"

namespace strata::python {

OfflineEngine::OfflineEngine(OfflineEngineOptions options) : options_(std::move(options)) {
  validate_engine_options(options_.engine);
  cli::ModelFlags& model = options_.model;
  if (model.model.empty()) model.model = cli::default_model_path();
  cli::resolve_model_name(model);
  // As strata serve sizes them: live sequences, n > 1 forks and the prefix cache's snapshots.
  model.num_ssm_slots = 2 * options_.engine.max_num_seqs + options_.engine.ssm_cache_slots;
  options_.engine.num_kv_blocks = model.num_kv_blocks;
  open_ = cli::open_model(model, options_.engine.speculative);
  if (options_.skip_tokenizer_init) {
    tokenizer_.tokenizer = text::make_id_tokenizer(static_cast<int32_t>(vocab_size()));
    tokenizer_.eos_token_ids.assign(open_.loaded.config.eos_token_ids.begin(), open_.loaded.config.eos_token_ids.end());
  } else {
    const std::string& path = options_.tokenizer.empty() ? model.model : options_.tokenizer;
    tokenizer_ = cli::open_model_tokenizer(path, open_.loaded.config);
  }
  if (!open_.backend->device().is_cpu()) open_.runner->capture_decode_graphs(options_.engine.max_num_seqs);
  engine_ = std::make_unique<Engine>(*open_.runner, *tokenizer_.tokenizer, tokenizer_.eos_token_ids, options_.engine,
                                     open_.draft_runner.get());
}

OfflineEngine::~OfflineEngine() {
  if (engine_) engine_->shutdown(std::chrono::milliseconds(0));
}

std::vector<RequestOutput> OfflineEngine::generate(std::vector<GenerationRequest> requests,
                                                   const BatchGenerateOptions& options) {
  return generate_batch(*engine_, std::move(requests), options);
}

const text::Tokenizer& OfflineEngine::text_tokenizer() const {
  if (options_.skip_tokenizer_init)
    fail("this LLM was made with skip_tokenizer_init=True; give token-id prompts, or drop skip_tokenizer_init");
  if (!tokenizer_.has_text)
    fail("{} has no tokenizer.json; give token-id prompts, or a tokenizer: LLM(model, tokenizer=PATH)", model_path());
  return *tokenizer_.tokenizer;
}

std::vector<int32_t> OfflineEngine::encode(const std::string& text, bool add_special_tokens) const {
  return text_tokenizer().encode(text, add_special_tokens);
}

std::string OfflineEngine::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  return text_tokenizer().decode(ids, skip_special_tokens);
}

std::vector<int32_t> OfflineEngine::encode_pair(const std::string& a, const std::string& b,
                                                bool add_special_tokens) const {
  return text_tokenizer().encode_pair(a, b, add_special_tokens);
}

std::pair<std::vector<int32_t>, std::vector<int32_t>> OfflineEngine::encode_pair_types(const std::string& a,
                                                                                       const std::string& b,
                                                                                       bool add_special_tokens) const {
  std::vector<int32_t> type_ids;
  std::vector<int32_t> ids = text_tokenizer().encode_pair(a, b, add_special_tokens, &type_ids);
  return {std::move(ids), std::move(type_ids)};
}

// Content parts of an image type would render as one placeholder without the image behind it:
// refused, so a conversation never runs without its pictures.
std::vector<int32_t> OfflineEngine::encode_chat(const ChatRenderRequest& request) const {
  for (const auto& message : request.messages) {
    if (!message.is_object() || !message.contains("content") || !message["content"].is_array()) continue;
    for (const auto& part : message["content"])
      if (part.is_object() && part.value("type", "").find("image") != std::string::npos)
        fail("LLM.chat takes text parts only: images are served by `strata serve` (image_url parts) and "
             "`strata chat --image`, not yet by the Python module");
  }
  return text::encode_conversation(text_tokenizer(), request);
}

}  // namespace strata::python
