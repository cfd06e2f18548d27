#include "strata/server/http/exchange.h"

namespace strata::server::http {

bool Exchange::send(std::string_view bytes) {
  bool was_empty = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    drained_.wait(lock, [&] { return client_.gone() || queued_.size() < kMaxQueuedBytes; });
    if (client_.gone() || finished_) return false;
    was_empty = queued_.empty();
    queued_.append(bytes);
  }
  if (was_empty) notify_loop_();  // the loop takes everything queued, so one call per batch
  return true;
}

void Exchange::finish(bool keep_alive) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    keep_alive_ = keep_alive;
  }
  notify_loop_();
}

Exchange::Taken Exchange::take() {
  Taken out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out.bytes.swap(queued_);
    out.finished = finished_;
    out.keep_alive = keep_alive_;
  }
  drained_.notify_all();
  return out;
}

void Exchange::mark_gone() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    client_.mark_gone();
  }
  drained_.notify_all();
}

}  // namespace strata::server::http
