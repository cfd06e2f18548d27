#include "strata/bench/serve_request.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "strata/bench/server_info.h"
#include "strata/bench/sse_reader.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr time_t kReadTimeoutS = 6 * 3600;  // vLLM's client waits 6 hours for a request

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

// The text a chunk's first choice carries (empty for role-only, finish and usage chunks).
std::string chunk_text(const Json& choice) {
  std::string text;
  const auto add = [&text](const Json& parent, const char* key) {
    const auto it = parent.find(key);
    if (it != parent.end() && it->is_string()) text += it->get<std::string>();
  };
  add(choice, "text");
  const auto delta = choice.find("delta");
  if (delta != choice.end() && delta->is_object()) {
    add(*delta, "reasoning_content");
    add(*delta, "content");
  }
  return text;
}

}  // namespace

bool is_chat_endpoint(const std::string& endpoint) { return endpoint.ends_with("/chat/completions"); }

std::string request_body(const ServeEndpoint& endpoint, const BenchRequest& request) {
  Json body{{"model", endpoint.model}, {"temperature", endpoint.temperature}, {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
  const Json prompt = request.prompt.empty() ? Json(request.prompt_ids) : Json(request.prompt);
  if (is_chat_endpoint(endpoint.endpoint)) {
    body["messages"] = Json::array({{{"role", "user"}, {"content", prompt}}});
    body["max_completion_tokens"] = request.expected_output_len;
  } else {
    body["prompt"] = prompt;
    body["max_tokens"] = request.expected_output_len;
  }
  if (endpoint.ignore_eos) body["ignore_eos"] = true;
  return body.dump();
}

void observe_chunk(std::string_view data, double now_s, RequestOutput& out, double& last_token_s) {
  if (data == "[DONE]") return;
  const Json chunk = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!chunk.is_object()) return;
  const auto usage = chunk.find("usage");
  if (usage != chunk.end() && usage->is_object()) {
    const auto tokens = usage->find("completion_tokens");
    if (tokens != usage->end() && tokens->is_number_integer()) out.output_tokens = tokens->get<int64_t>();
  }
  const auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return;
  const std::string text = chunk_text((*choices)[0]);
  if (text.empty()) return;
  if (last_token_s < 0) {
    out.ttft_s = now_s;
  } else {
    out.itl_s.push_back(now_s - last_token_s);
  }
  last_token_s = now_s;
  out.generated_text += text;
}

struct ServeClient::Connection {
  std::string origin, prefix;
  httplib::Client client;
  explicit Connection(std::pair<std::string, std::string> url)
      : origin(std::move(url.first)), prefix(std::move(url.second)), client(origin) {}
};

ServeClient::ServeClient(const std::string& base_url)
    : connection_(std::make_unique<Connection>(split_base_url(base_url))) {
  connection_->client.set_keep_alive(true);
  connection_->client.set_read_timeout(kReadTimeoutS);
}

ServeClient::~ServeClient() = default;

RequestOutput ServeClient::send(const ServeEndpoint& endpoint, const BenchRequest& request, Clock::time_point bench_start) {
  RequestOutput out{.prompt_len = request.prompt_len};
  httplib::Request req;
  req.method = "POST";
  req.path = connection_->prefix + endpoint.endpoint;
  req.body = request_body(endpoint, request);
  req.set_header("Content-Type", "application/json");
  SseReader reader;
  std::string raw;  // the body as it came, for an error message
  double last_token_s = -1;
  const Clock::time_point start = Clock::now();
  out.start_s = seconds(bench_start, start);
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    const double now_s = seconds(start, Clock::now());
    if (raw.size() < 4096) raw.append(data, std::min<size_t>(size, 4096));
    reader.feed({data, size}, [&](std::string_view payload) { observe_chunk(payload, now_s, out, last_token_s); });
    return true;
  };
  const httplib::Result result = connection_->client.send(req);
  out.latency_s = seconds(start, Clock::now());
  if (!result) {
    out.error = "cannot reach " + connection_->origin + ": " + httplib::to_string(result.error());
  } else if (result->status != 200) {
    out.error = "HTTP " + std::to_string(result->status) + ": " + raw.substr(0, 500);
  } else if (last_token_s < 0) {
    out.error = "Never received a valid chunk to calculate TTFT.";
  } else {
    out.success = true;
  }
  return out;
}

std::unique_ptr<ServeClient> ClientPool::take() {
  const std::lock_guard lock(mutex_);
  if (idle_.empty()) return std::make_unique<ServeClient>(base_url_);
  std::unique_ptr<ServeClient> client = std::move(idle_.back());
  idle_.pop_back();
  return client;
}

void ClientPool::give_back(std::unique_ptr<ServeClient> client) {
  const std::lock_guard lock(mutex_);
  idle_.push_back(std::move(client));
}

}  // namespace strata::bench
