// --kv-events-config: vLLM's keys and defaults; what it refuses, and how it says so.
#include "strata/kv_events/kv_events_config.h"

#include <gtest/gtest.h>

#include "strata/core/error.h"

namespace strata {
namespace {

std::string error_of(const std::string& json) {
  try {
    parse_kv_events_config(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KvEventsConfig, VllmDefaultsAndTheZmqPublisherWhenEnabled) {
  const KvEventsConfig c = parse_kv_events_config(R"({"enable_kv_cache_events": true})");
  EXPECT_TRUE(c.publishes());
  EXPECT_EQ(c.publisher, "zmq");
  EXPECT_EQ(c.endpoint, "tcp://*:5557");
  EXPECT_FALSE(c.replay_endpoint.has_value());
  EXPECT_EQ(c.buffer_steps, 10000);
  EXPECT_EQ(c.hwm, 100000);
  EXPECT_EQ(c.max_queue_size, 100000);
  EXPECT_EQ(c.topic, "");
  EXPECT_FALSE(parse_kv_events_config(R"({"publisher": "zmq"})").publishes());  // not enabled
  EXPECT_FALSE(parse_kv_events_config(R"({"enable_kv_cache_events": true, "publisher": "null"})").publishes());
}

TEST(KvEventsConfig, EveryKeyIsRead) {
  const KvEventsConfig c = parse_kv_events_config(
      R"({"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "ipc:///tmp/kv", "replay_endpoint":
          "tcp://*:5558", "buffer_steps": 5, "hwm": 10, "max_queue_size": 3, "topic": "kv-events"})");
  EXPECT_EQ(c.endpoint, "ipc:///tmp/kv");
  EXPECT_EQ(c.replay_endpoint, "tcp://*:5558");
  EXPECT_EQ(c.buffer_steps, 5);
  EXPECT_EQ(c.hwm, 10);
  EXPECT_EQ(c.max_queue_size, 3);
  EXPECT_EQ(c.topic, "kv-events");
  EXPECT_FALSE(parse_kv_events_config(R"({"replay_endpoint": null})").replay_endpoint.has_value());
}

TEST(KvEventsConfig, RefusesWhatVllmWouldNotTake) {
  EXPECT_NE(error_of(R"({"enable_kv_cache_events": true, "publisher": "kafka"})")
                .find("publisher 'kafka' is not supported; use \"zmq\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"enable": true})").find("unknown key 'enable'"), std::string::npos);
  EXPECT_NE(error_of(R"({"enable_kv_cache_events": "yes"})").find("true or false"), std::string::npos);
  EXPECT_NE(error_of(R"({"hwm": -1})").find("'hwm' must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"max_queue_size": 0})").find("'max_queue_size'"), std::string::npos);
  EXPECT_NE(error_of(R"({"endpoint": "5557"})").find("ZeroMQ endpoint like tcp://*:5557"), std::string::npos);
  EXPECT_NE(error_of(R"({"endpoint": "tcp://*:99999"})").find("a port from 0 to 65535"), std::string::npos);
  EXPECT_NE(error_of(R"({"replay_endpoint": "tcp://host"})").find("a port from 0 to 65535"), std::string::npos);
  EXPECT_NE(error_of(R"({"topic": 3})").find("'topic' must be a string"), std::string::npos);
  EXPECT_NE(error_of("[1]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{").find("must be a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace strata
