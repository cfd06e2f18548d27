// HttpServer: the OpenAI-compatible HTTP front (cpp-httplib): routes, the API key, the body
// limit, OpenAI error bodies for everything refused, and server-sent events for streams.
// Every handler runs under a catch-all, so no request can take the process down.
#pragma once

#include <atomic>
#include <memory>

#include "strata/server/served_model.h"
#include "strata/server/server_options.h"

namespace httplib {
class Server;
}

namespace strata::server {

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
  // Closes the listener and returns once serve() has returned.
  void stop();
  bool accepting() const;

 private:
  void add_routes();
  void add_guards();  // the API key, and error bodies for the library's own 404/405/413

  const ServedModel& model_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<bool> draining_{false};
};

}  // namespace strata::server
