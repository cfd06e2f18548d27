// The engine behind the Python module's LLM: the model opened as the strata command opens it
// (cli::ModelFlags, cli::open_model), its tokenizer, and the continuous-batching Engine on its
// own thread. No Python here: the bindings convert values and release the GIL around generate.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/cli/model_flags.h"
#include "strata/engine/batch_generate.h"
#include "strata/engine/engine_options.h"
#include "strata/lora/lora_slot_cache.h"
#include "strata/server/server_options.h"
#include "strata/server/vision_prompt.h"
#include "strata/text/chat_prompt.h"

namespace strata::python {

struct OfflineEngineOptions {
  cli::ModelFlags model;           // model.model empty: the embedded SmolLM2 (scripts/setup.sh)
  std::string tokenizer;           // a tokenizer.json, a folder or a .gguf; empty: the model's
  bool skip_tokenizer_init = false;  // token-id prompts only, outputs without text
  EngineOptions engine;
  std::optional<LoraCapacity> lora;  // enable_lora: adapters loaded by path on first use
  server::ImageInputOptions images;  // what a chat's image_url parts may be (a model with a vision tower)
  // The strata command that runs the other ranks when model splits over several (`strata rank`):
  // this process is Python, so it cannot start copies of itself as the command does.
  std::string rank_program;
};

// One chat prompt as the engine takes it: token ids and, for image parts, the encoded images.
struct ChatPrompt {
  std::vector<int32_t> ids;
  std::shared_ptr<const MultimodalPrompt> images;  // null without images
};

class OfflineEngine {
 public:
  // Throws strata::Error for bad options or a model that does not load.
  explicit OfflineEngine(OfflineEngineOptions options);
  ~OfflineEngine() { close(); }

  // Stops the engine, frees the model and stops the other ranks (waiting for them to exit);
  // generate() and encode_chat() then refuse. The tokenizer stays. Repeats are no-ops.
  void close();

  // Blocks until every request finished; see generate_batch for errors. loras: empty, or one
  // entry per request (nullopt: the base model); adapters load before anything runs.
  std::vector<RequestOutput> generate(std::vector<GenerationRequest> requests,
                                      const std::vector<std::optional<LoraRequest>>& loras,
                                      const BatchGenerateOptions& options);

  // Throws an Error saying how to get a tokenizer when the engine has none (token ids only).
  // max_tokens > 0: cut to that many ids (Tokenizer::encode says how).
  std::vector<int32_t> encode(const std::string& text, bool add_special_tokens, int64_t max_tokens = 0) const;
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const;
  // The pair's ids and each id's segment (token type), as BERT cross-encoders read them.
  std::pair<std::vector<int32_t>, std::vector<int32_t>> encode_pair_types(const std::string& a, const std::string& b,
                                                                          bool add_special_tokens,
                                                                          int64_t max_tokens = 0) const;
  // truncate_prompt_tokens (None, -1 or k) as the most tokens an input keeps; 0: none.
  int64_t truncation_max_tokens(std::optional<int64_t> truncate_prompt_tokens) const;
  // A conversation through the chat template (options.chat_template, else the model's):
  // `body` holds messages, tools, chat_template_kwargs and add_generation_prompt as a chat
  // completions request does, read as the server reads them; image_url parts are encoded.
  ChatPrompt encode_chat(const nlohmann::ordered_json& body, const text::ChatPromptOptions& options) const;

  const std::string& model_path() const { return options_.model.model; }
  int32_t max_model_len() const { return max_model_len_; }
  int64_t vocab_size() const { return config_.vocab_size; }
  std::string task() const { return model_task_name(config_); }  // generate, embed, classify
  int64_t num_labels() const { return config_.pooler ? config_.pooler->num_labels : 0; }
  const std::vector<int32_t>& eos_token_ids() const { return tokenizer_.eos_token_ids; }

 private:
  const text::Tokenizer& text_tokenizer() const;
  void require_open() const;

  OfflineEngineOptions options_;
  ModelConfig config_;         // the model's, kept past close()
  int32_t max_model_len_ = 0;  // the engine's, kept past close()
  cli::OpenModel open_;
  cli::ModelTokenizer tokenizer_;
  std::unique_ptr<LoraSet> lora_set_;           // enable_lora: max_loras slots
  std::unique_ptr<LoraSlotCache> lora_slots_;
  std::optional<server::VisionInput> vision_;   // a model with a vision tower
  std::mutex generate_mutex_;                   // one batch at a time: adapters load between batches
  std::unique_ptr<Engine> engine_;
};

}  // namespace strata::python
