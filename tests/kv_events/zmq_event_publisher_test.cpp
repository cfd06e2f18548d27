// ZmqEventPublisher against libzmq's own SUB and REQ sockets: three frames (topic, 8-byte
// big-endian sequence number, the msgpack batch), numbers one apart, replay of the kept
// batches ending with [-1, empty], and an endpoint in use refused with an Error.
#include "strata/kv_events/zmq_event_publisher.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/kv_events/kv_event_encoding.h"

namespace strata {
namespace {

struct Socket {
  void* socket;
  Socket(void* context, int type) : socket(zmq_socket(context, type)) {
    const int linger = 0, timeout_ms = 500;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(socket, ZMQ_RCVTIMEO, &timeout_ms, sizeof(timeout_ms));
  }
  ~Socket() { zmq_close(socket); }
  // One message's frames; empty after the receive timeout.
  std::vector<std::string> receive() const {
    std::vector<std::string> frames;
    for (int more = 1; more;) {
      zmq_msg_t msg;
      zmq_msg_init(&msg);
      if (zmq_msg_recv(&msg, socket, 0) < 0) return zmq_msg_close(&msg), frames;
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
      more = zmq_msg_more(&msg);
      zmq_msg_close(&msg);
    }
    return frames;
  }
};

struct Context {
  void* context = zmq_ctx_new();
  ~Context() { zmq_ctx_term(context); }
};

uint64_t from_big_endian(const std::string& bytes) {
  uint64_t value = 0;
  for (unsigned char c : bytes) value = (value << 8) | c;
  return value;
}

KvEventBatch removal(uint64_t hash) { return {.timestamp_s = 1.0, .events = {BlockRemoved{.block_hashes = {hash}}}}; }

TEST(ZmqEventPublisher, FramesSequenceNumbersAndReplay) {
  ZmqEventPublisher publisher({.enable_kv_cache_events = true, .publisher = "zmq", .endpoint = "tcp://127.0.0.1:*",
                               .replay_endpoint = "tcp://127.0.0.1:*", .buffer_steps = 2, .topic = "kv"});
  Context ctx;
  Socket sub(ctx.context, ZMQ_SUB);
  ASSERT_EQ(zmq_connect(sub.socket, publisher.endpoint().c_str()), 0);
  zmq_setsockopt(sub.socket, ZMQ_SUBSCRIBE, "kv", 2);
  // A subscription takes a moment to reach the publisher: probe until one batch arrives.
  std::vector<std::string> frames;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (frames.empty() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(publisher.publish(removal(0)));
    frames = sub.receive();
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0], "kv");
  ASSERT_EQ(frames[1].size(), 8u);
  EXPECT_EQ(frames[2], encode_kv_event_batch(removal(0), 0));
  while (!sub.receive().empty()) {}  // later probes
  ASSERT_TRUE(publisher.publish(removal(41)));
  ASSERT_TRUE(publisher.publish(removal(42)));
  const std::vector<std::string> a = sub.receive(), b = sub.receive();
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(from_big_endian(b[1]), from_big_endian(a[1]) + 1);
  EXPECT_EQ(b[2], encode_kv_event_batch(removal(42), 0));

  // A DEALER sends the envelope a REQ would ([empty, start]) and reads every reply; a REQ
  // socket takes only the first of several replies.
  Socket dealer(ctx.context, ZMQ_DEALER);
  ASSERT_EQ(zmq_connect(dealer.socket, publisher.replay_endpoint().c_str()), 0);
  const std::string start = a[1];  // replays a, b, then the end
  ASSERT_EQ(zmq_send(dealer.socket, "", 0, ZMQ_SNDMORE), 0);
  ASSERT_EQ(zmq_send(dealer.socket, start.data(), start.size(), 0), 8);
  const std::vector<std::string> r1 = dealer.receive(), r2 = dealer.receive(), end = dealer.receive();
  EXPECT_EQ(r1, (std::vector<std::string>{"", a[1], a[2]}));
  EXPECT_EQ(r2, (std::vector<std::string>{"", b[1], b[2]}));
  EXPECT_EQ(end, (std::vector<std::string>{"", std::string(8, '\xff'), ""}));
  // From 0: only the last buffer_steps = 2 batches are kept, so the same two.
  ASSERT_EQ(zmq_send(dealer.socket, "", 0, ZMQ_SNDMORE), 0);
  ASSERT_EQ(zmq_send(dealer.socket, std::string(8, '\0').data(), 8, 0), 8);
  EXPECT_EQ(dealer.receive(), r1);
  EXPECT_EQ(dealer.receive(), r2);
  EXPECT_EQ(dealer.receive(), end);
}

TEST(ZmqEventPublisher, AnEndpointInUseIsAnError) {
  ZmqEventPublisher first({.enable_kv_cache_events = true, .publisher = "zmq", .endpoint = "tcp://*:*"});
  const std::string same_port = "tcp://*:" + first.endpoint().substr(first.endpoint().rfind(':') + 1);
  try {
    ZmqEventPublisher second({.enable_kv_cache_events = true, .publisher = "zmq", .endpoint = same_port});
    FAIL() << "bound twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot bind the endpoint socket to '" + same_port + "'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata
