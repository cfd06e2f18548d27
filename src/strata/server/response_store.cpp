#include "strata/server/response_store.h"

namespace strata::server {

void ResponseStore::put(const std::string& id, Json messages) {
  const size_t bytes = messages.dump(-1, ' ', false, Json::error_handler_t::replace).size();
  if (bytes > limits_.max_bytes || limits_.max_responses == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(id) > 0) return;  // ids are random: a repeat is not worth replacing
  while (!order_.empty() && (order_.size() >= limits_.max_responses || num_bytes_ + bytes > limits_.max_bytes))
    evict_oldest();
  entries_.emplace(id, Entry{.messages = std::move(messages), .bytes = bytes});
  order_.push_back(id);
  num_bytes_ += bytes;
}

std::optional<Json> ResponseStore::get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.messages;
}

size_t ResponseStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void ResponseStore::evict_oldest() {
  const auto it = entries_.find(order_.front());
  num_bytes_ -= it->second.bytes;
  entries_.erase(it);
  order_.pop_front();
}

}  // namespace strata::server
