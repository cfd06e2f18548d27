// HttpServer: the OpenAI-compatible HTTP front: routes, the API key, the request fields each
// route takes, OpenAI error bodies for everything refused, x-request-id and CORS headers, and
// server-sent events for streams, served by the event loop and worker pool of http/ (limits
// on connections, time and sizes: ServerOptions). Every handler runs under a catch-all, so
// no request can take the process down.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "strata/server/request_field_policy.h"
#include "strata/server/response_store.h"
#include "strata/server/response_headers.h"
#include "strata/server/served_model.h"
#include "strata/server/server_options.h"

namespace strata::server {

namespace http {
class EventLoop;
class Exchange;
struct HttpRequest;
struct HttpResponse;
}  // namespace http

class HttpServer {
 public:
  // `model` must outlive the server.
  HttpServer(const ServedModel& model, const ServerOptions& options);
  ~HttpServer();

  // Binds the listening socket; returns the port. Throws strata::Error when it cannot.
  int bind();
  // Serves until stop(); call after bind().
  void serve();
  // New generation requests get 503 and /health turns 503; running ones continue.
  void begin_drain() { draining_ = true; }
  // Any thread: closes the listener and idle connections, gives answers in progress a
  // moment to finish, and returns once serve() has returned.
  void stop();
  bool accepting() const { return serving_ && !draining_; }

 private:
  // On the event loop: the answers that need no worker (CORS preflights, the chat page, 401,
  // 404, 405, /health, /metrics, 503 while draining) with their headers; nullopt for the rest.
  std::optional<http::HttpResponse> answer_inline(const http::HttpRequest& request) const;
  // The same without the headers every answer carries.
  std::optional<http::HttpResponse> route_inline(const http::HttpRequest& request) const;
  // On a worker.
  void answer(http::Exchange& exchange) const;

  const ServedModel& model_;
  ServerOptions options_;
  RequestFieldPolicy fields_;
  ResponseHeaders headers_;
  std::shared_ptr<ResponseStore> responses_;  // previous_response_id and /v1/responses/{id}; streams hold it too
  std::unique_ptr<http::EventLoop> loop_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> serving_{false};
  std::mutex serve_mutex_;
  std::condition_variable served_;
  bool stop_requested_ = false;
};

}  // namespace strata::server
