#include "strata/server/http_server.h"

#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/anthropic_messages.h"
#include "strata/server/api_key.h"
#include "strata/server/chat_completion.h"
#include "strata/server/embeddings_endpoint.h"
#include "strata/server/http/event_loop.h"
#include "strata/server/http/reply_writer.h"
#include "strata/server/http/response_bytes.h"
#include "strata/server/metrics_text.h"
#include "strata/server/models_endpoint.h"
#include "strata/server/openai_objects.h"
#include "strata/server/responses_endpoint.h"
#include "strata/server/score_endpoints.h"
#include "strata/server/stored_responses_endpoint.h"
#include "strata/server/text_completion.h"
#include "strata/server/tokenize_endpoints.h"
#include "strata/server/ui_route.h"

namespace strata::server {
namespace {

using http::HttpRequest;
using http::HttpResponse;
// What a handler may read besides the request.
struct RouteContext {
  const ServedModel& model;
  const RequestFieldPolicy& fields;
  const ServerOptions& options;
  const std::shared_ptr<ResponseStore>& responses;
};
using Handler = HttpReply (*)(const RouteContext&, const HttpRequest&, const ClientWatch&);

struct Route {
  const char* method;
  const char* path;
  bool open;        // served without the API key (probes)
  bool generation;  // refused with 503 while draining
  Handler handler;  // null: answered on the event loop (probes: cheap, and never queued behind streams)
  bool prefix = false;  // also serves paths under path (path ends in '/': the rest is an id)
  ErrorShape errors = ErrorShape::kOpenAi;  // the shape of its error bodies
};

// Pooling models' routes: parse, check the fields, handle.
template <ApiRoute kApiRoute, HttpReply (*kHandle)(const ServedModel&, const Json&, const ClientWatch&)>
HttpReply pooling_route(const RouteContext& c, const HttpRequest& r, const ClientWatch& w) {
  const Json body = parse_body(r.body);
  c.fields.check(body, kApiRoute);
  return kHandle(c.model, body, w);
}

std::string_view path_after(const HttpRequest& r, std::string_view prefix) {
  return std::string_view(r.path).substr(prefix.size());
}

// A path is served by one route per method (several for /v1/responses/{id}).
constexpr Route kRoutes[] = {
    {"POST", "/v1/chat/completions", false, true,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch& w) {
       require_task(c.model, ModelTask::kGenerate, "/v1/chat/completions");
       const Json body = parse_body(r.body);
       c.fields.check(body, ApiRoute::kChatCompletions);
       return chat_completion(c.model, c.options.reasoning_parser, body, w);
     }},
    {"POST", "/v1/messages", false, true,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch& w) {
       require_task(c.model, ModelTask::kGenerate, "/v1/messages");
       const Json body = parse_body(r.body);
       c.fields.check(body, ApiRoute::kMessages);
       return create_message(c.model, c.options.reasoning_parser, body, w);
     },
     /*prefix=*/false, ErrorShape::kAnthropic},
    {"POST", "/v1/messages/count_tokens", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) {
       const Json body = parse_body(r.body);
       c.fields.check(body, ApiRoute::kCountTokens);
       return count_message_tokens(c.model, c.options.reasoning_parser, body);
     },
     /*prefix=*/false, ErrorShape::kAnthropic},
    {"POST", "/v1/responses", false, true,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch& w) {
       require_task(c.model, ModelTask::kGenerate, "/v1/responses");
       const Json body = parse_body(r.body);
       c.fields.check(body, ApiRoute::kResponses);
       return create_response(c.model, c.options.reasoning_parser, body, c.responses, w);
     }},
    {"GET", "/v1/responses/", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) {
       return get_stored_response(*c.responses, path_after(r, "/v1/responses/"), r.target);
     },
     /*prefix=*/true},
    {"DELETE", "/v1/responses/", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) {
       return delete_stored_response(*c.responses, path_after(r, "/v1/responses/"), r.target);
     },
     /*prefix=*/true},
    {"POST", "/v1/responses/", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) {
       return cancel_stored_response(*c.responses, path_after(r, "/v1/responses/"), r.target);
     },
     /*prefix=*/true},
    {"POST", "/v1/completions", false, true,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch& w) {
       require_task(c.model, ModelTask::kGenerate, "/v1/completions");
       const Json body = parse_body(r.body);
       c.fields.check(body, ApiRoute::kCompletions);
       return text_completion(c.model, body, w);
     }},
    // vLLM serves score, rerank and classify with and without /v1 (and rerank under /v2).
    {"POST", "/v1/embeddings", false, true, pooling_route<ApiRoute::kEmbeddings, create_embeddings>},
    {"POST", "/v1/score", false, true, pooling_route<ApiRoute::kScore, score>},
    {"POST", "/score", false, true, pooling_route<ApiRoute::kScore, score>},
    {"POST", "/v1/rerank", false, true, pooling_route<ApiRoute::kRerank, rerank>},
    {"POST", "/rerank", false, true, pooling_route<ApiRoute::kRerank, rerank>},
    {"POST", "/v2/rerank", false, true, pooling_route<ApiRoute::kRerank, rerank>},
    {"POST", "/v1/classify", false, true, pooling_route<ApiRoute::kClassify, classify>},
    {"POST", "/classify", false, true, pooling_route<ApiRoute::kClassify, classify>},
    {"POST", "/tokenize", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) { return tokenize(c.model, parse_body(r.body)); }},
    {"POST", "/detokenize", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) { return detokenize(c.model, parse_body(r.body)); }},
    {"GET", "/v1/models", false, false,
     [](const RouteContext& c, const HttpRequest&, const ClientWatch&) { return list_models(c.model); }},
    {"GET", "/v1/models/", false, false,
     [](const RouteContext& c, const HttpRequest& r, const ClientWatch&) {
       return retrieve_model(c.model, path_after(r, "/v1/models/"));
     },
     /*prefix=*/true},
    {"GET", "/metrics", true, false, nullptr},
    {"GET", "/health", true, false, nullptr},
};

bool serves_path(const Route& r, const std::string& path, bool by_prefix) {
  if (!by_prefix) return path == r.path;
  return r.prefix && path.size() > std::strlen(r.path) && path.starts_with(r.path);
}

// The route for the path and method; else one for the path (answered with a 405), else null.
// An exact path wins over a prefix.
const Route* find_route(const std::string& path, const std::string& method) {
  for (const bool by_prefix : {false, true}) {
    const Route* other_method = nullptr;
    for (const Route& r : kRoutes) {
      if (!serves_path(r, path, by_prefix)) continue;
      if (method == r.method) return &r;
      if (other_method == nullptr) other_method = &r;
    }
    if (other_method != nullptr) return other_method;
  }
  return nullptr;
}

// "GET, DELETE": the methods of the routes of `route`'s path.
std::string allowed_methods(const Route& route) {
  std::string out;
  for (const Route& r : kRoutes)
    if (std::strcmp(r.path, route.path) == 0)
      out += (out.empty() ? "" : ", ") + std::string(r.method);
  return out;
}

// Runs one handler under a catch-all: every failure becomes an error body in the route's shape.
HttpReply run_handler(const Route& route, const RouteContext& context, const HttpRequest& request,
                      const ClientWatch& client) {
  const auto error_reply = [&](const ApiError& e) {
    return HttpReply{.status = e.status, .body = dump_json(error_body(e, route.errors))};
  };
  try {
    return route.handler(context, request, client);
  } catch (const ApiError& e) {
    return error_reply(e);
  } catch (const Error& e) {
    return error_reply(bad_request(e.what()));
  } catch (const nlohmann::json::exception& e) {
    return error_reply(bad_request(std::string("a field has the wrong type: ") + e.what()));
  } catch (const std::exception& e) {
    return error_reply(ApiError(500, std::string("internal error: ") + e.what(), "server_error"));
  } catch (...) {
    return error_reply(ApiError(500, "internal error", "server_error"));
  }
}

http::LoopOptions loop_options(const ServerOptions& o) {
  const auto ms = [](double seconds) { return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)); };
  return {.parser = {.max_header_bytes = o.max_header_bytes, .max_body_bytes = o.max_body_bytes},
          .header_timeout = ms(o.header_timeout_s),
          .body_timeout = ms(o.body_timeout_s),
          .keep_alive_timeout = ms(o.keep_alive_timeout_s),
          .send_timeout = ms(o.send_timeout_s),
          .max_connections = o.max_connections,
          .max_connections_per_client = o.max_connections_per_client,
          .num_workers = std::max(4, o.num_http_threads)};
}

}  // namespace

HttpServer::HttpServer(const ServedModel& model, const ServerOptions& options)
    : model_(model), options_(options), fields_(options.ignore_unknown_fields), headers_(options.allowed_origins),
      responses_(std::make_shared<ResponseStore>()) {}

HttpServer::~HttpServer() = default;

std::optional<HttpResponse> HttpServer::answer_inline(const HttpRequest& request) const {
  if (std::optional<HttpResponse> preflight = headers_.preflight(request)) return preflight;  // before the key
  std::optional<HttpResponse> response = route_inline(request);
  if (response)
    for (auto& header : headers_.for_request(request)) response->headers.push_back(std::move(header));
  return response;
}

std::optional<HttpResponse> HttpServer::route_inline(const HttpRequest& request) const {
  if (options_.ui)  // before the key: the page is public, its API calls are not
    if (std::optional<HttpResponse> page = ui_response(request)) return page;
  const Route* route = find_route(request.path, request.method);
  const ErrorShape shape = route != nullptr ? route->errors : ErrorShape::kOpenAi;
  const std::string* authorization = request.header("authorization");
  const std::string* x_api_key = request.header("x-api-key");
  if ((route == nullptr || !route->open) && !options_.api_key.empty() &&
      !authorized(authorization != nullptr ? *authorization : std::string(),
                  x_api_key != nullptr ? *x_api_key : std::string(), options_.api_key))
    return http::error_response(ApiError(401, "missing or wrong API key: send 'Authorization: Bearer <key>' or "
                                         "'x-api-key: <key>'",
                                         "authentication_error", "", "invalid_api_key"),
                                shape);
  if (route == nullptr)
    return http::error_response(ApiError(404, "no route " + request.method + " " + request.path, "invalid_request_error"));
  if (request.method != route->method) {
    HttpResponse r = http::error_response(
        ApiError(405, "method " + request.method + " is not allowed on " + request.path, "invalid_request_error"), shape);
    r.headers.emplace_back("Allow", allowed_methods(*route));
    return r;
  }
  const bool stopping = draining_ || !model_.service->running();
  if (route->handler == nullptr && request.path == "/metrics")
    return HttpResponse{.content_type = "text/plain; version=0.0.4",
                        .body = render_metrics(model_.service->replica_stats(), model_.served_name)};
  if (route->handler == nullptr) {  // /health
    if (stopping) return http::error_response(ApiError(503, "the engine is not running", "service_unavailable"));
    return HttpResponse{.body = "{}"};
  }
  if (route->generation && stopping)
    return http::error_response(ApiError(503, "the server is shutting down", "service_unavailable"), shape);
  return std::nullopt;
}

void HttpServer::answer(http::Exchange& exchange) const {
  const HttpRequest& request = exchange.request();
  const Route* route = find_route(request.path, request.method);
  STRATA_CHECK(route != nullptr && route->handler != nullptr);  // answer_inline let it through
  HttpReply reply = run_handler(*route, {.model = model_, .fields = fields_, .options = options_, .responses = responses_}, request, exchange.client());
  reply.headers = headers_.for_request(request);
  http::write_reply(std::move(reply), exchange);
}

int HttpServer::bind() {
  STRATA_CHECK(!loop_);
  // Every connection (and every refused one while it is answered) holds a descriptor.
  const int64_t wanted = 2 * static_cast<int64_t>(options_.max_connections) + 1024;
  const int64_t limit = http::raise_open_file_limit(wanted);
  if (limit < wanted)
    fmt::print(stderr, "note: the open-file limit is {} (ulimit -n), below the {} that --max-connections {} needs\n",
               limit, wanted, options_.max_connections);
  const http::Listener listener = http::open_listener(options_.host, options_.port);
  loop_ = std::make_unique<http::EventLoop>(
      listener, loop_options(options_),
      http::RequestHandlers{.answer_inline = [this](const HttpRequest& r) { return answer_inline(r); },
                            .answer = [this](http::Exchange& e) { answer(e); }});
  return listener.port;
}

void HttpServer::serve() {
  STRATA_CHECK(loop_);
  {
    std::lock_guard<std::mutex> lock(serve_mutex_);
    if (stop_requested_) return;
    serving_ = true;
  }
  loop_->run();
  {
    std::lock_guard<std::mutex> lock(serve_mutex_);
    serving_ = false;
  }
  served_.notify_all();
}

void HttpServer::stop() {
  std::unique_lock<std::mutex> lock(serve_mutex_);
  stop_requested_ = true;
  if (loop_) loop_->stop();
  served_.wait(lock, [&] { return !serving_; });
}

}  // namespace strata::server
