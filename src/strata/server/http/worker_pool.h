// WorkerPool: the threads that run complete requests (handlers may block on the engine; a
// stream holds its worker until it ends). Jobs run in the order posted.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::server::http {

class WorkerPool {
 public:
  explicit WorkerPool(int num_threads);
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void post(std::function<void()> job);
  // Runs the jobs already posted, then joins the threads; later posts are dropped.
  void stop();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::server::http
