// OutputProcessor: what becomes of a sampled token. It is put in its sequence, detokenized
// and checked against the stop rules (stop strings and ids, EOS, a finished JSON value or
// tool call, max_tokens, the context), and its delta is queued on the request; a sequence's
// end queues its last delta, and the last choice to end finishes the request (its final
// update and its count in the stats). publish() pushes each touched request's update once
// per step. It never frees memory: the engine loop does that when it ends a sequence.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/engine/engine_stats.h"
#include "strata/engine/json_token_mask.h"
#include "strata/engine/sequence.h"
#include "strata/text/tokenizer.h"

namespace strata {

struct OutputProcessorParts {
  const text::Tokenizer& tokenizer;
  std::vector<int32_t> eos_token_ids;
  int32_t max_model_len = 0;
  EngineStats& stats;
};

// Why a token ends its sequence; kNone: it goes on.
struct SequenceEnd {
  FinishReason reason = FinishReason::kNone;
  std::optional<std::string> stop_reason;  // the stop string that matched
};

class OutputProcessor {
 public:
  explicit OutputProcessor(OutputProcessorParts parts);

  // Puts the sample at seq.token_ids[position] (a kPendingToken slot) and queues its delta.
  SequenceEnd append(Sequence& seq, int32_t position, const SampleResult& sample);
  // Queues the sequence's last delta (with the text held back for stop strings, unless a
  // stop string ended it); choice 0 ending before the others forked ends them too.
  void finish(Sequence& seq, FinishReason reason, std::optional<std::string> stop_reason);
  // The tokens a constrained sequence may sample next (empty when unconstrained): those that
  // extend its grammar, and the end-of-sequence ids where it may end.
  std::vector<uint32_t> allowed_tokens(const Sequence& seq);
  // Queues prompt logprobs of the request's next prompt positions.
  void add_prompt_logprobs(Sequence& seq, std::vector<PromptLogprob> entries);
  // Queues a pooling request's answer (its update then finishes it through finish()).
  void set_pooled(Sequence& seq, std::vector<float> pooled);
  // Pushes the queued updates; returns the requests that finished with them.
  std::vector<std::shared_ptr<RequestState>> publish();

 private:
  void record_token_times(Sequence& seq, int32_t num_outputs);
  void record_time_per_output_token(const Sequence& seq, FinishReason reason);  // a choice that finished
  void complete_request(RequestState& request);
  bool ends_constrained(Sequence& seq, int32_t token);
  const JsonTokenMask& mask();

  OutputProcessorParts parts_;
  std::unique_ptr<JsonTokenMask> mask_;  // built from the tokenizer on first use
  std::vector<std::shared_ptr<RequestState>> touched_;  // requests with updates this step
};

}  // namespace strata
