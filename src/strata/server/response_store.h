// The conversations of recent /v1/responses answers, kept in memory so a follow-up can name
// one in previous_response_id. Bounded by count and by bytes: the oldest go first, so an
// id is findable only for a while (a miss is the client's 400, never a crash).
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "strata/server/json_fields.h"

namespace strata::server {

class ResponseStore {
 public:
  struct Limits {
    size_t max_responses = 1024;
    size_t max_bytes = size_t{256} << 20;  // of the kept conversations' JSON text
  };
  explicit ResponseStore(Limits limits) : limits_(limits) {}
  ResponseStore() : ResponseStore(Limits{}) {}

  // `messages`: the conversation in chat form up to and including the response's answer.
  // One larger than max_bytes is not kept.
  void put(const std::string& id, Json messages);
  std::optional<Json> get(const std::string& id) const;
  size_t size() const;
  const Limits& limits() const { return limits_; }

 private:
  struct Entry {
    Json messages;
    size_t bytes = 0;
  };
  void evict_oldest();

  Limits limits_;
  mutable std::mutex mutex_;
  std::deque<std::string> order_;  // oldest first
  std::unordered_map<std::string, Entry> entries_;
  size_t num_bytes_ = 0;
};

}  // namespace strata::server
