#include "strata/bench/server_info.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace strata::bench {

std::pair<std::string, std::string> split_base_url(const std::string& base_url) {
  const size_t scheme = base_url.find("://");
  const size_t path = base_url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  std::string prefix = path == std::string::npos ? "" : base_url.substr(path);
  while (prefix.ends_with('/')) prefix.pop_back();
  return {base_url.substr(0, path), prefix};
}

std::optional<ServedModelCard> first_served_model(const std::string& base_url) {
  const auto [origin, prefix] = split_base_url(base_url);
  httplib::Client client(origin);
  client.set_connection_timeout(10);
  const httplib::Result result = client.Get(prefix + "/v1/models");
  if (!result || result->status != 200) return std::nullopt;
  const nlohmann::json body = nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("data") || !body["data"].is_array() || body["data"].empty()) return std::nullopt;
  const nlohmann::json& card = body["data"][0];
  if (!card.is_object() || !card.contains("id") || !card["id"].is_string()) return std::nullopt;
  return ServedModelCard{.id = card["id"].get<std::string>(),
                         .root = card.contains("root") && card["root"].is_string() ? card["root"].get<std::string>() : ""};
}

}  // namespace strata::bench
