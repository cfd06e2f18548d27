// Scheduler decisions with exact block ids: budget split, FCFS and priority order,
// chunked prefill, preemption of the newest sequence when blocks run out, a sequence alone
// short of blocks handed back rather than preempted, snapshots giving their SSM slots up, and
// a hybrid hit's branch point.
#include <gtest/gtest.h>

#include "strata/engine/scheduler.h"

namespace strata {
namespace {

struct Harness {
  // num_ssm_slots > 0: a hybrid model's SSM pool, whose slots the prefix cache may all take.
  explicit Harness(int32_t num_blocks, EngineOptions options, int num_ssm_slots = 0)
      : memory(parts(num_blocks, options.block_size, num_ssm_slots)), scheduler(options, memory) {
    if (num_ssm_slots > 0) memory.start_prefix_cache(num_ssm_slots);
  }
  static SequenceMemoryParts parts(int32_t num_blocks, int32_t block_size, int num_ssm_slots) {
    SequenceMemoryParts p{.blocks = std::make_unique<BlockPool>(num_blocks), .block_size = block_size,
                          .copy_kv_block = [](int32_t, int32_t) {}};
    if (num_ssm_slots == 0) return p;
    const std::vector<SsmLayerShape> layers{{4, 2}};
    p.ssm = std::make_unique<SsmStatePool>(layers, num_ssm_slots);
    p.verify = std::make_unique<VerifyStateBuffers>(layers, 4);
    return p;
  }
  Sequence& add(int32_t prompt_len, int32_t priority = 0) {
    auto request = std::make_shared<RequestState>();
    request->request.priority = priority;
    auto seq = std::make_unique<Sequence>();
    seq->id = static_cast<int64_t>(seqs.size());
    seq->arrival_order = seqs.size();
    seq->request = request;
    seq->token_ids.assign(prompt_len, 7);
    seq->num_prompt_tokens = prompt_len;
    seqs.push_back(std::move(seq));
    scheduler.add_waiting(seqs.back().get());
    return *seqs.back();
  }
  // Marks the plan as run: every scheduled row computed its tokens, and sequences whose
  // prompt is done got one new token.
  void run(const StepPlan& plan) {
    for (const ScheduledRow& row : plan.rows) {
      row.seq->num_computed_tokens += row.num_tokens;
      if (row.seq->num_tokens_behind() == 0) row.seq->token_ids.push_back(9);
    }
  }
  SequenceMemory memory;
  Scheduler scheduler;
  std::vector<std::unique_ptr<Sequence>> seqs;
};

TEST(Scheduler, DecodeRowsFirstThenPrefillChunksUnderTheBudget) {
  Harness h(64, {.max_num_batched_tokens = 40, .max_num_seqs = 8, .block_size = 16});
  Sequence& a = h.add(30);
  StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].num_tokens, 30);
  EXPECT_EQ(a.block_table, (std::vector<int32_t>{0, 1}));
  h.run(plan);
  Sequence& b = h.add(100);
  plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 2u);
  EXPECT_EQ(plan.rows[0].seq, &a);  // the decode row comes first
  EXPECT_EQ(plan.rows[0].num_tokens, 1);
  EXPECT_EQ(plan.rows[1].seq, &b);  // then a chunk of the new prompt: 39 of 100 tokens
  EXPECT_EQ(plan.rows[1].num_tokens, 39);
  EXPECT_EQ(b.block_table, (std::vector<int32_t>{2, 3, 4}));
}

TEST(Scheduler, WithoutChunkedPrefillALongPromptWaitsForAWholeBudget) {
  Harness h(64, {.max_num_batched_tokens = 50, .enable_chunked_prefill = false, .block_size = 16});
  h.add(60);
  EXPECT_TRUE(h.scheduler.schedule().rows.empty());
}

TEST(Scheduler, PriorityThenArrivalOrder) {
  Harness h(64, {.max_num_batched_tokens = 10, .max_num_seqs = 1, .block_size = 16});
  h.add(5, /*priority=*/1);
  Sequence& urgent = h.add(5, /*priority=*/0);
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].seq, &urgent);
}

TEST(Scheduler, PreemptsTheNewestWhenBlocksRunOut) {
  Harness h(4, {.max_num_batched_tokens = 64, .max_num_seqs = 4, .block_size = 16});
  Sequence& old_seq = h.add(32);  // blocks 0, 1
  Sequence& new_seq = h.add(32);  // blocks 2, 3
  h.run(h.scheduler.schedule());
  EXPECT_EQ(h.memory.blocks().num_free(), 0);
  // Both now need a third block; the newest is preempted and its blocks go to the oldest.
  const StepPlan plan = h.scheduler.schedule();
  EXPECT_EQ(plan.num_preempted, 1);
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].seq, &old_seq);
  // Released last block first, so block 3 heads the free queue.
  EXPECT_EQ(old_seq.block_table, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(new_seq.num_computed_tokens, 0);
  EXPECT_TRUE(new_seq.block_table.empty());
  EXPECT_EQ(h.scheduler.num_waiting(), 1);
  EXPECT_EQ(h.memory.blocks().free_queue(), (std::vector<int32_t>{2}));
}

// Last block first: the free queue is the prefix cache's LRU and a prefix's tail is the
// least likely part to be shared again.
TEST(Scheduler, RemoveReturnsBlocksToTheFreeQueueTailFirst) {
  Harness h(8, {.max_num_batched_tokens = 64, .block_size = 16});
  Sequence& a = h.add(40);
  h.run(h.scheduler.schedule());
  h.scheduler.remove(&a);
  EXPECT_EQ(h.memory.blocks().free_queue(), (std::vector<int32_t>{3, 4, 5, 6, 7, 2, 1, 0}));
}

// The pool cannot hold it even with nobody else running: preempting it would only bring it
// back to the same wall, so the plan hands it back to be finished ("length").
TEST(Scheduler, ASequenceAloneShortOfBlocksIsHandedBackNotPreempted) {
  Harness h(2, {.max_num_batched_tokens = 64, .block_size = 16});
  Sequence& a = h.add(32);
  h.run(h.scheduler.schedule());
  const StepPlan plan = h.scheduler.schedule();
  EXPECT_TRUE(plan.rows.empty());
  EXPECT_EQ(plan.num_preempted, 0);
  EXPECT_EQ(plan.out_of_blocks, (std::vector<Sequence*>{&a}));
  EXPECT_EQ(a.num_computed_tokens, 32);
}

// Pipeline micro-batches: with 2 to fill, a step takes half of the sequences it may run, the next
// step the rest; sequences in a micro-batch in flight are neither scheduled nor preempted.
TEST(Scheduler, MicroBatchesTakeTheirShareAndLeaveThoseInFlightAlone) {
  Harness h(64, {.max_num_batched_tokens = 64, .max_num_seqs = 8, .block_size = 16});
  for (int i = 0; i < 5; ++i) h.add(4);
  const StepPlan first = h.scheduler.schedule(/*num_micro_batches_left=*/2);
  ASSERT_EQ(first.rows.size(), 3u);  // ceil(5 / 2)
  for (const ScheduledRow& row : first.rows) row.seq->in_micro_batch = true;
  const StepPlan second = h.scheduler.schedule(1);
  ASSERT_EQ(second.rows.size(), 2u);
  EXPECT_EQ(second.rows[0].seq, h.seqs[3].get());
  EXPECT_EQ(second.rows[1].seq, h.seqs[4].get());
}

// Blocks run out while the oldest is in flight: the newest not in flight is preempted; with only
// sequences in flight left to take from, the one short waits instead of being handed back.
TEST(Scheduler, PreemptionSparesSequencesInFlight) {
  Harness h(4, {.max_num_batched_tokens = 64, .max_num_seqs = 4, .block_size = 16});
  Sequence& a = h.add(32);
  Sequence& b = h.add(16);
  Sequence& c = h.add(16);
  h.run(h.scheduler.schedule());
  EXPECT_EQ(h.memory.blocks().num_free(), 0);
  c.in_micro_batch = true;  // the newest: b goes instead
  StepPlan plan = h.scheduler.schedule(1);
  EXPECT_EQ(plan.num_preempted, 1);
  EXPECT_EQ(b.status, SequenceStatus::kWaiting);
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].seq, &a);
  h.run(plan);
  a.in_micro_batch = true;
  c.in_micro_batch = false;  // needs a third block, and only a (in flight) holds any
  plan = h.scheduler.schedule(1);
  EXPECT_TRUE(plan.rows.empty());
  EXPECT_EQ(plan.num_preempted, 0);
  EXPECT_TRUE(plan.out_of_blocks.empty());
}

// Its prompt fit one step; prompt and output (45 tokens) do not fit the 40-token budget.
TEST(Scheduler, WithoutChunkedPrefillAPreemptedSequenceRecomputesInChunks) {
  Harness h(64, {.max_num_batched_tokens = 40, .enable_chunked_prefill = false, .block_size = 16});
  Sequence& a = h.add(30);
  a.token_ids.resize(45, 9);  // as if it had generated 15 tokens, then been preempted
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(plan.rows[0].num_tokens, 40);
}

// Two slots, both holding prefix-cache snapshots: a new sequence takes the least recently
// used snapshot's slot rather than waiting for one forever.
TEST(Scheduler, SnapshotsGiveTheirSsmSlotsToSequences) {
  Harness h(8, {.max_num_batched_tokens = 64, .block_size = 16}, /*num_ssm_slots=*/2);
  PrefixCache& cache = *h.memory.prefix_cache();
  for (uint64_t hash : {11u, 12u}) cache.commit_snapshot(hash, *cache.reserve_snapshot(hash), 16);
  EXPECT_EQ(h.memory.ssm()->num_free(), 0);
  Sequence& a = h.add(10);
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_GE(a.ssm_slot, 0);
  EXPECT_FALSE(cache.has_snapshot(11));
  EXPECT_TRUE(cache.has_snapshot(12));
  h.scheduler.remove(&a);
  EXPECT_EQ(h.memory.ssm()->num_free(), 1);
}

// A hybrid prompt whose cached blocks go deeper (32 tokens) than the deepest snapshot (16)
// starts at the snapshot and marks the deeper boundary as its branch point.
TEST(Scheduler, HybridHitBelowTheCachedBlocksMarksTheBranchPoint) {
  Harness h(8, {.max_num_batched_tokens = 64, .block_size = 16}, /*num_ssm_slots=*/4);
  PrefixCache& cache = *h.memory.prefix_cache();
  // An earlier 48-token sequence of sevens on blocks 0, 1, 2, freed tail first.
  std::vector<int32_t> earlier;
  ASSERT_TRUE(h.memory.reserve(earlier, 48));
  std::vector<uint64_t> hashes;
  const std::vector<int32_t> sevens(48, 7);
  cache.extend_block_hashes(sevens, 0, hashes);
  cache.insert({.hashes = hashes, .block_ids = earlier, .token_ids = sevens});
  int32_t no_slot = -1;
  h.memory.free(earlier, no_slot);
  cache.commit_snapshot(hashes[0], *cache.reserve_snapshot(hashes[0]), 16);
  Sequence& a = h.add(40);  // 40 sevens: blocks 0 and 1 match, the last token is computed
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_EQ(a.num_computed_tokens, 16);
  EXPECT_EQ(a.branch_tokens, 32);
  EXPECT_EQ(plan.rows[0].num_tokens, 24);
  EXPECT_EQ(a.block_table, (std::vector<int32_t>{0, 3, 4}));
}

}  // namespace
}  // namespace strata
