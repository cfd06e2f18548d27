#include "strata/kv_events/kv_events_config.h"

#include <limits>

#include "strata/core/error.h"
#include "strata/core/json_flag.h"

namespace strata {
namespace {

constexpr std::string_view kFlag = "--kv-events-config";
constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

std::string string_field(const nlohmann::json& config, const char* key, std::string fallback) {
  if (!config.contains(key)) return fallback;
  if (!config[key].is_string()) fail("{}: '{}' must be a string, got {}", kFlag, key, config[key].dump());
  return config[key].get<std::string>();
}

// An endpoint ZeroMQ understands: transport://address, a tcp port in range (libzmq wraps 99999).
std::string endpoint_field(const nlohmann::json& config, const char* key, std::string fallback) {
  std::string endpoint = string_field(config, key, std::move(fallback));
  if (endpoint.find("://") == std::string::npos || endpoint.ends_with("://"))
    fail("{}: '{}' must be a ZeroMQ endpoint like tcp://*:5557, got '{}'", kFlag, key, endpoint);
  const std::string port = endpoint.substr(endpoint.rfind(':') + 1);
  if (endpoint.starts_with("tcp://") && port != "*" &&
      (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
       std::stoi(port) > 65535))
    fail("{}: '{}' needs a port from 0 to 65535 (or *) after the last ':', got '{}'", kFlag, key, endpoint);
  return endpoint;
}

bool enabled(const nlohmann::json& config) {
  if (!config.contains("enable_kv_cache_events")) return false;
  if (!config["enable_kv_cache_events"].is_boolean())
    fail("{}: 'enable_kv_cache_events' must be true or false, got {}", kFlag, config["enable_kv_cache_events"].dump());
  return config["enable_kv_cache_events"].get<bool>();
}

}  // namespace

KvEventsConfig parse_kv_events_config(std::string_view json) {
  const nlohmann::json config = parse_json_flag(
      kFlag, json, R"({"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557"})");
  check_json_flag_keys(kFlag, config, {"enable_kv_cache_events", "publisher", "endpoint", "replay_endpoint",
                                       "buffer_steps", "hwm", "max_queue_size", "topic"});
  KvEventsConfig c;
  c.enable_kv_cache_events = enabled(config);
  const bool publisher_given = config.contains("publisher") && !config["publisher"].is_null();
  c.publisher = publisher_given ? string_field(config, "publisher", "") : (c.enable_kv_cache_events ? "zmq" : "null");
  if (c.publisher != "zmq" && c.publisher != "null")
    fail("{}: publisher '{}' is not supported; use \"zmq\" (a ZeroMQ PUB socket) or \"null\" (none)", kFlag,
         c.publisher);
  c.endpoint = endpoint_field(config, "endpoint", c.endpoint);
  if (config.contains("replay_endpoint") && !config["replay_endpoint"].is_null())
    c.replay_endpoint = endpoint_field(config, "replay_endpoint", "");
  c.buffer_steps = json_flag_int(kFlag, config, "buffer_steps", c.buffer_steps, 0, kMaxCount);
  c.hwm = json_flag_int(kFlag, config, "hwm", c.hwm, 0, kMaxCount);
  c.max_queue_size = json_flag_int(kFlag, config, "max_queue_size", c.max_queue_size, 1, kMaxCount);
  c.topic = string_field(config, "topic", c.topic);
  return c;
}

}  // namespace strata
