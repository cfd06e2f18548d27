// EventLoop: one thread that accepts and reads every connection (epoll), so slow or idle
// clients cost a socket, never a thread. It enforces the total deadlines (a whole head, a
// whole body, keep-alive idleness, a client that stops reading), the connection caps (503
// past them), and hands each complete request to a worker, one at a time per connection so
// pipelined requests are answered in order. A client that hangs up marks its exchange gone.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "strata/server/http/connection.h"
#include "strata/server/http/listener.h"
#include "strata/server/http/worker_pool.h"

namespace strata::server::http {

struct LoopOptions {
  ParserLimits parser;
  std::chrono::milliseconds header_timeout{10000};      // accept (or first byte) to the end of the head
  std::chrono::milliseconds body_timeout{30000};        // end of the head to the end of the body
  std::chrono::milliseconds keep_alive_timeout{5000};   // idle between requests
  std::chrono::milliseconds send_timeout{30000};        // an answer waiting with no byte taken
  int max_connections = 1024;
  int max_connections_per_client = 64;  // per client IP address
  int num_workers = 96;
};

// What the loop does with a complete request.
struct RequestHandlers {
  // On the loop thread, must not block: an answer now (errors, /health), or nullopt.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> answer_inline;
  // On a worker: answers through the exchange (send, then finish).
  std::function<void(Exchange&)> answer;
};

class EventLoop {
 public:
  EventLoop(Listener listener, LoopOptions options, RequestHandlers handlers);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Serves until stop(), then gives answers in progress up to kStopGrace, closes every
  // connection and joins the workers.
  void run();
  // Any thread.
  void stop();

  static constexpr std::chrono::milliseconds kStopGrace{1000};

 private:
  void on_event(uint64_t id, uint32_t events, Clock::time_point now);
  void accept_all(Clock::time_point now);
  Connection& open_connection(int fd, std::string client, bool counted, Clock::time_point now);
  void take_notifications(Clock::time_point now);
  void service(Connection& c, Clock::time_point now);
  void advance(Connection& c, Clock::time_point now);
  bool parse_some(Connection& c, Clock::time_point now);
  void dispatch(Connection& c, HttpRequest request, Clock::time_point now);
  bool pump(Connection& c, Clock::time_point now);
  void end_answer(Connection& c, bool keep_alive, Clock::time_point now);
  void refuse(Connection& c, const FramingError& error, Clock::time_point now);
  void settle(Connection& c, Clock::time_point now);
  void sweep(Clock::time_point now);
  void expire(Connection& c, Clock::time_point now);
  void begin_stop(Clock::time_point now);
  void close_connection(uint64_t id);
  void watch(Connection& c);
  void notify(uint64_t id);

  Listener listener_;
  LoopOptions options_;
  RequestHandlers handlers_;
  WorkerPool workers_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  uint64_t next_id_ = 2;  // 0: the listener, 1: the wake-up
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, int> per_client_;
  int num_counted_ = 0;
  int num_refused_open_ = 0;
  Clock::time_point accept_paused_until_{};
  Clock::time_point last_sweep_{};
  bool stopping_ = false;
  Clock::time_point stop_deadline_{};

  std::atomic<bool> stop_requested_{false};
  std::mutex notify_mutex_;
  std::vector<uint64_t> notified_;  // connections whose exchange has news
};

}  // namespace strata::server::http
