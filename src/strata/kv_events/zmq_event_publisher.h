// vLLM's ZmqEventPublisher: each batch goes out on a PUB socket as three frames (topic, an
// 8-byte big-endian sequence number from 0, the msgpack KVEventBatch), and is kept for replay;
// a ROUTER socket (replay_endpoint) answers a request [8-byte start] with every kept batch
// from that sequence number on, as [seq, payload] frames, then [-1, empty]. The publisher
// thread owns both sockets; the engine thread only queues (bounded: publish() drops when full).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "strata/kv_events/kv_event_publisher.h"
#include "strata/kv_events/kv_events_config.h"

namespace strata {

class ZmqEventPublisher final : public KvEventPublisher {
 public:
  // Opens the sockets and starts the thread; an Error naming the endpoint when one cannot be
  // bound or connected (a port in use, a bad address).
  explicit ZmqEventPublisher(const KvEventsConfig& config);
  // Sends what is still queued, then closes (waiting at most a second for slow subscribers).
  ~ZmqEventPublisher() override;
  ZmqEventPublisher(const ZmqEventPublisher&) = delete;
  ZmqEventPublisher& operator=(const ZmqEventPublisher&) = delete;

  bool publish(KvEventBatch batch) override;
  // Where subscribers reach it: the endpoint as bound (a * port resolved), else as given.
  const std::string& endpoint() const { return endpoint_; }
  const std::string& replay_endpoint() const { return replay_endpoint_; }

 private:
  void run();
  void send(const KvEventBatch& batch);
  void serve_replay();
  void reply(const std::string& client, uint64_t seq, const std::string& payload);

  KvEventsConfig config_;
  void* context_ = nullptr;
  void* pub_ = nullptr;
  void* replay_ = nullptr;  // null without replay_endpoint
  std::string endpoint_, replay_endpoint_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<KvEventBatch> queue_;  // under mutex_
  bool stopping_ = false;           // under mutex_
  // Publisher thread only.
  uint64_t next_seq_ = 0;
  std::deque<std::pair<uint64_t, std::string>> sent_;  // the last buffer_steps batches, for replay
  std::thread thread_;
};

}  // namespace strata
