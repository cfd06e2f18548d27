#include "strata/server/embeddings_endpoint.h"

#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/openai_objects.h"
#include "strata/server/pooling_run.h"
#include "strata/server/random_id.h"

namespace strata::server {

std::string base64_floats(const std::vector<float>& values) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());  // x86-64 and aarch64 Linux are little-endian
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = bytes[i], b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0, b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t triple = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(triple >> 18) & 63];
    out += kAlphabet[(triple >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(triple >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[triple & 63] : '=';
  }
  return out;
}

HttpReply create_embeddings(const ServedModel& model, const Json& body, const ClientWatch& client) {
  require_task(model, ModelTask::kEmbed, "/v1/embeddings");
  const std::vector<PoolingInput> inputs = read_body_inputs(model, body);
  const std::string format = read_string(body, "encoding_format").value_or("float");
  if (format != "float" && format != "base64")
    throw bad_request(fmt::format("'encoding_format' must be \"float\" or \"base64\", got {}", describe(Json(format))),
                      "encoding_format");
  const int32_t dimensions = static_cast<int32_t>(read_int(body, "dimensions", 1, INT32_MAX).value_or(0));
  const bool add_special_tokens = read_bool(body, "add_special_tokens").value_or(true);
  const int64_t max_tokens = read_truncation(model, body);
  std::vector<GenerationRequest> requests;
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back(inputs.size() > 1 ? fmt::format("input[{}]", i) : "input");
    requests.push_back(
        pooling_request(tokenize_input(model, inputs[i], add_special_tokens, names.back(), max_tokens), dimensions));
  }
  PoolingRun run(*model.service, std::move(requests), names);
  const std::vector<std::vector<float>> vectors = run.collect(client);
  Json j = envelope_json({.id = "embd-" + random_alnum(24), .created = unix_now(), .model = model.served_name}, "list");
  j["data"] = Json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    Json item{{"index", i}, {"object", "embedding"}};
    item["embedding"] = format == "base64" ? Json(base64_floats(vectors[i])) : Json(vectors[i]);
    j["data"].push_back(std::move(item));
  }
  j["usage"] = pooling_usage_json(run.num_prompt_tokens());
  return {.body = dump_json(j)};
}

}  // namespace strata::server
