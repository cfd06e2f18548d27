// Server contract tests against a scripted GenerationService: exact response shapes, SSE
// framing, engine errors, and that a client hanging up mid-stream cancels its request.
#include "strata/server/http_server.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "strata/server/json_fields.h"
#include "strata/text/id_tokenizer.h"

namespace strata::server {
namespace {

// Each request streams "a", "b", ... one token per 2 ms until max_tokens or a cancel, or
// fails when the prompt starts with 99.
class ScriptedService final : public GenerationService {
 public:
  ~ScriptedService() override {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  std::shared_ptr<RequestStream> submit(GenerationRequest request) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto stream = std::make_shared<RequestStream>(next_id_++);
    threads_.emplace_back([this, stream, request] { play(*stream, request); });
    return stream;
  }
  void cancel(int64_t id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_.insert(id);
  }
  void shutdown(std::chrono::milliseconds) override {}
  bool running() const override { return true; }
  int32_t max_model_len() const override { return 8192; }
  EngineStatsSnapshot stats() const override { return {}; }
  bool was_cancelled(int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    return cancelled_.count(id) > 0;
  }

 private:
  void play(RequestStream& stream, const GenerationRequest& r) {
    const int32_t n = r.max_tokens;
    if (r.prompt_ids[0] == 99) return stream.push({.finished = true, .error = "scripted failure"});
    for (int32_t i = 0; i < n && !stop_; ++i) {
      RequestUpdate u{.num_prompt_tokens = static_cast<int32_t>(r.prompt_ids.size()), .num_generated_tokens = i + 1};
      ChoiceDelta d{.index = 0, .text = std::string(1, static_cast<char>('a' + i % 26)), .token_ids = {i}};
      if (was_cancelled(stream.request_id())) d.finish_reason = FinishReason::kCancelled;
      else if (i + 1 == n) d.finish_reason = FinishReason::kLength;
      u.finished = d.finish_reason != FinishReason::kNone;
      u.deltas.push_back(d);
      stream.push(std::move(u));
      if (u.finished) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  int64_t next_id_ = 1;
  std::set<int64_t> cancelled_;
  std::vector<std::thread> threads_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = {.service = &service_, .tokenizer = tokenizer_.get(), .accepts_text = false, .served_name = "m",
              .accepted_names = {"m"}, .vocab_size = 100};
    server_ = std::make_unique<HttpServer>(model_, ServerOptions{.port = 0, .num_http_threads = 8});
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
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
  for (int i = 0; i < 500 && !service_.was_cancelled(1); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(service_.was_cancelled(1));
}

}  // namespace
}  // namespace strata::server
