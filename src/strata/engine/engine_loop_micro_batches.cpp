// EngineLoop under pipeline parallelism with micro-batches in flight: an iteration starts the next
// micro-batch on stage 0 (over sequences no step in flight holds, their share of them), then reads
// back the oldest when the pipeline is full or nothing else could start. Its memory changes were
// made at start, in rank 0's order, which every stage follows; only sampling waits for the logits.
#include "strata/engine/engine_loop.h"

namespace strata {

void EngineLoop::run_micro_batches() {
  step_requests_.clear();
  idle_ = false;
  const int64_t num_in_flight = static_cast<int64_t>(micro_batches_.size());
  StepPlan plan = scheduler_.schedule(static_cast<int32_t>(max_micro_batches_ - num_in_flight));
  take_plan(plan);
  const bool started = !plan.rows.empty();
  const bool changed = started || !plan.out_of_blocks.empty() || plan.num_preempted > 0;
  if (started) start_micro_batch(std::move(plan));
  const bool full = static_cast<int64_t>(micro_batches_.size()) >= max_micro_batches_;
  const bool finishes = !micro_batches_.empty() && (full || !started);
  if (finishes) finish_micro_batch();
  idle_ = !changed && !finishes;
}

void EngineLoop::start_micro_batch(StepPlan plan) {
  std::vector<PlannedSnapshot> snapshots;
  StepBatch batch = make_batch(plan, snapshots);
  try {
    inject_fault();
    parts_.runner.start_micro_batch(batch);
  } catch (...) {
    cancel_snapshots(snapshots);
    throw;
  }
  advance_rows(plan, batch, snapshots);
  for (const ScheduledRow& r : plan.rows) r.seq->in_micro_batch = true;
  micro_batches_.push_back({.plan = std::move(plan), .batch = std::move(batch)});
  const auto num_in_flight = static_cast<int64_t>(micro_batches_.size());
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    s.max_micro_batches_in_flight = std::max(s.max_micro_batches_in_flight, num_in_flight);
  });
}

void EngineLoop::finish_micro_batch() {
  MicroBatch oldest = std::move(micro_batches_.front());
  micro_batches_.pop_front();
  for (const ScheduledRow& r : oldest.plan.rows) r.seq->in_micro_batch = false;
  for (const ScheduledRow& r : oldest.plan.rows) step_requests_.push_back(r.seq->request);
  const Tensor logits = parts_.runner.finish_micro_batch();
  InFlightStep step = sample_rows(oldest.plan, oldest.batch, logits);
  finish_step(step);
}

}  // namespace strata
