#include "strata/engine/stop_checker.h"

#include <algorithm>

namespace strata {

StopChecker::Result StopChecker::push(const std::string& text) {
  pending_ += text;
  Result result;
  size_t first = std::string::npos;
  for (const std::string& s : stop_) {
    if (s.empty()) continue;
    const size_t at = pending_.find(s);
    if (at != std::string::npos && (first == std::string::npos || at < first)) {
      first = at;
      result.stop = s;
    }
  }
  if (result.stop) {
    result.text = pending_.substr(0, first);
    pending_.clear();
    return result;
  }
  // Hold back the longest suffix that is a prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stop_)
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
      if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
  result.text = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return result;
}

std::string StopChecker::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace strata
