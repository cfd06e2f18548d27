// EngineLoop: the state only the engine thread touches: sequences, the scheduler, and the
// inbox through which other threads hand over requests and cancellations. An iteration
// schedules a step, runs it, and hands the samples to the OutputProcessor.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "strata/engine/batch_sampler.h"
#include "strata/engine/draft_model.h"
#include "strata/engine/engine_options.h"
#include "strata/engine/engine_stats.h"
#include "strata/engine/kv_event_recorder.h"
#include "strata/engine/mtp_proposer.h"
#include "strata/engine/output_processor.h"
#include "strata/engine/model_runner.h"
#include "strata/engine/scheduler.h"
#include "strata/engine/sequence.h"
#include "strata/text/tokenizer.h"

namespace strata {

struct EngineLoopParts {
  ModelRunner& runner;
  const text::Tokenizer& tokenizer;
  std::vector<int32_t> eos_token_ids;
  EngineOptions options;  // async_scheduling resolved by the Engine
  int32_t max_model_len = 0;
  EngineStats& stats;
  ModelRunner* draft_runner = nullptr;  // the draft model's or the MTP module's (methods draft_model, mtp)
  KvEventPublisher* kv_events = nullptr;  // where the prefix cache's block events go; null: nowhere
};

class EngineLoop {
 public:
  // Starts the runner's prefix cache when the options ask for it; stops it when destroyed
  // (AllBlocksCleared, the last event published).
  explicit EngineLoop(EngineLoopParts parts);
  ~EngineLoop();

  // Thread-safe: called from HTTP threads.
  void enqueue(std::shared_ptr<RequestState> request);
  void cancel(int64_t request_id);
  void cancel_all();
  void wake();

  // Engine thread: one iteration (admit, cancel, schedule, run, sample). Waits briefly
  // when there is nothing to do. Returns whether any request is still in flight. With
  // async scheduling, the step queued by one iteration is read back by the next, after it
  // has queued its own step. Never throws: a step that throws fails its requests (and,
  // with async scheduling, those of the step in flight); a lost device fails them all.
  bool iterate();
  // Thread-safe. Why the device was lost, once it was: every request has failed, new ones
  // fail at once, and iterate() runs nothing more.
  std::optional<std::string> fatal_error() const;

 private:
  // A snapshot slot a step fills: inside the row (a cut in its SSM segments) or, at the
  // row's end, by a slot copy after the forward (decode rows keep their graph).
  struct PlannedSnapshot {
    Sequence* seq = nullptr;
    SnapshotPoint point;
    int32_t slot = -1;
    std::optional<uint64_t> hash;  // unset: the boundary's last token is still on the device
    bool at_row_end = false;
  };
  // A queued step whose samples the host has not read yet.
  struct InFlightStep {
    SampleTicket ticket;
    std::vector<int32_t> token_positions;  // [tasks]: where each sample goes in its token_ids; -1: a verify task
    // Rows that verified drafts: their k + 1 tasks start at first_task.
    struct Verify {
      Sequence* seq = nullptr;
      size_t first_task = 0;
      std::vector<int32_t> drafts;
      // Rejection sampling on the host (sampled requests, penalties): no sample tasks; the
      // tokens it kept and the one after them.
      bool on_host = false;
      int32_t num_accepted = 0;
      std::vector<SampleResult> host_samples;
    };
    std::vector<Verify> verifies;
  };
  // Pipeline stages (engine_loop_micro_batches.cpp): a step started on stage 0 whose logits are
  // not back yet; its sequences are in no other step until they are.
  struct MicroBatch {
    StepPlan plan;
    StepBatch batch;
  };

  void take_inbox();
  void start_request(const std::shared_ptr<RequestState>& request);
  // Schedule, launch, read back: everything of an iteration that may throw.
  void run_step();
  // What iterate() does with an exception of run_step().
  void recover(const std::exception& error);
  // Fails the requests of the step that threw; the others keep running.
  void fail_step(const std::string& message);
  // The device is lost: fails every request and closes the inbox.
  void fail_everything(const std::string& message);
  void fail_request(RequestState& request, const std::string& message);
  // Tests' FaultInjection: throws when this is the step it names.
  void inject_fault();
  // Queues the plan's forward and sampling; each sampled sequence gets a pending token.
  InFlightStep launch_step(const StepPlan& plan);
  // The plan's rows as a step (snapshots planned into `snapshots`).
  StepBatch make_batch(const StepPlan& plan, std::vector<PlannedSnapshot>& snapshots);
  // After the forward ran: the snapshots it filled, and each row's tokens counted as computed.
  void advance_rows(const StepPlan& plan, const StepBatch& batch, const std::vector<PlannedSnapshot>& snapshots);
  // What the logits give each row (prompt logprobs, pooled rows, samples, verifies), launched.
  InFlightStep sample_rows(const StepPlan& plan, const StepBatch& batch, const Tensor& logits);
  // The scheduler's side effects of a plan: finishing those out of blocks, counting preemptions.
  void take_plan(const StepPlan& plan);
  // Pipeline stages with micro-batches in flight (engine_loop_micro_batches.cpp): starts the
  // next micro-batch on stage 0, then reads back the oldest when the pipeline is full or
  // nothing else could start.
  void run_micro_batches();
  void start_micro_batch(StepPlan plan);
  void finish_micro_batch();
  StepRow make_row(const ScheduledRow& r, std::vector<PlannedSnapshot>& snapshots);
  bool wants_prompt_logprobs(const Sequence& seq) const;
  void add_prompt_logprobs(Sequence& seq, const StepRow& row, const Tensor& row_logits);
  void add_pending_tokens(InFlightStep& step);
  // A pooling request's outputs of this step's row (engine_loop_pooling.cpp): pooled on the
  // host; the row that completes the prompt finishes the request with its vector.
  void add_pooled_rows(Sequence& seq, const StepRow& row, const Tensor& outputs, int64_t first_output);
  // Reads the step's samples back and appends them (stop checks, streaming, finishing).
  void finish_step(InFlightStep& step);
  void finish_in_flight();
  // Speculative decoding (engine_loop_speculative.cpp): drafts (n-gram or the draft model's)
  // for the running decode sequences; the draft model also catches up on prompts.
  void propose_drafts();
  // SpeculativeOptions::draft_corruption: the benchmarks' acceptance control.
  void corrupt_drafts();
  // How many drafts the sequence may verify this step (0: none).
  int32_t max_drafts(const Sequence& seq) const;
  // A verify row's sampling: k + 1 argmax tasks (greedy without penalties), or rejection
  // sampling on the host now, against the distribution plain sampling would use.
  InFlightStep::Verify launch_verify(Sequence& seq, int32_t num_drafts, const Tensor& logits, int64_t logits_row,
                                     std::vector<SampleTask>& tasks);
  void verify_on_host(InFlightStep::Verify& verify, const Tensor& logits, int64_t logits_row);
  // Keeps the accepted drafts, rolls the SSM state (and the draft's) back to them and appends
  // the kept tokens and the one after them.
  void finish_verify(const InFlightStep::Verify& verify, std::span<const SampleResult> samples);
  void count_verified(int32_t num_drafts, int32_t num_accepted);
  // Whether a planned row needs the in-flight step's token on the host first (penalties).
  bool needs_tokens_on_host(const StepPlan& plan) const;
  // Hybrid models (engine_loop_snapshots.cpp): slots for the snapshot points the row's
  // known tokens cross (see SnapshotPolicy), then what happens to them after the forward.
  void plan_snapshots(Sequence& seq, int32_t num_tokens, StepRow& row, std::vector<PlannedSnapshot>& planned);
  void finish_snapshots(const std::vector<PlannedSnapshot>& planned);
  void cancel_snapshots(const std::vector<PlannedSnapshot>& planned);
  void commit_snapshot(Sequence& seq, const SnapshotPoint& point, uint64_t hash, int32_t slot);
  // Makes snapshot `hash` the answer's, freeing the answer's previous one if no match used it.
  void adopt_answer_snapshot(Sequence& seq, uint64_t hash);
  // Commits the sequence's unhashed snapshots whose block hash its known tokens now give.
  void commit_unhashed_snapshots(Sequence& seq);
  // The sequence ends before their tokens came back: their slots go back to the pool.
  void drop_unhashed_snapshots(Sequence& seq);
  // Makes the row's newly completed blocks findable in the prefix cache.
  void register_blocks(Sequence& seq);
  // The other choices of an n > 1 request, forked after the parent's prompt; returns those
  // that sample their first token from the parent's logits now.
  std::vector<Sequence*> fork_choices(Sequence& parent);
  // The output processor's work on a sample, then the blocks it completed go to the prefix cache.
  void append_token(Sequence& seq, int32_t position, const SampleResult& sample);
  // Frees what the sequence holds and queues its last delta (no-op once finished).
  void finish(Sequence& seq, FinishReason reason, std::optional<std::string> stop_reason);
  void cancel_request(int64_t request_id);
  void publish();
  // The iteration's prefix-cache events to the publisher, as one batch; a dropped one is counted.
  void flush_kv_events();
  void update_gauges();

  EngineLoopParts parts_;
  SequenceMemory& memory_;  // the runner's
  std::unique_ptr<DraftModel> draft_;  // speculative decoding with a draft model
  std::unique_ptr<MtpProposer> mtp_;   // or with the checkpoint's MTP module
  std::unique_ptr<KvEventRecorder> kv_events_;  // the prefix cache's event sink; null: not published
  std::mt19937_64 corruption_rng_{20260101};  // draft_corruption's draws (fixed: benchmarks repeat)
  SnapshotPolicy snapshot_policy_;
  Scheduler scheduler_;
  BatchSampler batch_sampler_;
  OutputProcessor output_;
  mutable std::mutex inbox_mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<RequestState>> inbox_;
  std::vector<int64_t> cancels_;
  bool cancel_all_ = false;
  std::optional<std::string> fatal_error_;  // under inbox_mutex_
  std::map<int64_t, std::vector<std::unique_ptr<Sequence>>> sequences_;  // by request id
  std::optional<InFlightStep> in_flight_;
  std::optional<InFlightStep> launched_;  // queued by this iteration, in flight from the next
  int64_t max_micro_batches_ = 1;  // > 1: pipeline stages, micro-batches in flight
  std::deque<MicroBatch> micro_batches_;  // started on stage 0, oldest first
  std::vector<std::shared_ptr<RequestState>> step_requests_;  // scheduled this iteration
  int64_t num_steps_launched_ = 0;
  bool idle_ = false;  // the last iteration ran nothing: wait for the inbox
  std::vector<std::unique_ptr<Sequence>> retired_;  // finished; the step in flight may name them
  bool async_scheduling_ = false;
  int64_t next_sequence_id_ = 0;
  uint64_t next_arrival_ = 0;
};

}  // namespace strata
