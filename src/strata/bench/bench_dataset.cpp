#include "strata/bench/bench_dataset.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "strata/bench/random_source.h"
#include "strata/core/error.h"

namespace strata::bench {
namespace {

constexpr int64_t kMinSequenceTokens = 4, kMaxPromptTokens = 1024, kMaxTotalTokens = 2048;

struct LengthRange {
  int64_t low = 0, high = 0;
};

LengthRange length_range(int64_t len, double ratio, int64_t floor) {
  return {std::max(floor, static_cast<int64_t>(static_cast<double>(len) * (1.0 - ratio))),
          std::max(floor, static_cast<int64_t>(static_cast<double>(len) * (1.0 + ratio)))};
}

std::vector<int32_t> allowed_ids(const text::Tokenizer* tokenizer, int64_t vocab_size) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < vocab_size; ++id)
    if (tokenizer == nullptr || !tokenizer->is_special(id)) ids.push_back(id);
  if (ids.empty()) fail("the vocabulary has no ordinary token to build random prompts from");
  return ids;
}

// Decoding random ids and encoding the text again rarely gives the same ids back; the
// re-encoded ids (cut to the length asked) are what the server will see.
void set_text(BenchRequest& request, const text::Tokenizer& tokenizer) {
  std::vector<int32_t> ids = tokenizer.encode(tokenizer.decode(request.prompt_ids, false), false);
  if (std::ssize(ids) > request.prompt_len) ids.resize(static_cast<size_t>(request.prompt_len));
  request.prompt = tokenizer.decode(ids, false);
  request.prompt_len = std::ssize(ids);
  request.prompt_ids = std::move(ids);
}

}  // namespace

std::vector<BenchRequest> sample_random_requests(const RandomDatasetOptions& options,
                                                 const text::Tokenizer* tokenizer, int64_t vocab_size) {
  if (options.range_ratio < 0 || options.range_ratio >= 1)
    fail("--random-range-ratio must be in [0, 1), got {}", options.range_ratio);
  if (tokenizer != nullptr) vocab_size = tokenizer->vocab_size();
  const std::vector<int32_t> allowed = allowed_ids(tokenizer, vocab_size);
  const auto num_allowed = std::ssize(allowed);
  RandomSource random(options.seed);
  const LengthRange in = length_range(options.input_len, options.range_ratio, 0);
  const LengthRange out = length_range(options.output_len, options.range_ratio, 1);
  std::vector<int32_t> prefix;
  for (int64_t i = 0; i < options.prefix_len; ++i) prefix.push_back(allowed[random.uniform_int(0, num_allowed - 1)]);
  std::vector<BenchRequest> requests;
  for (int64_t i = 0; i < options.num_requests; ++i) {
    BenchRequest r{.prompt_ids = prefix,
                   .prompt_len = options.prefix_len + random.uniform_int(in.low, in.high),
                   .expected_output_len = random.uniform_int(out.low, out.high)};
    const int64_t offset = random.uniform_int(0, num_allowed - 1);
    for (int64_t j = options.prefix_len; j < r.prompt_len; ++j)
      r.prompt_ids.push_back(allowed[(offset + i + j - options.prefix_len) % num_allowed]);
    if (tokenizer != nullptr) set_text(r, *tokenizer);
    requests.push_back(std::move(r));
  }
  return requests;
}

namespace {

bool has_text(const nlohmann::json& turn) {
  return turn.is_object() && turn.contains("value") && turn["value"].is_string();
}

nlohmann::json read_sharegpt(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--dataset-path {}: cannot open it; give a ShareGPT JSON file", path);
  nlohmann::json data = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!data.is_array())
    fail("--dataset-path {}: not a JSON list of conversations (ShareGPT's {{\"conversations\": [...]}} entries)", path);
  nlohmann::json kept = nlohmann::json::array();
  for (nlohmann::json& entry : data) {
    const auto it = entry.is_object() ? entry.find("conversations") : entry.end();
    if (it != entry.end() && it->is_array() && it->size() >= 2 && has_text((*it)[0]) && has_text((*it)[1]))
      kept.push_back(std::move(entry));
  }
  return kept;
}

}  // namespace

std::vector<BenchRequest> sample_sharegpt_requests(const ShareGptOptions& options, const text::Tokenizer& tokenizer) {
  nlohmann::json data = read_sharegpt(options.path);
  std::vector<size_t> order(data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  RandomSource random(options.seed);
  random.shuffle(order);
  std::vector<BenchRequest> requests;
  for (size_t i = 0; i < order.size() && std::ssize(requests) < options.num_requests; ++i) {
    const nlohmann::json& turns = data[order[i]]["conversations"];
    BenchRequest r{.prompt = turns[0]["value"].get<std::string>()};
    r.prompt_ids = tokenizer.encode(r.prompt, /*add_special_tokens=*/true);
    r.prompt_len = std::ssize(r.prompt_ids);
    r.expected_output_len = options.output_len.value_or(
        std::ssize(tokenizer.encode(turns[1]["value"].get<std::string>(), true)));
    const bool short_output = !options.output_len && r.expected_output_len < kMinSequenceTokens;
    if (r.prompt_len < kMinSequenceTokens || short_output || r.prompt_len > kMaxPromptTokens ||
        r.prompt_len + r.expected_output_len > kMaxTotalTokens)
      continue;
    requests.push_back(std::move(r));
  }
  if (requests.empty()) fail("--dataset-path {}: no conversation fits (prompt 4-1024 tokens, total <= 2048)", options.path);
  for (int64_t i = std::ssize(requests), n = i; i < options.num_requests; ++i)
    requests.push_back(requests[static_cast<size_t>(random.uniform_int(0, n - 1))]);
  return requests;
}

}  // namespace strata::bench
