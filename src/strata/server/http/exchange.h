// Exchange: one request in flight between the event loop and a worker. The worker queues the
// answer's bytes and says when it is complete; the loop takes them for the socket. While
// more than kMaxQueuedBytes wait, send() blocks (back-pressure on streams). A client that
// leaves, or a server that stops, marks the exchange gone: send() fails and the handler's
// ClientWatch tells it to give up.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "strata/server/http/http_request.h"
#include "strata/server/http_reply.h"

namespace strata::server::http {

class Exchange {
 public:
  static constexpr size_t kMaxQueuedBytes = 256 << 10;

  // `notify_loop` tells the event loop there is something to take; any thread may call it.
  Exchange(HttpRequest request, std::function<void()> notify_loop)
      : request_(std::move(request)), notify_loop_(std::move(notify_loop)) {}

  const HttpRequest& request() const { return request_; }
  const ClientWatch& client() const { return client_; }

  // Worker side. send: false once the client is gone (the bytes are dropped).
  bool send(std::string_view bytes);
  // The answer is complete; keep_alive: the connection may serve another request. Only
  // the first call counts.
  void finish(bool keep_alive);

  // Loop side: everything queued, and whether the answer is complete.
  struct Taken {
    std::string bytes;
    bool finished = false;
    bool keep_alive = false;
  };
  Taken take();
  void mark_gone();

 private:
  HttpRequest request_;
  std::function<void()> notify_loop_;
  ClientWatch client_;
  std::mutex mutex_;
  std::condition_variable drained_;
  std::string queued_;
  bool finished_ = false;
  bool keep_alive_ = false;
};

}  // namespace strata::server::http
