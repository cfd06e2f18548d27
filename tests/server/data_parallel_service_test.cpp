#include "strata/server/data_parallel_service.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "strata/core/error.h"

namespace strata::server {
namespace {

// A replica that keeps what it is sent and numbers requests as engine replica `rank` of `size` does.
class FakeReplica final : public GenerationService {
 public:
  FakeReplica(int32_t rank, int32_t size) : next_id_(rank + 1), size_(size) {}
  std::shared_ptr<RequestStream> submit(GenerationRequest request) override {
    if (request.max_tokens < 0) fail("max_tokens must be at least 0");
    streams.push_back(std::make_shared<RequestStream>(next_id_));
    next_id_ += size_;
    return streams.back();
  }
  void cancel(int64_t id) override { cancelled.push_back(id); }
  void shutdown(std::chrono::milliseconds) override { is_running = false; }
  bool running() const override { return is_running; }
  int32_t max_model_len() const override { return model_len; }
  EngineStatsSnapshot stats() const override { return snapshot; }

  std::vector<std::shared_ptr<RequestStream>> streams;
  std::vector<int64_t> cancelled;
  EngineStatsSnapshot snapshot;
  bool is_running = true;
  int32_t model_len = 100;

 private:
  int64_t next_id_;
  int32_t size_;
};

struct Fixture {
  explicit Fixture(int32_t n) {
    for (int32_t r = 0; r < n; ++r) replicas.push_back(std::make_unique<FakeReplica>(r, n));
    std::vector<GenerationService*> services;
    for (auto& r : replicas) services.push_back(r.get());
    service = std::make_unique<DataParallelService>(services, DataParallelOptions{.block_size = 4,
                                                                                  .prefix_table_blocks = 64});
  }
  // The replica the request went to.
  int32_t send(std::vector<int32_t> prompt) {
    GenerationRequest request{.prompt_ids = std::move(prompt)};
    const std::shared_ptr<RequestStream> stream = service->submit(std::move(request));
    held.push_back(stream);
    return static_cast<int32_t>((stream->request_id() - 1) % static_cast<int64_t>(replicas.size()));
  }
  std::vector<std::unique_ptr<FakeReplica>> replicas;
  std::unique_ptr<DataParallelService> service;
  std::vector<std::shared_ptr<RequestStream>> held;
};

std::vector<int32_t> tokens(int32_t first, int32_t count) {
  std::vector<int32_t> out(static_cast<size_t>(count));
  std::iota(out.begin(), out.end(), first);
  return out;
}

TEST(DataParallelService, UnrelatedRequestsGoToTheReplicaWithFewestUnfinished) {
  Fixture f(2);
  EXPECT_EQ(f.send(tokens(100, 3)), 0);
  EXPECT_EQ(f.send(tokens(200, 3)), 1);
  EXPECT_EQ(f.send(tokens(300, 3)), 0);
  f.replicas[0]->streams[0]->push({.finished = true});
  f.replicas[0]->streams[1]->push({.finished = true});
  EXPECT_EQ(f.send(tokens(400, 3)), 0);  // 0 unfinished there, 1 on replica 1
  EXPECT_EQ(f.send(tokens(500, 3)), 0);  // 1 and 1: the lower index
  EXPECT_EQ(f.send(tokens(600, 3)), 1);
  EXPECT_EQ(f.service->num_submitted(), (std::vector<int64_t>{4, 2}));
}

TEST(DataParallelService, ASharedPrefixGoesWhereItWasCachedEvenWhenBusier) {
  Fixture f(2);
  EXPECT_EQ(f.send(tokens(0, 9)), 0);      // blocks [0..3], [4..7] remembered on replica 0
  EXPECT_EQ(f.send(tokens(500, 9)), 1);
  EXPECT_EQ(f.send(tokens(900, 2)), 0);    // replica 0 now holds 2 unfinished, replica 1 one
  std::vector<int32_t> shares = tokens(0, 8);
  shares.push_back(77);
  EXPECT_EQ(f.send(shares), 0);
  // 4 tokens: a hit must leave the last one to compute, so no whole block can match.
  EXPECT_EQ(f.send(tokens(0, 4)), 1);
}

TEST(DataParallelService, CancelGoesToTheReplicaThatHoldsTheRequest) {
  Fixture f(3);
  for (int i = 0; i < 3; ++i) f.send(tokens(100 * i, 2));
  f.service->cancel(f.held[1]->request_id());
  f.service->cancel(f.held[2]->request_id());
  EXPECT_TRUE(f.replicas[0]->cancelled.empty());
  EXPECT_EQ(f.replicas[1]->cancelled, (std::vector<int64_t>{2}));
  EXPECT_EQ(f.replicas[2]->cancelled, (std::vector<int64_t>{3}));
}

TEST(DataParallelService, ARefusedRequestCountsNowhere) {
  Fixture f(2);
  GenerationRequest bad{.prompt_ids = {1, 2}, .max_tokens = -1};
  EXPECT_THROW(f.service->submit(std::move(bad)), Error);
  EXPECT_EQ(f.service->num_submitted(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(f.send(tokens(1, 2)), 0);
}

TEST(DataParallelService, StatsSumHealthNeedsEveryReplica) {
  Fixture f(2);
  f.replicas[0]->snapshot = {.num_running = 2, .kv_cache_usage = 0.5, .prompt_tokens_total = 10};
  f.replicas[1]->snapshot = {.num_running = 1, .num_waiting = 4, .kv_cache_usage = 0.25, .prompt_tokens_total = 7};
  f.replicas[0]->snapshot.e2e_latency.observe(0.4);
  f.replicas[1]->snapshot.e2e_latency.observe(0.4);
  const EngineStatsSnapshot s = f.service->stats();
  EXPECT_EQ(s.num_running, 3);
  EXPECT_EQ(s.num_waiting, 4);
  EXPECT_EQ(s.prompt_tokens_total, 17u);
  EXPECT_DOUBLE_EQ(s.kv_cache_usage, 0.375);
  EXPECT_EQ(s.e2e_latency.count, 2u);
  EXPECT_EQ(s.e2e_latency.counts[1], 2u);  // le 0.5
  EXPECT_EQ(f.service->replica_stats().size(), 2u);
  f.replicas[1]->model_len = 80;
  EXPECT_EQ(f.service->max_model_len(), 80);
  EXPECT_TRUE(f.service->running());
  f.replicas[1]->is_running = false;
  EXPECT_FALSE(f.service->running());
}

}  // namespace
}  // namespace strata::server
