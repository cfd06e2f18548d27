// Server contract tests against a scripted GenerationService: exact response shapes, SSE
// framing, engine errors, JSON bodies for every refusal, and that a client hanging up
// cancels its request (streamed or not, generating or still queued).
#include "strata/server/http_server.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include <thread>

#include "server/http/raw_client_support.h"
#include "server/scripted_service_support.h"
#include "strata/server/json_fields.h"
#include "strata/text/id_tokenizer.h"

namespace strata::server {
namespace {

using test::ScriptedService;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = {.service = &service_, .tokenizer = tokenizer_.get(), .accepts_text = false, .served_name = "m",
              .accepted_names = {"m"}, .vocab_size = 100};
    start(ServerOptions{.port = 0, .num_http_threads = 8});
  }
  void start(const ServerOptions& options) {
    server_ = std::make_unique<HttpServer>(model_, options);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  void restart(const ServerOptions& options) {
    TearDown();
    start(options);
  }
  httplib::Result post(const std::string& path, const std::string& body) {
    httplib::Client client("127.0.0.1", port_);
    return client.Post(path.c_str(), body, "application/json");
  }

  std::unique_ptr<text::Tokenizer> tokenizer_ = text::make_id_tokenizer(100);
  ScriptedService service_;
  ServedModel model_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(HttpServerTest, CompletionBodyAndUsage) {
  auto res = post("/v1/completions", R"({"prompt": [1, 2], "max_tokens": 3, "return_token_ids": true})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const Json j = Json::parse(res->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["choices"][0]["text"], "abc");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["choices"][0]["token_ids"].dump(), "[0,1,2]");
  EXPECT_EQ(j["choices"][0]["prompt_token_ids"].dump(), "[1,2]");
  EXPECT_EQ(j["usage"].dump(),
            R"({"prompt_tokens":2,"completion_tokens":3,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0}})");
}

TEST_F(HttpServerTest, StreamIsServerSentEvents) {
  auto res = post("/v1/completions", R"({"prompt": [1], "max_tokens": 2, "stream": true,
                                         "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  std::vector<Json> events;
  size_t pos = 0;
  while (pos < res->body.size()) {
    const size_t end = res->body.find("\n\n", pos);
    ASSERT_NE(end, std::string::npos);
    const std::string event = res->body.substr(pos, end - pos);
    ASSERT_EQ(event.rfind("data: ", 0), 0u) << event;
    if (event == "data: [DONE]") {
      EXPECT_EQ(end + 2, res->body.size());
      break;
    }
    events.push_back(Json::parse(event.substr(6)));
    pos = end + 2;
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["choices"][0]["text"], "a");
  EXPECT_TRUE(events[0]["usage"].is_null());
  EXPECT_EQ(events[1]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[2]["choices"].size(), 0u);
  EXPECT_EQ(events[2]["usage"]["completion_tokens"], 2);
}

TEST_F(HttpServerTest, EngineErrorIs500) {
  auto res = post("/v1/completions", R"({"prompt": [99], "max_tokens": 2})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(Json::parse(res->body)["error"]["type"], "server_error");
  auto stream = post("/v1/completions", R"({"prompt": [99], "max_tokens": 2, "stream": true})");
  ASSERT_TRUE(stream);
  EXPECT_NE(stream->body.find("scripted failure"), std::string::npos);
  EXPECT_NE(stream->body.find("data: [DONE]"), std::string::npos);
}

TEST_F(HttpServerTest, TextNeedsATokenizer) {
  auto res = post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Json::parse(res->body)["error"]["param"], "messages");
}

TEST_F(HttpServerTest, HangingUpMidStreamCancels) {
  int chunks = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = R"({"prompt": [1], "max_tokens": 5000, "stream": true})";
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };
  {
    httplib::Client client("127.0.0.1", port_);
    client.send(req);
  }  // the client's socket closes here
  EXPECT_TRUE(service_.wait_cancelled(1, std::chrono::milliseconds(5000)));
}

// The client sends a request and leaves; its engine request must be cancelled promptly
// whether it was streamed or not, and whether it was generating (prompt 1) or still
// queued with no token yet (prompt 98).
TEST_F(HttpServerTest, ClientThatLeavesCancelsItsRequest) {
  int64_t id = 0;
  for (const char* body : {R"({"prompt": [1], "max_tokens": 5000})", R"({"prompt": [98], "max_tokens": 5})",
                           R"({"prompt": [98], "max_tokens": 5, "stream": true})"}) {
    {
      test::RawClient client(port_);
      ASSERT_TRUE(client.send(test::post_bytes("/v1/completions", body)));
      while (service_.num_submitted() == id) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++id;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(service_.wait_cancelled(id, std::chrono::milliseconds(2000))) << body;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500)) << body;
  }
}

TEST_F(HttpServerTest, RefusalsAreOpenAiErrors) {
  restart(ServerOptions{.port = 0, .api_key = "k", .max_body_bytes = 64, .num_http_threads = 4});
  const std::string key = "Authorization: Bearer k\r\n";
  const struct {
    std::string bytes;
    int status;
    const char* type;
  } cases[] = {
      {test::post_bytes("/v1/completions", "{}"), 401, "authentication_error"},
      {test::post_bytes("/v1/nothing", "{}", key), 404, "invalid_request_error"},
      {"GET /v1/completions HTTP/1.1\r\n" + key + "\r\n", 405, "invalid_request_error"},
      {test::post_bytes("/v1/completions", std::string(65, ' '), key), 413, "invalid_request_error"},
      {"POST /v1/completions HTTP/1.1\r\n" + key + "Transfer-Encoding: chunked\r\n\r\n41\r\n", 413,
       "invalid_request_error"},
      {"POST /v1/completions HTTP/1.1\r\n" + key + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400,
       "invalid_request_error"},
      {test::post_bytes("/v1/completions", "{", key), 400, "invalid_request_error"},
  };
  for (const auto& c : cases) {
    test::RawClient client(port_);
    ASSERT_TRUE(client.send(c.bytes));
    auto r = client.read_response();
    ASSERT_TRUE(r) << c.status;
    EXPECT_EQ(r->status, c.status) << c.bytes;
    EXPECT_EQ(r->header("content-type"), "application/json");
    const Json error = Json::parse(r->body)["error"];
    EXPECT_EQ(error["type"], c.type) << r->body;
    EXPECT_TRUE(error.contains("param") && error.contains("code")) << r->body;
  }
  test::RawClient health(port_);  // probes need no key
  ASSERT_TRUE(health.send("GET /health HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n"));
  auto ok = health.read_response();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto metrics = health.read_response();
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->header("content-type"), "text/plain; version=0.0.4");
}

TEST_F(HttpServerTest, DrainingRefusesGenerationAndFailsHealth) {
  server_->begin_drain();
  auto health = httplib::Client("127.0.0.1", port_).Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  auto res = post("/v1/completions", R"({"prompt": [1], "max_tokens": 2})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(Json::parse(res->body)["error"]["type"], "service_unavailable");
  EXPECT_EQ(post("/detokenize", R"({"tokens": [1]})")->status, 200);
}

TEST_F(HttpServerTest, ModelsRouteRetrievesOneModel) {
  httplib::Client client("127.0.0.1", port_);
  for (const char* path : {"/v1/models/m", "/v1/models/%6D"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    const Json j = Json::parse(res->body);
    EXPECT_EQ(j["id"], "m");
    EXPECT_EQ(j["object"], "model");
  }
  for (const char* path : {"/v1/models/nope", "/v1/models/m/x", "/v1/models/%zz"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(Json::parse(res->body)["error"]["code"], "model_not_found") << path;
  }
  EXPECT_EQ(Json::parse(client.Get("/v1/models")->body)["data"][0]["id"], "m");
}

TEST_F(HttpServerTest, RequestIdsAndCors) {
  restart(ServerOptions{.port = 0, .api_key = "k", .num_http_threads = 4, .allowed_origins = {"http://app:3000"}});
  httplib::Client client("127.0.0.1", port_);
  const httplib::Headers headers = {{"Authorization", "Bearer k"}, {"Origin", "http://app:3000"},
                                    {"X-Request-Id", "my-id-1"}};
  for (const char* body : {R"({"prompt": [1], "max_tokens": 2})", R"({"prompt": [1], "max_tokens": 2, "stream": true})"}) {
    auto res = client.Post("/v1/completions", headers, body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("x-request-id"), "my-id-1") << body;
    EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://app:3000") << body;
  }
  auto refused = client.Get("/v1/models", {{"Origin", "http://other"}});  // inline 401, with headers too
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("x-request-id").size(), 32u);
  EXPECT_FALSE(refused->has_header("Access-Control-Allow-Origin"));
  // A preflight carries no key; it is answered before the key is checked.
  auto preflight = client.Options("/v1/chat/completions", {{"Origin", "http://app:3000"},
                                                           {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Origin"), "http://app:3000");
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("authorization"), std::string::npos);
}

TEST_F(HttpServerTest, UnknownFieldsAre400UnlessIgnored) {
  auto res = post("/v1/completions", R"({"prompt": [1], "max_tokens": 2, "frobnicate": 1})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Json::parse(res->body)["error"]["param"], "frobnicate");
  EXPECT_EQ(post("/v1/completions", R"({"prompt": [1], "max_tokens": 2, "min_tokens": 1})")->status, 400);
  restart(ServerOptions{.port = 0, .num_http_threads = 4, .ignore_unknown_fields = true});
  EXPECT_EQ(post("/v1/completions", R"({"prompt": [1], "max_tokens": 2, "frobnicate": 1})")->status, 200);
  EXPECT_EQ(post("/v1/completions", R"({"prompt": [1], "max_tokens": 2, "min_tokens": 1})")->status, 400);
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  httplib::Client client("127.0.0.1", port_);
  client.set_keep_alive(true);
  for (int i = 0; i < 20; ++i) {
    auto res = client.Post("/v1/completions", R"({"prompt": [1], "max_tokens": 2})", "application/json");
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200);
  }
}

}  // namespace
}  // namespace strata::server
