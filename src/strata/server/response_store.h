// The recent /v1/responses answers, kept in memory so a follow-up can name one in
// previous_response_id and a client can read one back (GET), list its input items or delete
// it. Bounded by count and by bytes: the oldest go first, so an id is findable only for a
// while (a miss is the client's 400 or 404, never a crash).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/server/json_fields.h"

namespace strata::server {

struct StoredResponse {
  Json response;      // the response object as create answered it (the last event's, streamed)
  Json input_items;   // the request's input as items with ids, in the order sent
  Json conversation;  // chat messages up to and including the answer: what a follow-up continues
};

class ResponseStore {
 public:
  struct Limits {
    size_t max_responses = 1024;
    size_t max_bytes = size_t{256} << 20;  // of the kept entries' JSON text
  };
  explicit ResponseStore(Limits limits) : limits_(limits) {}
  ResponseStore() : ResponseStore(Limits{}) {}

  // Evicts the oldest until the entry fits; one larger than max_bytes alone is not kept.
  void put(const std::string& id, StoredResponse entry);
  std::optional<StoredResponse> get(const std::string& id) const;
  bool erase(const std::string& id);  // false when not held
  size_t size() const;
  std::vector<std::string> ids_oldest_first() const;
  const Limits& limits() const { return limits_; }

 private:
  struct Entry {
    StoredResponse stored;
    size_t bytes = 0;
    std::list<std::string>::iterator position;  // in order_
  };
  void erase_entry(std::unordered_map<std::string, Entry>::iterator it);

  Limits limits_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // ids, oldest first
  std::unordered_map<std::string, Entry> entries_;
  size_t num_bytes_ = 0;
};

}  // namespace strata::server
