// A compiled PCRE2 regex (UTF + Unicode properties, JIT) for split patterns. Input that is
// not valid UTF-8 is allowed: ill-formed bytes never match, so they land in the gaps.
// Immutable after construction and safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::text {

using ByteRange = std::pair<size_t, size_t>;  // [begin, end) byte offsets

class Regex {
 public:
  explicit Regex(const std::string& pattern);  // throws strata::Error on a bad pattern
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends every non-empty, non-overlapping match of `text`, left to right.
  void find_all(std::string_view text, std::vector<ByteRange>& matches) const;
  std::string replace_all(std::string_view text, std::string_view replacement) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

}  // namespace strata::text
