// Sequence: one choice of one request as the scheduler and engine loop track it. Its
// tokens are the prompt then the output; num_computed_tokens of them are in the KV cache
// (and SSM state), the rest are "behind" and get scheduled.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "strata/cache/snapshot_policy.h"
#include "strata/cache/swap_space.h"
#include "strata/engine/output_constraint.h"
#include "strata/engine/pooling.h"
#include "strata/engine/request.h"
#include "strata/engine/sampler.h"
#include "strata/engine/stop_checker.h"
#include "strata/text/incremental_detokenizer.h"

namespace strata {

using Clock = std::chrono::steady_clock;

// token_ids holds this where a token is sampled but not yet back from the device.
inline constexpr int32_t kPendingToken = -1;

// State shared by the n choices of one request.
struct RequestState {
  int64_t request_id = 0;
  GenerationRequest request;
  std::shared_ptr<RequestStream> stream;
  Clock::time_point arrival;
  int32_t num_finished_choices = 0;
  int32_t num_generated_tokens = 0;
  int32_t num_cached_tokens = 0;
  int64_t num_prefix_queries = 0;  // tokens looked up in the prefix cache (for /metrics)
  int64_t num_prefix_hits = 0;     // tokens found
  int32_t num_prompt_logprobs = 0; // prompt positions given logprobs so far (a recompute skips them)
  bool pools_every_position = false;  // a MEAN or CLS pooling request: no prefix-cache hits
  bool cancelled = false;
  bool forked = false;    // choices 1..n-1 exist (they fork off choice 0 after its prompt)
  std::string error;      // why the engine failed it; empty unless it did
  RequestUpdate pending;  // deltas of the current step, pushed once per step
};

enum class SequenceStatus : uint8_t { kWaiting, kRunning, kFinished };

// A snapshot slot filled by a step whose boundary's last token was still on the device:
// committed once that token (and so the block's hash) is back.
struct UnhashedSnapshot {
  SnapshotPoint point;
  int32_t slot = -1;
};

struct Sequence {
  int64_t id = 0;
  int32_t choice_index = 0;
  uint64_t arrival_order = 0;  // FCFS order; preemption takes the newest first
  std::shared_ptr<RequestState> request;
  std::vector<int32_t> token_ids;  // prompt, then output
  int32_t num_prompt_tokens = 0;
  int32_t num_computed_tokens = 0;
  std::vector<int32_t> block_table;
  int32_t ssm_slot = -1;
  std::optional<SwappedMemory> swapped;  // preempted with its memory in host memory (--swap-space)
  std::vector<uint64_t> block_hashes;  // prefix-cache hash of each full block of token_ids
  int32_t num_registered_blocks = 0;   // leading blocks already findable in the prefix cache
  int32_t last_match_tokens = -1;      // prefix-cache hit of the pending admission
  int32_t branch_tokens = 0;           // > 0: where the prompt left a cached chain without state
  std::optional<uint64_t> answer_snapshot_hash;  // the answer's snapshot, moved as it grows
  std::vector<UnhashedSnapshot> unhashed_snapshots;
  SequenceStatus status = SequenceStatus::kWaiting;
  // Trailing kPendingToken entries of token_ids (0-2: the steps in flight sampled them).
  int32_t num_pending_tokens = 0;
  int32_t pending_sample = -1;       // the newest pending token's sample index in its step
  bool awaiting_last_token = false;  // the newest pending token ends it (max_tokens, context)
  // A micro-batch in flight through pipeline stages holds it: not scheduled, not preempted.
  bool in_micro_batch = false;
  std::vector<int32_t> draft_tokens;  // speculative guesses of the next tokens, this step only
  // [draft][vocab] the distribution a draft model drew each guess from (sampled requests);
  // empty: one-hot at each guess (n-gram drafts, greedy requests).
  std::vector<std::vector<double>> draft_probs;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<text::IncrementalDetokenizer> detokenizer;
  std::unique_ptr<StopChecker> stop_checker;
  std::unique_ptr<OutputConstraint> constraint;  // the output so far, when constrained (JSON, tool calls)
  Clock::time_point first_token_time;
  Clock::time_point last_token_time;
  PoolingState pooling;  // a pooling request's prompt outputs so far

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  int32_t num_tokens_behind() const { return num_tokens() - num_computed_tokens; }
  int32_t num_known_tokens() const { return num_tokens() - num_pending_tokens; }
  int32_t priority() const { return request->request.priority; }
};

}  // namespace strata
