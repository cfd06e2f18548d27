#include "strata/engine/engine_loop.h"

#include <algorithm>
#include <cstring>
#include <span>

#include "strata/backend/device_error.h"
#include "strata/core/error.h"
#include "strata/core/logging.h"

namespace strata {
namespace {

std::unique_ptr<Sequence> make_sequence(const std::shared_ptr<RequestState>& request, int32_t choice,
                                        const text::Tokenizer& tokenizer) {
  auto seq = std::make_unique<Sequence>();
  seq->choice_index = choice;
  seq->request = request;
  seq->token_ids = request->request.prompt_ids;
  seq->num_prompt_tokens = static_cast<int32_t>(seq->token_ids.size());
  SamplingParams sampling = request->request.sampling;
  if (sampling.seed) sampling.seed = *sampling.seed + static_cast<uint64_t>(choice);
  seq->sampler = std::make_unique<Sampler>(sampling);
  seq->detokenizer = std::make_unique<text::IncrementalDetokenizer>(tokenizer, request->request.skip_special_tokens);
  seq->stop_checker = std::make_unique<StopChecker>(request->request.stop);
  seq->constraint = OutputConstraint::for_request(request->request);
  return seq;
}

}  // namespace

EngineLoop::EngineLoop(EngineLoopParts parts)
    : parts_(std::move(parts)),
      memory_(parts_.runner.memory()),
      snapshot_policy_{.block_size = parts_.options.block_size,
                       .interval_tokens = snapshot_interval_tokens(parts_.options.ssm_snapshot_interval,
                                                                   parts_.options.block_size)},
      scheduler_(parts_.options, memory_),
      batch_sampler_(parts_.runner.backend()),
      output_({.tokenizer = parts_.tokenizer,
               .eos_token_ids = parts_.eos_token_ids,
               .max_model_len = parts_.max_model_len,
               .stats = parts_.stats}),
      async_scheduling_(parts_.options.async_scheduling.value_or(false)) {  // Engine resolved it
  if (parts_.kv_events != nullptr) kv_events_ = std::make_unique<KvEventRecorder>(*parts_.kv_events);
  if (parts_.options.enable_prefix_caching)
    memory_.start_prefix_cache(parts_.options.ssm_cache_slots, gib_to_bytes(parts_.options.ssm_host_cache_gib),
                               kv_events_.get());
  memory_.start_swap_space(gib_to_bytes(parts_.options.swap_space_gib));
  const int32_t k = parts_.options.speculative.num_speculative_tokens;
  if (parts_.draft_runner != nullptr && parts_.options.speculative.uses_hidden_state_proposer())
    mtp_ = std::make_unique<MtpProposer>(*parts_.draft_runner, parts_.runner, k);
  else if (parts_.draft_runner != nullptr)
    draft_ = std::make_unique<DraftModel>(*parts_.draft_runner, k, parts_.options.max_num_batched_tokens);
  // Speculation's drafts need each step's tokens before the next: its steps stay one in flight.
  if (parts_.options.pipeline_micro_batches && k == 0) max_micro_batches_ = parts_.runner.max_micro_batches();
}

EngineLoop::~EngineLoop() {
  try {
    parts_.runner.finish_micro_batches();  // no stage left waiting on stage 0 (held rows, logits to hand back)
  } catch (const std::exception&) {  // a lost group: the messages below go nowhere
  }
  memory_.stop_prefix_cache();
  flush_kv_events();
  memory_.stop_swap_space();
}

void EngineLoop::enqueue(std::shared_ptr<RequestState> request) {
  std::optional<std::string> fatal;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    fatal = fatal_error_;
    if (!fatal) inbox_.push_back(request);
  }
  if (!fatal) return wake_.notify_one();
  // The engine thread has stopped: the request fails here, every choice with it.
  RequestUpdate update{.finished = true, .error = *fatal};
  for (int32_t c = 0; c < request->request.n; ++c)
    update.deltas.push_back({.index = c, .finish_reason = FinishReason::kError});
  request->stream->push(std::move(update));
  parts_.stats.update([](EngineStatsSnapshot& s) { ++s.requests_failed_total; });
}

std::optional<std::string> EngineLoop::fatal_error() const {
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  return fatal_error_;
}

void EngineLoop::cancel(int64_t request_id) {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    cancels_.push_back(request_id);
  }
  wake_.notify_one();
}

void EngineLoop::cancel_all() {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    cancel_all_ = true;
  }
  wake_.notify_one();
}

void EngineLoop::wake() { wake_.notify_one(); }

void EngineLoop::take_inbox() {
  std::vector<std::shared_ptr<RequestState>> incoming;
  std::vector<int64_t> cancels;
  bool all = false;
  {
    std::unique_lock<std::mutex> lock(inbox_mutex_);
    // Nothing changes until the inbox does when nothing ran and nothing is in flight.
    if (inbox_.empty() && cancels_.empty() && !cancel_all_ && (sequences_.empty() || idle_) && !in_flight_ &&
        micro_batches_.empty())
      wake_.wait_for(lock, std::chrono::milliseconds(50));
    incoming.swap(inbox_);
    cancels.swap(cancels_);
    std::swap(all, cancel_all_);
  }
  for (const auto& request : incoming) start_request(request);
  if (all)
    for (const auto& [id, seqs] : sequences_) cancels.push_back(id);
  for (int64_t id : cancels) cancel_request(id);
}

void EngineLoop::start_request(const std::shared_ptr<RequestState>& request) {
  auto seq = make_sequence(request, 0, parts_.tokenizer);
  seq->id = next_sequence_id_++;
  seq->arrival_order = next_arrival_++;
  scheduler_.add_waiting(seq.get());
  sequences_[request->request_id].push_back(std::move(seq));
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    s.prompt_tokens_total += request->request.prompt_ids.size();
  });
}

bool EngineLoop::iterate() {
  take_inbox();
  if (fatal_error()) return false;
  try {
    run_step();
  } catch (const std::exception& error) {
    recover(error);
  }
  publish();
  flush_kv_events();
  if (!in_flight_ && micro_batches_.empty()) retired_.clear();
  update_gauges();
  return !sequences_.empty() || in_flight_.has_value() || !micro_batches_.empty();
}

void EngineLoop::run_step() {
  if (max_micro_batches_ > 1) return run_micro_batches();
  step_requests_.clear();
  idle_ = false;
  propose_drafts();
  StepPlan plan = scheduler_.schedule();
  take_plan(plan);
  if (in_flight_ && needs_tokens_on_host(plan)) {
    finish_in_flight();
    std::erase_if(plan.rows, [](const ScheduledRow& r) { return r.seq->status == SequenceStatus::kFinished; });
  }
  if (!plan.rows.empty()) launched_ = launch_step(plan);
  finish_in_flight();  // the previous step's tokens, read while the device runs this one
  in_flight_ = std::move(launched_);
  launched_.reset();
  if (!async_scheduling_) finish_in_flight();
  idle_ = plan.rows.empty() && plan.out_of_blocks.empty() && plan.num_preempted == 0 && !in_flight_;
}

void EngineLoop::take_plan(const StepPlan& plan) {
  for (Sequence* seq : plan.out_of_blocks) finish(*seq, FinishReason::kLength, std::nullopt);
  if (plan.num_preempted > 0)
    parts_.stats.update([&](EngineStatsSnapshot& s) { s.preemptions_total += plan.num_preempted; });
  for (const ScheduledRow& r : plan.rows) step_requests_.push_back(r.seq->request);
}

bool EngineLoop::needs_tokens_on_host(const StepPlan& plan) const {
  return std::any_of(plan.rows.begin(), plan.rows.end(), [](const ScheduledRow& r) {
    return r.seq->num_pending_tokens > 0 && (r.seq->sampler->params().has_penalties() || r.seq->constraint != nullptr);
  });
}

StepRow EngineLoop::make_row(const ScheduledRow& r, std::vector<PlannedSnapshot>& snapshots) {
  Sequence& seq = *r.seq;
  STRATA_CHECK(seq.num_pending_tokens <= 1);
  const int32_t known = r.num_tokens - r.num_draft_tokens;  // of token_ids; drafts follow
  const bool reaches_end = seq.num_computed_tokens + known == seq.num_tokens();
  const LogitsMode logits = r.num_draft_tokens > 0 || wants_prompt_logprobs(seq) || seq.request->pools_every_position
                                ? LogitsMode::kAll
                                : (reaches_end ? LogitsMode::kLast : LogitsMode::kNone);
  StepRow row{.seq_id = seq.id,
              .token_ids = {seq.token_ids.begin() + seq.num_computed_tokens,
                            seq.token_ids.begin() + seq.num_computed_tokens + known},
              .num_computed_tokens = seq.num_computed_tokens,
              .block_table = seq.block_table,
              .ssm_slot = seq.ssm_slot,
              .keep_intermediates = r.num_draft_tokens > 0 && seq.ssm_slot >= 0,
              .logits = logits,
              .pending_sample = reaches_end && seq.num_pending_tokens > 0 ? seq.pending_sample : -1,
              .lora_slot = seq.request->request.lora_slot,
              .multimodal = seq.request->request.images,
              .token_type_ids = seq.request->request.token_type_ids};
  row.token_ids.insert(row.token_ids.end(), seq.draft_tokens.begin(), seq.draft_tokens.begin() + r.num_draft_tokens);
  plan_snapshots(seq, known, row, snapshots);
  return row;
}

StepBatch EngineLoop::make_batch(const StepPlan& plan, std::vector<PlannedSnapshot>& snapshots) {
  std::vector<StepRow> rows;
  for (const ScheduledRow& r : plan.rows) rows.push_back(make_row(r, snapshots));
  return StepBatch(std::move(rows), parts_.runner.block_size());
}

EngineLoop::InFlightStep EngineLoop::launch_step(const StepPlan& plan) {
  std::vector<PlannedSnapshot> snapshots;  // captured this step
  StepBatch batch = make_batch(plan, snapshots);
  const Tensor pending_ids = in_flight_ ? in_flight_->ticket.sampled_ids : Tensor();
  Tensor logits;
  try {
    inject_fault();
    logits = batch_sampler_.on_device() ? parts_.runner.execute_on_device(batch, pending_ids)
                                        : parts_.runner.execute(batch, pending_ids);
  } catch (...) {
    cancel_snapshots(snapshots);
    throw;
  }
  advance_rows(plan, batch, snapshots);
  return sample_rows(plan, batch, logits);
}

void EngineLoop::advance_rows(const StepPlan& plan, const StepBatch& batch,
                              const std::vector<PlannedSnapshot>& snapshots) {
  finish_snapshots(snapshots);
  if (mtp_) mtp_->record_target_step(batch, plan.rows);
  for (const ScheduledRow& r : plan.rows) {
    r.seq->num_computed_tokens += r.num_tokens - r.num_draft_tokens;  // finish_verify adds the accepted
    register_blocks(*r.seq);
  }
}

EngineLoop::InFlightStep EngineLoop::sample_rows(const StepPlan& plan, const StepBatch& batch, const Tensor& logits) {
  std::vector<SampleTask> tasks;
  std::vector<InFlightStep::Verify> verifies;
  for (size_t i = 0; i < plan.rows.size(); ++i) {
    Sequence& seq = *plan.rows[i].seq;
    const int32_t drafts = plan.rows[i].num_draft_tokens;
    if (seq.status == SequenceStatus::kFinished) continue;  // cancelled while its micro-batch ran
    if (batch.rows()[i].logits == LogitsMode::kNone) continue;
    int64_t logits_row = batch.logits_row_offsets()[i];
    if (seq.request->request.pooling) {
      add_pooled_rows(seq, batch.rows()[i], logits, logits_row);
      continue;
    }
    if (drafts == 0 && batch.rows()[i].logits == LogitsMode::kAll) {
      add_prompt_logprobs(seq, batch.rows()[i], logits.slice_rows(logits_row, logits_row + batch.rows()[i].q_len()));
      if (seq.num_computed_tokens < seq.num_tokens()) continue;  // a chunk short of the end samples nothing
      logits_row += batch.rows()[i].q_len() - 1;
    }
    if (seq.request->request.max_tokens == 0) {  // echo scoring: the prompt's logprobs were all it wanted
      finish(seq, FinishReason::kLength, std::nullopt);
      continue;
    }
    if (drafts > 0) {
      verifies.push_back(launch_verify(seq, drafts, logits, logits_row, tasks));
      continue;
    }
    std::vector<uint32_t> allowed = output_.allowed_tokens(seq);
    if (seq.constraint != nullptr && std::none_of(allowed.begin(), allowed.end(), [](uint32_t w) { return w != 0; })) {
      finish(seq, FinishReason::kStop, std::nullopt);  // a dead end: no token continues the grammar
      continue;
    }
    tasks.push_back({.seq = &seq, .logits_row = logits_row, .allowed = std::move(allowed)});
    const bool first_of_request = seq.choice_index == 0 && seq.num_output_tokens() == 0;
    if (first_of_request && seq.request->request.n > 1)
      for (Sequence* child : fork_choices(seq))
        tasks.push_back({.seq = child, .logits_row = logits_row, .allowed = output_.allowed_tokens(*child)});
  }
  InFlightStep step{.ticket = batch_sampler_.launch(logits, std::move(tasks)), .verifies = std::move(verifies)};
  add_pending_tokens(step);
  return step;
}

// Choice 0 alone reports the prompt's logprobs: the other choices share its prefill.
bool EngineLoop::wants_prompt_logprobs(const Sequence& seq) const {
  return seq.request->request.prompt_logprobs >= 0 && seq.choice_index == 0 &&
         seq.request->num_prompt_logprobs + 1 < seq.num_prompt_tokens;
}

// Copies the row's logits to the host (only these requests pay for it) before sampling
// biases them in place.
void EngineLoop::add_prompt_logprobs(Sequence& seq, const StepRow& row, const Tensor& row_logits) {
  const Tensor host = parts_.runner.backend().to_host(row_logits);
  output_.add_prompt_logprobs(
      seq, row_prompt_logprobs({.logits = {host.data_as<const float>(), static_cast<size_t>(host.numel())},
                                .vocab = host.dim(1),
                                .prompt_ids = std::span<const int32_t>(seq.token_ids).first(seq.num_prompt_tokens),
                                .num_computed_tokens = row.num_computed_tokens,
                                .num_done = seq.request->num_prompt_logprobs,
                                .num_top = seq.request->request.prompt_logprobs}));
}

// Every sampled sequence but the verifying ones gets a kPendingToken slot for its sample.
void EngineLoop::add_pending_tokens(InFlightStep& step) {
  const std::vector<SampleTask>& launched = step.ticket.tasks;
  step.token_positions.assign(launched.size(), -1);
  std::vector<bool> verifying(launched.size(), false);
  for (const InFlightStep::Verify& v : step.verifies)
    if (!v.on_host) std::fill_n(verifying.begin() + static_cast<int64_t>(v.first_task), v.drafts.size() + 1, true);
  for (size_t i = 0; i < launched.size(); ++i) {
    if (verifying[i]) continue;
    Sequence& seq = *launched[i].seq;
    step.token_positions[i] = seq.num_tokens();
    seq.token_ids.push_back(kPendingToken);
    ++seq.num_pending_tokens;
    seq.pending_sample = static_cast<int32_t>(i);
    seq.awaiting_last_token = seq.num_output_tokens() >= seq.request->request.max_tokens ||
                              seq.num_tokens() >= parts_.max_model_len;
  }
}

void EngineLoop::finish_step(InFlightStep& step) {
  const std::vector<SampleResult> samples = batch_sampler_.collect(step.ticket);
  for (const InFlightStep::Verify& verify : step.verifies)
    finish_verify(verify, verify.on_host ? std::span<const SampleResult>(verify.host_samples)
                                         : std::span<const SampleResult>(samples).subspan(verify.first_task,
                                                                                          verify.drafts.size() + 1));
  for (size_t i = 0; i < samples.size(); ++i) {
    if (step.token_positions[i] < 0) continue;
    Sequence& seq = *step.ticket.tasks[i].seq;
    if (--seq.num_pending_tokens == 0) seq.pending_sample = -1;
    // Finished by an earlier token (EOS, a stop string, a cancel): this row ran for nothing.
    if (seq.status == SequenceStatus::kFinished) continue;
    append_token(seq, step.token_positions[i], samples[i]);
  }
}

void EngineLoop::finish_in_flight() {
  if (!in_flight_) return;
  finish_step(*in_flight_);
  in_flight_.reset();
  retired_.clear();
}

void EngineLoop::register_blocks(Sequence& seq) {
  // A preempted sequence's blocks are gone (swapped out): registered again once it is back.
  if (memory_.prefix_cache() == nullptr || seq.status != SequenceStatus::kRunning) return;
  const int32_t num_known = seq.num_known_tokens();
  const int32_t num_full = std::min(seq.num_computed_tokens, num_known) / parts_.options.block_size;
  if (seq.num_registered_blocks >= num_full) return;
  memory_.prefix_cache()->extend_block_hashes(std::span<const int32_t>(seq.token_ids).first(num_known),
                                     seq.request->request.cache_key, seq.block_hashes);
  const int32_t first = seq.num_registered_blocks, count = num_full - first, block_size = parts_.options.block_size;
  memory_.prefix_cache()->insert(
      {.hashes = std::span<const uint64_t>(seq.block_hashes).subspan(first, count),
       .block_ids = std::span<const int32_t>(seq.block_table).subspan(first, count),
       .token_ids = std::span<const int32_t>(seq.token_ids).subspan(first * block_size, count * block_size),
       .parent_hash = first > 0 ? std::optional<uint64_t>(seq.block_hashes[first - 1]) : std::nullopt});
  seq.num_registered_blocks = num_full;
}

// The other choices of an n > 1 request share the prompt's full KV blocks (refcounted),
// get a copy of the partly filled last block and of the SSM state; the ones returned sample
// their first token from the parent's logits row (the others prefill on their own).
std::vector<Sequence*> EngineLoop::fork_choices(Sequence& parent) {
  RequestState& request = *parent.request;
  std::vector<Sequence*> forked;
  request.forked = true;
  for (int32_t choice = 1; choice < request.request.n; ++choice) {
    auto child = make_sequence(parent.request, choice, parts_.tokenizer);
    child->id = next_sequence_id_++;
    child->arrival_order = parent.arrival_order;
    std::optional<ForkedMemory> memory = memory_.fork(parent.block_table, parent.num_prompt_tokens, parent.ssm_slot);
    if (memory) {
      child->block_table = std::move(memory->block_table);
      child->ssm_slot = memory->ssm_slot;
      child->num_computed_tokens = parent.num_computed_tokens;
      scheduler_.add_running(child.get());
      forked.push_back(child.get());
    } else {
      scheduler_.add_waiting(child.get());  // no room to share now: it prefills on its own
    }
    sequences_[request.request_id].push_back(std::move(child));
  }
  return forked;
}

void EngineLoop::append_token(Sequence& seq, int32_t position, const SampleResult& sample) {
  const SequenceEnd end = output_.append(seq, position, sample);
  register_blocks(seq);
  commit_unhashed_snapshots(seq);
  if (end.reason != FinishReason::kNone) finish(seq, end.reason, end.stop_reason);
}

void EngineLoop::finish(Sequence& seq, FinishReason reason, std::optional<std::string> stop_reason) {
  if (seq.status == SequenceStatus::kFinished) return;
  if (draft_) draft_->release(seq.id);
  if (mtp_) mtp_->release(seq.id);
  drop_unhashed_snapshots(seq);
  scheduler_.remove(&seq);
  output_.finish(seq, reason, std::move(stop_reason));
}

void EngineLoop::cancel_request(int64_t request_id) {
  auto it = sequences_.find(request_id);
  if (it == sequences_.end()) return;
  it->second.front()->request->cancelled = true;
  for (auto& seq : it->second) finish(*seq, FinishReason::kCancelled, std::nullopt);
}

// Finished requests' sequences retire: the step in flight may still name them.
void EngineLoop::publish() {
  for (const auto& request : output_.publish()) {
    auto it = sequences_.find(request->request_id);
    if (it == sequences_.end()) continue;
    for (auto& seq : it->second) retired_.push_back(std::move(seq));
    sequences_.erase(it);
  }
}

void EngineLoop::flush_kv_events() {
  if (kv_events_ && !kv_events_->flush())
    parts_.stats.update([](EngineStatsSnapshot& s) { ++s.kv_event_batches_dropped_total; });
}

void EngineLoop::update_gauges() {
  const BlockPool& pool = memory_.blocks();
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    s.num_running = scheduler_.num_running();
    s.num_waiting = scheduler_.num_waiting();
    s.kv_cache_usage = 1.0 - static_cast<double>(pool.num_free()) / pool.num_blocks();
    const PrefixCache* cache = memory_.prefix_cache();
    s.prefix_cached_blocks = cache ? cache->num_cached_blocks() : 0;
    s.ssm_snapshots = cache ? cache->num_snapshots() : 0;
    s.ssm_snapshot_bytes = cache ? cache->snapshot_bytes() : 0;
    if (const SnapshotHostTier* host = cache ? cache->host_tier() : nullptr) {
      const SnapshotHostTierCounters& c = host->counters();
      s.ssm_host_snapshots = host->num_snapshots();
      s.ssm_host_snapshot_bytes = host->bytes();
      s.ssm_host_stored_total = static_cast<uint64_t>(c.num_stored);
      s.ssm_host_restored_total = static_cast<uint64_t>(c.num_restored);
      s.ssm_host_stored_bytes_total = static_cast<uint64_t>(c.bytes_stored);
      s.ssm_host_restored_bytes_total = static_cast<uint64_t>(c.bytes_restored);
    }
    if (const SwapSpace* swap = memory_.swap_space()) {
      const SwapCounters& c = swap->counters();
      s.swapped_out_total = static_cast<uint64_t>(c.num_swapped_out);
      s.swapped_in_total = static_cast<uint64_t>(c.num_swapped_in);
      s.swap_out_bytes_total = static_cast<uint64_t>(c.bytes_swapped_out);
      s.swap_in_bytes_total = static_cast<uint64_t>(c.bytes_swapped_in);
      s.swap_space_used_bytes = c.bytes_held;
    }
  });
}

}  // namespace strata
