// A live HttpServer on a ScriptedService with the real Qwen3 tokenizer (its template renders
// tools and thinking), for the contract tests of the routes on the chat path: requests by
// path and body, and event streams read back as (event name, data) pairs.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/scripted_service_support.h"
#include "strata/server/http_server.h"
#include "strata/server/json_fields.h"

namespace strata::server::test {

struct Reply {
  int status = 0;
  std::string body;
  std::string allow;  // the Allow header of a 405
};

struct Event {
  std::string name;  // the "event:" line, empty when none
  Json data;
};

class ScriptedServer {
 public:
  // `tool_parser`: the served model's (null: hermes).
  explicit ScriptedServer(ServerOptions options, const ToolParser* tool_parser = nullptr);
  ~ScriptedServer();

  ScriptedService& service() { return service_; }
  Reply post(const std::string& path, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers = {});
  // A request without a body: GET or DELETE.
  Reply send(const std::string& method, const std::string& path);
  // POST and read the body as server-sent events (a 200 is expected).
  std::vector<Event> stream(const std::string& path, const std::string& body);

 private:
  ScriptedService service_;
  ServedModel model_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

// A Qwen3 reply with its tags cut over tokens: thinking "Let me look.", content
// "\n\nChecking." and a call of get_weather with {"city": "Paris"}.
inline const std::vector<std::string> kThinkingTextAndCall = {
    "<th", "ink>", "Let me", " look.</th", "ink>\n\nChecking.",
    R"(<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>)"};

// The events of an SSE body; "data: [DONE]" is skipped.
std::vector<Event> parse_events(const std::string& body);

}  // namespace strata::server::test
