#include "strata/server/http_server.h"

#include <httplib.h>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/api_key.h"
#include "strata/server/chat_completion.h"
#include "strata/server/metrics_text.h"
#include "strata/server/openai_objects.h"
#include "strata/server/text_completion.h"
#include "strata/server/tokenize_endpoints.h"

namespace strata::server {
namespace {

using Handler = std::function<HttpReply(const Json&)>;

constexpr const char* kPostPaths[] = {"/v1/chat/completions", "/v1/completions", "/tokenize", "/detokenize"};
constexpr const char* kGetPaths[] = {"/v1/models", "/health", "/metrics"};

void write_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dump_json(error_body(e)), "application/json");
}

void write_reply(HttpReply reply, httplib::Response& res) {
  res.status = reply.status;
  if (!reply.events) {
    res.set_content(reply.body, "application/json");
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  std::shared_ptr<EventSource> events = std::move(reply.events);
  // The provider holds the events; when the client is gone the write fails, httplib drops
  // the response, and the EventSource's destructor cancels the engine requests.
  res.set_chunked_content_provider("text/event-stream", [events](size_t, httplib::DataSink& sink) {
    std::string out;
    bool more = false;
    try {
      more = events->next(out);
    } catch (const std::exception&) {
      return false;
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (!more) sink.done();
    return true;
  });
}

// Runs one handler under a catch-all: every failure becomes an OpenAI error body.
void run_handler(const httplib::Request& req, httplib::Response& res, const Handler& handler) {
  try {
    write_reply(handler(parse_body(req.body)), res);
  } catch (const ApiError& e) {
    write_error(res, e);
  } catch (const Error& e) {
    write_error(res, bad_request(e.what()));
  } catch (const nlohmann::json::exception& e) {
    write_error(res, bad_request(std::string("a field has the wrong type: ") + e.what()));
  } catch (const std::exception& e) {
    write_error(res, ApiError(500, std::string("internal error: ") + e.what(), "server_error"));
  } catch (...) {
    write_error(res, ApiError(500, "internal error", "server_error"));
  }
}

bool is_known_path(const std::string& path) {
  for (const char* p : kPostPaths)
    if (path == p) return true;
  for (const char* p : kGetPaths)
    if (path == p) return true;
  return false;
}

}  // namespace

HttpServer::HttpServer(const ServedModel& model, const ServerOptions& options)
    : model_(model), options_(options), http_(std::make_unique<httplib::Server>()) {
  const int num_threads = std::max(4, options_.num_http_threads);
  http_->new_task_queue = [num_threads] { return new httplib::ThreadPool(static_cast<size_t>(num_threads)); };
  http_->set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  http_->set_keep_alive_max_count(1000);
  add_routes();
  add_guards();
}

HttpServer::~HttpServer() = default;

void HttpServer::add_routes() {
  const auto generation = [this](Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      if (draining_ || !model_.service->running())
        return write_error(res, ApiError(503, "the server is shutting down", "service_unavailable"));
      run_handler(req, res, handler);
    };
  };
  const ServedModel& m = model_;
  http_->Post("/v1/chat/completions", generation([&m](const Json& b) { return chat_completion(m, b); }));
  http_->Post("/v1/completions", generation([&m](const Json& b) { return text_completion(m, b); }));
  http_->Post("/tokenize", [&m](const httplib::Request& req, httplib::Response& res) {
    run_handler(req, res, [&m](const Json& b) { return tokenize(m, b); });
  });
  http_->Post("/detokenize", [&m](const httplib::Request& req, httplib::Response& res) {
    run_handler(req, res, [&m](const Json& b) { return detokenize(m, b); });
  });
  http_->Get("/v1/models", [&m](const httplib::Request&, httplib::Response& res) {
    auto card = [&m](const std::string& id, const std::string& root) {
      return Json{{"id", id}, {"object", "model"}, {"created", m.created_unix}, {"owned_by", "strata"},
                  {"root", root}, {"max_model_len", m.service->max_model_len()}};
    };
    Json cards = Json::array({card(m.served_name, m.model_path)});
    for (size_t i = 0; i < m.lora_names.size(); ++i) {
      cards.push_back(card(m.lora_names[i], m.lora_paths[i]));
      cards.back()["parent"] = m.served_name;
    }
    res.set_content(dump_json(Json{{"object", "list"}, {"data", cards}}), "application/json");
  });
  http_->Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_ || !model_.service->running())
      return write_error(res, ApiError(503, "the engine is not running", "service_unavailable"));
    res.set_content("{}", "application/json");
  });
  http_->Get("/metrics", [&m](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_metrics(m.service->stats(), m.served_name), "text/plain; version=0.0.4");
  });
}

void HttpServer::add_guards() {
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (options_.api_key.empty() || req.path == "/health" || req.path == "/metrics")
      return httplib::Server::HandlerResponse::Unhandled;
    if (authorized(req.get_header_value("Authorization"), options_.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    write_error(res, ApiError(401, "missing or wrong API key: send 'Authorization: Bearer <key>'",
                              "authentication_error", "", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  const int64_t limit = options_.max_body_bytes;
  http_->set_error_handler(httplib::Server::HandlerWithResponse([limit](const httplib::Request& req,
                                                                        httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
      write_error(res, ApiError(413, fmt::format("the request body is over the server's limit of {} bytes", limit),
                                "invalid_request_error", "", "request_too_large"));
    } else if (res.status == 404 && is_known_path(req.path)) {
      write_error(res, ApiError(405, "method " + req.method + " is not allowed on " + req.path,
                                "invalid_request_error"));
    } else if (res.status == 404) {
      write_error(res, ApiError(404, "no route " + req.method + " " + req.path, "invalid_request_error"));
    } else {
      write_error(res, ApiError(res.status, "the request could not be served", "invalid_request_error"));
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
}

int HttpServer::bind() {
  const int port = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                      : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port <= 0)
    fail("cannot listen on {}:{} (address in use or not available); pick another --host/--port", options_.host,
         options_.port);
  return port;
}

void HttpServer::serve() { http_->listen_after_bind(); }

void HttpServer::stop() { http_->stop(); }

bool HttpServer::accepting() const { return http_->is_running() && !draining_; }

}  // namespace strata::server
