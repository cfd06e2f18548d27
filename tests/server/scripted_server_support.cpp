#include "server/scripted_server_support.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include "text/tokenizer_fixtures.h"

namespace strata::server::test {

ScriptedServer::ScriptedServer(ServerOptions options, const ToolParser* tool_parser) {
  model_ = {.service = &service_, .tokenizer = &::strata::test::fixture_tokenizer("qwen3"), .served_name = "m",
            .accepted_names = {"m"}, .vocab_size = 151936, .tool_parser = tool_parser};
  options.port = 0;
  options.num_http_threads = 4;
  server_ = std::make_unique<HttpServer>(model_, options);
  port_ = server_->bind();
  thread_ = std::thread([this] { server_->serve(); });
}

ScriptedServer::~ScriptedServer() {
  server_->stop();
  thread_.join();
}

Reply ScriptedServer::post(const std::string& path, const std::string& body,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  httplib::Client client("127.0.0.1", port_);
  httplib::Headers h;
  for (const auto& [name, value] : headers) h.emplace(name, value);
  auto res = client.Post(path, h, body, "application/json");
  EXPECT_TRUE(res);
  if (!res) return {};
  return {.status = res->status, .body = res->body, .allow = res->get_header_value("Allow")};
}

Reply ScriptedServer::send(const std::string& method, const std::string& path) {
  httplib::Client client("127.0.0.1", port_);
  auto res = method == "DELETE" ? client.Delete(path) : client.Get(path);
  EXPECT_TRUE(res) << method << " " << path;
  if (!res) return {};
  return {.status = res->status, .body = res->body, .allow = res->get_header_value("Allow")};
}

std::vector<Event> ScriptedServer::stream(const std::string& path, const std::string& body) {
  const Reply reply = post(path, body);
  EXPECT_EQ(reply.status, 200) << reply.body;
  return parse_events(reply.body);
}

std::vector<Event> parse_events(const std::string& body) {
  std::vector<Event> events;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    const std::string block = body.substr(pos, end - pos);
    pos = end + 2;
    Event e;
    for (size_t line = 0; line < block.size();) {
      size_t next = block.find('\n', line);
      if (next == std::string::npos) next = block.size();
      const std::string text = block.substr(line, next - line);
      if (text.starts_with("event: ")) e.name = text.substr(7);
      if (text.starts_with("data: ") && text != "data: [DONE]") e.data = Json::parse(text.substr(6));
      line = next + 1;
    }
    if (!e.data.is_null()) events.push_back(std::move(e));
  }
  return events;
}

}  // namespace strata::server::test
