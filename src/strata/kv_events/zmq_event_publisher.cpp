#include "strata/kv_events/zmq_event_publisher.h"

#include <zmq.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/kv_events/kv_event_encoding.h"

namespace strata {
namespace {

constexpr int kLingerMs = 1000;  // how long closing waits for queued messages to reach subscribers
constexpr auto kReplayPollInterval = std::chrono::milliseconds(10);

std::string big_endian_8(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i, value >>= 8) bytes[i] = static_cast<char>(value & 0xff);
  return bytes;
}

// vLLM's heuristic: wildcard, IPv6 any, ipc and inproc addresses are bound; others connected.
bool binds(const std::string& endpoint) {
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://");
}

// Binds (or connects) and returns the endpoint as bound.
std::string attach(void* socket, const std::string& endpoint, bool bind, const char* key) {
  const int rc = bind ? zmq_bind(socket, endpoint.c_str()) : zmq_connect(socket, endpoint.c_str());
  if (rc != 0)
    fail("--kv-events-config: cannot {} the {} socket to '{}': {}; pick a free port or a valid address",
         bind ? "bind" : "connect", key, endpoint, zmq_strerror(zmq_errno()));
  if (!bind) return endpoint;
  char last[256] = {};
  size_t size = sizeof(last);
  zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, last, &size);
  return last;
}

void set_int(void* socket, int option, int64_t value) {
  const int v = static_cast<int>(value);
  zmq_setsockopt(socket, option, &v, sizeof(v));
}

// A signal (strata serve's SIGTERM) may interrupt a send: it is tried again.
bool send_frames(void* socket, const std::vector<const std::string*>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    const int flags = i + 1 < frames.size() ? ZMQ_SNDMORE : 0;
    int rc;
    do rc = zmq_send(socket, frames[i]->data(), frames[i]->size(), flags); while (rc < 0 && zmq_errno() == EINTR);
    if (rc < 0) return false;
  }
  return true;
}

// Every frame of the next message, or none when nothing waits.
std::vector<std::string> receive_frames(void* socket) {
  std::vector<std::string> frames;
  int more = 1;
  while (more) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, socket, frames.empty() ? ZMQ_DONTWAIT : 0) < 0) {
      zmq_msg_close(&msg);
      return frames;
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
  }
  return frames;
}

}  // namespace

ZmqEventPublisher::ZmqEventPublisher(const KvEventsConfig& config) : config_(config) {
  context_ = zmq_ctx_new();
  pub_ = zmq_socket(context_, ZMQ_PUB);
  set_int(pub_, ZMQ_SNDHWM, config.hwm);
  set_int(pub_, ZMQ_LINGER, kLingerMs);
  const bool bind = binds(config.endpoint);
  try {
    endpoint_ = attach(pub_, config.endpoint, bind, "endpoint");
    if (config.replay_endpoint) {
      replay_ = zmq_socket(context_, ZMQ_ROUTER);
      set_int(replay_, ZMQ_LINGER, 0);
      replay_endpoint_ = attach(replay_, *config.replay_endpoint, /*bind=*/true, "replay_endpoint");
    }
  } catch (...) {
    zmq_close(pub_);
    if (replay_ != nullptr) zmq_close(replay_);
    zmq_ctx_term(context_);
    throw;
  }
  spdlog::info("kv events: publishing {} {} (topic '{}'{})", bind ? "on" : "to the subscriber at", endpoint_,
               config.topic, replay_ != nullptr ? ", replay on " + replay_endpoint_ : "");
  thread_ = std::thread([this] { run(); });
}

ZmqEventPublisher::~ZmqEventPublisher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  zmq_close(pub_);
  if (replay_ != nullptr) zmq_close(replay_);
  zmq_ctx_term(context_);
}

bool ZmqEventPublisher::publish(KvEventBatch batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int64_t>(queue_.size()) >= config_.max_queue_size) return false;
    queue_.push_back(std::move(batch));
  }
  wake_.notify_one();
  return true;
}

// Sends batches as they come; with a replay socket, looks for requests every few ms too.
void ZmqEventPublisher::run() {
  while (true) {
    std::deque<KvEventBatch> ready;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto has_work = [this] { return stopping_ || !queue_.empty(); };
      if (replay_ != nullptr) wake_.wait_for(lock, kReplayPollInterval, has_work); else wake_.wait(lock, has_work);
      ready.swap(queue_);
      if (ready.empty() && stopping_) return;
    }
    for (const KvEventBatch& batch : ready) send(batch);
    if (replay_ != nullptr) serve_replay();
  }
}

void ZmqEventPublisher::send(const KvEventBatch& batch) {
  const uint64_t seq = next_seq_++;
  std::string payload = encode_kv_event_batch(batch, /*data_parallel_rank=*/0);
  const std::string seq_bytes = big_endian_8(seq);
  if (!send_frames(pub_, {&config_.topic, &seq_bytes, &payload}))
    spdlog::warn("kv events: sending batch {} failed: {}", seq, zmq_strerror(zmq_errno()));
  if (config_.buffer_steps == 0) return;
  if (static_cast<int64_t>(sent_.size()) == config_.buffer_steps) sent_.pop_front();
  sent_.emplace_back(seq, std::move(payload));
}

// A request is [client id, empty, big-endian start (8 bytes)]; anything else is ignored, as vLLM does.
void ZmqEventPublisher::serve_replay() {
  for (std::vector<std::string> frames = receive_frames(replay_); !frames.empty(); frames = receive_frames(replay_)) {
    if (frames.size() != 3 || frames[2].empty() || frames[2].size() > 8) {
      spdlog::warn("kv events: ignoring a replay request of {} frames (want one frame: the start sequence number, "
                   "8 bytes big-endian)", frames.size() - 1);
      continue;
    }
    uint64_t start = 0;
    for (unsigned char c : frames[2]) start = (start << 8) | c;
    for (const auto& [seq, payload] : sent_)
      if (seq >= start) reply(frames[0], seq, payload);
    reply(frames[0], ~uint64_t{0}, std::string());  // -1: the end of the replay
  }
}

void ZmqEventPublisher::reply(const std::string& client, uint64_t seq, const std::string& payload) {
  const std::string empty, seq_bytes = big_endian_8(seq);
  if (!send_frames(replay_, {&client, &empty, &seq_bytes, &payload}))
    spdlog::warn("kv events: a replay answer failed: {}", zmq_strerror(zmq_errno()));
}

}  // namespace strata
