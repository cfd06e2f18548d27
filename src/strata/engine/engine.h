// Engine: continuous batching on its own thread. HTTP threads submit tokenized requests
// and read RequestStreams; only the engine thread touches the model, the KV cache and
// the sequences. Each loop iteration: admit new requests, schedule a step under the token
// budget, run it, sample, detokenize, check stops, stream the deltas. A step that throws
// fails its requests (FinishReason::kError) and serving goes on; a lost device fails every
// request and stops the engine for good (fatal_error()), so the process can restart.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "strata/engine/engine_options.h"
#include "strata/engine/engine_stats.h"
#include "strata/engine/model_runner.h"
#include "strata/engine/request.h"
#include "strata/kv_events/kv_event_publisher.h"
#include "strata/text/tokenizer.h"

namespace strata {

class EngineLoop;

class Engine {
 public:
  // The runner and tokenizer must outlive the engine. eos_token_ids end every request
  // unless it sets ignore_eos. draft_runner: the draft model's runner when the speculative
  // method is draft_model (the same backend, the target's vocabulary), else null.
  Engine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
         const EngineOptions& options, ModelRunner* draft_runner = nullptr);
  ~Engine();

  // Validates (an Error naming the limit and the flag that raises it, for a request the
  // engine could never serve: an empty prompt, one over max_model_len or over the step
  // budget without chunked prefill, bad params) and queues the request; the stream
  // delivers its updates.
  std::shared_ptr<RequestStream> submit(GenerationRequest request);
  // Stops a request at the next step and frees its blocks (a no-op once finished).
  void cancel(int64_t request_id);
  // Stop accepting; wait up to `deadline` for running requests, then cancel the rest.
  void shutdown(std::chrono::milliseconds deadline);

  int32_t max_model_len() const { return max_model_len_; }
  // Set for a pooling model: its requests must carry `pooling`, and no other request is served.
  const std::optional<PoolerConfig>& pooler() const { return pooler_; }
  bool async_scheduling() const { return *options_.async_scheduling; }
  bool running() const { return !stopping_.load() && !fatal_error(); }
  // Set once the device is lost: why. Every request has failed and no step runs again.
  std::optional<std::string> fatal_error() const;
  EngineStatsSnapshot stats() const { return stats_.snapshot(); }

 private:
  void run();
  void check_images(GenerationRequest& request) const;
  void check_token_types(GenerationRequest& request) const;
  void check_prompt_length(const GenerationRequest& request) const;

  EngineOptions options_;
  int32_t num_lora_slots_ = 0;  // the runner's adapters when the engine was made
  int32_t max_model_len_;
  int64_t vocab_size_;
  int64_t hidden_size_;
  int32_t image_token_id_ = -1;  // the placeholder images fill; -1: the model takes no images
  int64_t num_token_types_ = 0;  // segments the model embeds (BERT pairs); 0: none
  bool causal_ = true;           // false: an encoder, whose prompts run whole and uncached
  std::optional<PoolerConfig> pooler_;
  EngineStats stats_;
  std::unique_ptr<KvEventPublisher> kv_events_;  // null unless --kv-events-config publishes; outlives loop_
  std::unique_ptr<EngineLoop> loop_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> next_request_id_{1};
  std::thread thread_;
};

}  // namespace strata
