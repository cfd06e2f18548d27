// EventLoop over real sockets with short limits: slow and idle clients cost no thread and
// meet their deadlines, caps answer 503, bad framing is refused, pipelined requests are
// answered in order, a client that leaves marks its exchange gone, and stop() is quick.
#include "strata/server/http/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "server/http/raw_client_support.h"
#include "strata/server/http/response_bytes.h"

namespace strata::server::http {
namespace {

using std::chrono::milliseconds;
using test::RawClient;

constexpr LoopOptions kFast{.parser = {.max_header_bytes = 2048, .max_body_bytes = 1000},
                            .header_timeout = milliseconds(400),
                            .body_timeout = milliseconds(400),
                            .keep_alive_timeout = milliseconds(300),
                            .send_timeout = milliseconds(500),
                            .max_connections = 2000,
                            .max_connections_per_client = 1000,
                            .num_workers = 8};

std::string get(std::string_view path) { return fmt::format("GET {} HTTP/1.1\r\nHost: t\r\n\r\n", path); }

class EventLoopTest : public ::testing::Test {
 protected:
  void start(LoopOptions options = kFast) {
    const Listener listener = open_listener("127.0.0.1", 0);
    port_ = listener.port;
    RequestHandlers handlers{.answer_inline = [](const HttpRequest& r) -> std::optional<HttpResponse> {
                               if (r.path == "/inline") return HttpResponse{.body = "inline"};
                               return std::nullopt;
                             },
                             .answer = [this](Exchange& e) { answer(e); }};
    loop_ = std::make_unique<EventLoop>(listener, options, std::move(handlers));
    thread_ = std::thread([this] { loop_->run(); });
  }
  void TearDown() override {
    if (!loop_) return;
    loop_->stop();
    thread_.join();
  }

  void answer(Exchange& e) {
    const std::string& path = e.request().path;
    if (path == "/wait" || path == "/stream") {
      if (path == "/stream") e.send(stream_head(200, "text/event-stream", true, true));
      const std::string chunk = chunk_bytes(std::string(64 << 10, 'x'));
      while (!e.client().gone()) {
        if (path == "/stream" && !e.send(chunk)) break;
        std::this_thread::sleep_for(milliseconds(2));
      }
      saw_gone_ = true;
      return;
    }
    if (path == "/slow") std::this_thread::sleep_for(milliseconds(50));
    const std::string body = path == "/echo" ? e.request().body : path.substr(1);
    e.send(response_bytes(HttpResponse{.body = body}, e.request().keep_alive));
    e.finish(e.request().keep_alive);
  }

  int port_ = 0;
  std::unique_ptr<EventLoop> loop_;
  std::thread thread_;
  std::atomic<bool> saw_gone_{false};
};

TEST_F(EventLoopTest, TricklingHeadsHoldNothingAndGet408) {
  start();
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 40; ++i) slow.push_back(std::make_unique<RawClient>(port_, "127.0.0.2"));
  const std::string head = "GET /inline HTTP/1.1\r\nX-Padding: " + std::string(200, 'p');
  std::atomic<bool> done{false};
  std::thread trickle([&] {  // a byte per client every 20 ms: only a total deadline stops it
    for (size_t i = 0; i < head.size() && !done; ++i) {
      for (auto& c : slow) c->send(head.substr(i, 1));
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  for (int i = 0; i < 5; ++i) {
    RawClient fast(port_);
    const auto start_time = std::chrono::steady_clock::now();
    ASSERT_TRUE(fast.send(get("/slow")));
    auto r = fast.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - start_time, milliseconds(1000));
  }
  for (auto& c : slow) {
    auto r = c->read_response(milliseconds(2000));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 408);
    EXPECT_NE(r->body.find("\"message\""), std::string::npos);
    EXPECT_TRUE(c->closed_by_server(milliseconds(2000)));
  }
  done = true;
  trickle.join();
}

TEST_F(EventLoopTest, IdleConnectionsAreClosed) {
  start();
  RawClient used(port_), fresh(port_);
  ASSERT_TRUE(used.send(get("/inline")));
  ASSERT_TRUE(used.read_response());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(used.closed_by_server(milliseconds(2000)));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(200));
  EXPECT_FALSE(fresh.read_response(milliseconds(2000)));  // silent: nothing was asked
  EXPECT_TRUE(fresh.closed_by_server(milliseconds(1000)));
}

TEST_F(EventLoopTest, SlowBodyGets408) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nab"));
  auto r = c.read_response(milliseconds(2000));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_NE(r->body.find("request_timeout"), std::string::npos);
}

TEST_F(EventLoopTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send(get("/slow") + get("/inline") + test::post_bytes("/echo", "{\"x\":1}") + get("/slow")));
  for (const char* body : {"slow", "inline", "{\"x\":1}", "slow"}) {
    auto r = c.read_response();
    ASSERT_TRUE(r) << body;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, body);
  }
}

TEST_F(EventLoopTest, ConnectionCapsAnswer503) {
  LoopOptions options = kFast;
  options.max_connections = 3;
  options.max_connections_per_client = 2;
  start(options);
  RawClient a(port_, "127.0.0.2"), b(port_, "127.0.0.2");
  ASSERT_TRUE(a.send("GET"));  // both held open, mid-head
  ASSERT_TRUE(b.send("GET"));
  RawClient third(port_, "127.0.0.2");
  third.send(get("/inline"));
  auto r = third.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("--max-connections-per-client"), std::string::npos);
  RawClient other(port_, "127.0.0.3");  // another client still gets in
  other.send(get("/inline"));
  auto ok = other.read_response();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  RawClient over_total(port_, "127.0.0.4");
  over_total.send(get("/inline"));
  auto full = over_total.read_response();
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 503);
  EXPECT_NE(full->body.find("--max-connections"), std::string::npos);
}

TEST_F(EventLoopTest, ChunkedBodyOverLimitIs413WithoutReadingIt) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::atomic<int64_t> sent{0};
  std::thread sender([&] {
    const std::string chunk = chunk_bytes(std::string(64 << 10, 'z'));
    while (sent < (int64_t{256} << 20) && c.send(chunk)) sent += static_cast<int64_t>(chunk.size());
  });
  auto r = c.read_response();
  sender.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("request_too_large"), std::string::npos);
  EXPECT_LT(sent.load(), int64_t{64} << 20);
}

TEST_F(EventLoopTest, BadFramingIsRefusedAndClosed) {
  start();
  const std::pair<std::string, int> cases[] = {
      {"POST /echo HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
      {"POST /echo HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", 413},
      {"GET /inline HTTP/1.1\r\nX: " + std::string(3000, 'a'), 431},
      {"GET /inline HTTP/3\r\n\r\n", 505},
  };
  for (const auto& [bytes, status] : cases) {
    RawClient c(port_);
    c.send(bytes);
    auto r = c.read_response();
    ASSERT_TRUE(r) << status;
    EXPECT_EQ(r->status, status);
    EXPECT_EQ(r->header("connection"), "close");
    EXPECT_NE(r->body.find("invalid_request_error"), std::string::npos);
    EXPECT_TRUE(c.closed_by_server(milliseconds(2000)));
  }
}

TEST_F(EventLoopTest, ContinueThenBody) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"));
  auto cont = c.read_response();
  ASSERT_TRUE(cont);
  EXPECT_EQ(cont->status, 100);
  ASSERT_TRUE(c.send("body"));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "body");
}

TEST_F(EventLoopTest, ClientThatLeavesMarksTheExchangeGone) {
  start();
  for (const char* path : {"/wait", "/stream"}) {
    saw_gone_ = false;
    {
      RawClient c(port_);
      ASSERT_TRUE(c.send(get(path)));
      std::this_thread::sleep_for(milliseconds(50));
    }
    for (int i = 0; i < 200 && !saw_gone_; ++i) std::this_thread::sleep_for(milliseconds(5));
    EXPECT_TRUE(saw_gone_) << path;
  }
}

TEST_F(EventLoopTest, ClientThatStopsReadingIsDropped) {
  start();
  RawClient c(port_);
  ASSERT_TRUE(c.send(get("/stream")));  // and never read
  for (int i = 0; i < 600 && !saw_gone_; ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(saw_gone_);
}

TEST_F(EventLoopTest, BurstOfConnectionsIsAllAnswered) {
  start();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 600; ++i) {
    clients.push_back(std::make_unique<RawClient>(port_, fmt::format("127.0.1.{}", 1 + i % 10).c_str()));
    ASSERT_TRUE(clients.back()->send(get("/inline")));
  }
  int ok = 0;
  for (auto& c : clients) {
    auto r = c->read_response();
    ok += r && r->status == 200;
  }
  EXPECT_EQ(ok, 600);
}

TEST_F(EventLoopTest, StopIsQuickWithSlowIdleAndBusyClients) {
  start();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(std::make_unique<RawClient>(port_));
    clients.back()->send("GET /inl");  // mid-head
    clients.push_back(std::make_unique<RawClient>(port_));
    clients.back()->send(get("/inline"));  // then idle
    clients.back()->read_response();
  }
  clients.push_back(std::make_unique<RawClient>(port_));
  clients.back()->send(get("/wait"));  // answered by nobody until it is gone
  std::this_thread::sleep_for(milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  loop_->stop();
  thread_.join();
  loop_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1800));
  EXPECT_TRUE(saw_gone_);
  for (auto& c : clients) EXPECT_TRUE(c->closed_by_server(milliseconds(500)));
}

}  // namespace
}  // namespace strata::server::http
