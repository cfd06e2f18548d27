#include "strata/server/response_store.h"

namespace strata::server {
namespace {

size_t json_bytes(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace).size(); }

}  // namespace

void ResponseStore::put(const std::string& id, StoredResponse entry) {
  const size_t bytes = json_bytes(entry.response) + json_bytes(entry.input_items) + json_bytes(entry.conversation);
  if (bytes > limits_.max_bytes || limits_.max_responses == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(id) > 0) return;  // ids are random: a repeat is not worth replacing
  while (!order_.empty() && (order_.size() >= limits_.max_responses || num_bytes_ + bytes > limits_.max_bytes))
    erase_entry(entries_.find(order_.front()));
  order_.push_back(id);
  entries_.emplace(id, Entry{.stored = std::move(entry), .bytes = bytes, .position = std::prev(order_.end())});
  num_bytes_ += bytes;
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.stored;
}

bool ResponseStore::erase(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  erase_entry(it);
  return true;
}

size_t ResponseStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::vector<std::string> ResponseStore::ids_oldest_first() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {order_.begin(), order_.end()};
}

void ResponseStore::erase_entry(std::unordered_map<std::string, Entry>::iterator it) {
  num_bytes_ -= it->second.bytes;
  order_.erase(it->second.position);
  entries_.erase(it);
}

}  // namespace strata::server
