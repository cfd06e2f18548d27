// Which top-level fields each route takes (chat, completions, Anthropic messages and
// count_tokens, responses; embeddings, score, rerank and classify of pooling models). Every field of the API's request schema is implemented,
// accepted as a hint that changes no output (user, metadata, prompt_cache_key ...), or
// refused with a 400 naming it; so are vLLM's extensions that Strata lacks. A field nobody
// defines is refused as well, unless the server runs with --ignore-unknown-fields: it is then
// ignored and logged once per name.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "strata/server/json_fields.h"

namespace strata::server {

enum class ApiRoute : uint8_t {
  kChatCompletions, kCompletions, kMessages, kCountTokens, kResponses, kEmbeddings, kScore, kRerank, kClassify
};

class RequestFieldPolicy {
 public:
  explicit RequestFieldPolicy(bool ignore_unknown_fields) : ignore_unknown_(ignore_unknown_fields) {}

  // A 400 naming the first field of `body` the route refuses; absent and null fields pass.
  // The readers check the values of the fields that are implemented.
  void check(const Json& body, ApiRoute route) const;

  static constexpr size_t kMaxLoggedNames = 256;  // a client inventing names cannot grow the set

 private:
  void log_ignored(const std::string& name) const;

  bool ignore_unknown_;
  mutable std::mutex mutex_;
  mutable std::set<std::string> logged_;
};

}  // namespace strata::server
