#include "strata/server/score_endpoints.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/openai_objects.h"
#include "strata/server/pooling_run.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

struct Scores {
  std::vector<double> values;  // one per pair
  int64_t num_prompt_tokens = 0;
};

// A scoring route's model: a one-label classifier or an embedding model; the base model's name.
void check_scoring_model(const ServedModel& model, const Json& body, const char* route) {
  if (model.pooler == nullptr) require_task(model, ModelTask::kClassify, route);
  if (model.pooler->head == ModelHead::kClassifier && model.pooler->num_labels != 1)
    throw bad_request(fmt::format("{} scores with a one-label classifier (a cross-encoder); this model has {} labels: "
                                  "use /v1/classify", route, model.pooler->num_labels), "model");
  const std::optional<std::string> name = read_string(body, "model");
  if (check_model_name(model, name ? &*name : nullptr) >= 0)
    throw bad_request("LoRA adapters serve generation only; name the base model", "model");
}

std::string read_text(const Json& value, const std::string& name) {
  if (!value.is_string()) throw bad_request(fmt::format("{} must be a string, got {}", name, describe(value)), name);
  if (value.get_ref<const std::string&>().empty()) throw bad_request(fmt::format("{} is an empty string", name), name);
  return value.get<std::string>();
}

// A string, or a non-empty list of strings (at most kMaxPoolingInputs).
std::vector<std::string> read_texts(const Json& body, const char* field) {
  const Json* value = find_field(body, field);
  if (value == nullptr) throw bad_request(fmt::format("'{}' is required", field), field);
  if (!value->is_array()) return {read_text(*value, field)};
  if (value->empty() || value->size() > kMaxPoolingInputs)
    throw bad_request(fmt::format("'{}' must be a string or a list of 1 to {} strings", field, kMaxPoolingInputs), field);
  std::vector<std::string> texts;
  for (size_t i = 0; i < value->size(); ++i) texts.push_back(read_text((*value)[i], fmt::format("{}[{}]", field, i)));
  return texts;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
  }
  return dot / std::max(std::sqrt(aa) * std::sqrt(bb), 1e-12);
}

struct ScoreInputs {
  bool add_special_tokens = true;
  int64_t max_tokens = 0;  // > 0: each pair (cross-encoder) or text (embedding model) cut to it
};

// The (query, document) pair as one sequence and its segments, cut to inputs.max_tokens.
GenerationRequest pair_request(const ServedModel& model, const std::string& a, const std::string& b,
                               const ScoreInputs& inputs, const std::string& name) {
  // The pair's segments: BERT reads them, the engine drops them for models without token types.
  auto type_ids = std::make_shared<std::vector<int32_t>>();
  GenerationRequest request;
  try {
    request = pooling_request(model.tokenizer->encode_pair(a, b, inputs.add_special_tokens, type_ids.get(),
                                                           inputs.max_tokens));
  } catch (const Error& e) {
    throw bad_request(fmt::format("{}: {}", name, e.what()), "truncate_prompt_tokens");
  }
  request.token_type_ids = std::move(type_ids);
  return request;
}

// Scores of (firsts[i], seconds[i]) pairs; firsts may hold one text for all.
Scores score_pairs(const ServedModel& model, const std::vector<std::string>& firsts,
                   const std::vector<std::string>& seconds, const ScoreInputs& inputs, const ClientWatch& client) {
  const auto first = [&](size_t i) -> const std::string& { return firsts[firsts.size() == 1 ? 0 : i]; };
  std::vector<GenerationRequest> requests;
  std::vector<std::string> names;
  if (model.pooler->head == ModelHead::kClassifier) {
    if (!model.accepts_text) throw bad_request("this model was loaded without a tokenizer; scoring needs text", "model");
    for (size_t i = 0; i < seconds.size(); ++i) {
      names.push_back(fmt::format("pair {}", i));
      requests.push_back(pair_request(model, first(i), seconds[i], inputs, names.back()));
    }
    PoolingRun run(*model.service, std::move(requests), names);
    Scores scores{.num_prompt_tokens = run.num_prompt_tokens()};
    for (const std::vector<float>& v : run.collect(client)) scores.values.push_back(v.at(0));
    return scores;
  }
  // An embedding model: each text embedded, then the cosines of the pairs.
  std::vector<std::string> texts = firsts;
  texts.insert(texts.end(), seconds.begin(), seconds.end());
  for (size_t i = 0; i < texts.size(); ++i) {
    names.push_back(fmt::format("text {}", i));
    requests.push_back(
        pooling_request(tokenize_input(model, texts[i], inputs.add_special_tokens, names.back(), inputs.max_tokens)));
  }
  PoolingRun run(*model.service, std::move(requests), names);
  const std::vector<std::vector<float>> vectors = run.collect(client);
  Scores scores{.num_prompt_tokens = run.num_prompt_tokens()};
  if (vectors.empty()) return scores;  // the client left
  for (size_t i = 0; i < seconds.size(); ++i)
    scores.values.push_back(cosine(vectors[firsts.size() == 1 ? 0 : i], vectors[firsts.size() + i]));
  return scores;
}

}  // namespace

HttpReply score(const ServedModel& model, const Json& body, const ClientWatch& client) {
  check_scoring_model(model, body, "/v1/score");
  const std::vector<std::string> firsts = read_texts(body, "text_1"), seconds = read_texts(body, "text_2");
  if (firsts.size() != 1 && firsts.size() != seconds.size())
    throw bad_request(fmt::format("text_1 has {} texts and text_2 {}: give text_1 one text (scored against each of "
                                  "text_2) or as many as text_2 (scored pairwise)", firsts.size(), seconds.size()),
                      "text_1");
  const ScoreInputs inputs{.add_special_tokens = read_bool(body, "add_special_tokens").value_or(true),
                           .max_tokens = read_truncation(model, body)};
  const Scores scores = score_pairs(model, firsts, seconds, inputs, client);
  Json j = envelope_json({.id = "score-" + random_alnum(24), .created = unix_now(), .model = model.served_name}, "list");
  j["data"] = Json::array();
  for (size_t i = 0; i < scores.values.size(); ++i)
    j["data"].push_back(Json{{"index", i}, {"object", "score"}, {"score", scores.values[i]}});
  j["usage"] = pooling_usage_json(scores.num_prompt_tokens);
  return {.body = dump_json(j)};
}

HttpReply rerank(const ServedModel& model, const Json& body, const ClientWatch& client) {
  check_scoring_model(model, body, "/v1/rerank");
  const Json* query = find_field(body, "query");
  if (query == nullptr) throw bad_request("'query' is required", "query");
  const Json* documents = find_field(body, "documents");
  if (documents == nullptr || !documents->is_array() || documents->empty() || documents->size() > kMaxPoolingInputs)
    throw bad_request(fmt::format("'documents' must be a list of 1 to {} strings or {{\"text\": ...}} objects",
                                  kMaxPoolingInputs), "documents");
  std::vector<std::string> texts;
  for (size_t i = 0; i < documents->size(); ++i) {
    const Json& d = (*documents)[i];
    const std::string name = fmt::format("documents[{}]", i);
    texts.push_back(read_text(d.is_object() && d.contains("text") ? d["text"] : d, name));
  }
  const int64_t num_docs = static_cast<int64_t>(texts.size());
  const int64_t top_n = read_int(body, "top_n", 0, INT32_MAX).value_or(0);
  const bool return_documents = read_bool(body, "return_documents").value_or(true);
  const Scores scores =
      score_pairs(model, {read_text(*query, "query")}, texts, {.max_tokens = read_truncation(model, body)}, client);
  std::vector<size_t> order(scores.values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores.values[a] > scores.values[b]; });
  if (top_n > 0 && top_n < num_docs) order.resize(static_cast<size_t>(top_n));
  Json j{{"id", "rerank-" + random_alnum(24)}, {"model", model.served_name}};
  j["usage"] = pooling_usage_json(scores.num_prompt_tokens);
  j["results"] = Json::array();
  for (size_t i : order) {
    Json r{{"index", i}};
    if (return_documents) r["document"] = Json{{"text", texts[i]}};
    r["relevance_score"] = scores.values[i];
    j["results"].push_back(std::move(r));
  }
  return {.body = dump_json(j)};
}

HttpReply classify(const ServedModel& model, const Json& body, const ClientWatch& client) {
  require_task(model, ModelTask::kClassify, "/v1/classify");
  const std::vector<PoolingInput> inputs = read_body_inputs(model, body);
  const bool add_special_tokens = read_bool(body, "add_special_tokens").value_or(true);
  const int64_t max_tokens = read_truncation(model, body);
  std::vector<GenerationRequest> requests;
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back(inputs.size() > 1 ? fmt::format("input[{}]", i) : "input");
    requests.push_back(pooling_request(tokenize_input(model, inputs[i], add_special_tokens, names.back(), max_tokens)));
  }
  PoolingRun run(*model.service, std::move(requests), names);
  const std::vector<std::vector<float>> probs = run.collect(client);
  Json j = envelope_json({.id = "classify-" + random_alnum(24), .created = unix_now(), .model = model.served_name},
                         "list");
  j["data"] = Json::array();
  for (size_t i = 0; i < probs.size(); ++i) {
    const size_t top = static_cast<size_t>(std::max_element(probs[i].begin(), probs[i].end()) - probs[i].begin());
    j["data"].push_back(Json{{"index", i}, {"label", model.pooler->labels.at(top)}, {"probs", probs[i]},
                             {"num_classes", probs[i].size()}});
  }
  j["usage"] = pooling_usage_json(run.num_prompt_tokens());
  return {.body = dump_json(j)};
}

}  // namespace strata::server
