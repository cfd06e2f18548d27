// StopChecker: finds stop strings in generated text as it streams, holding back any tail
// that could still become a stop string, so the stop text is never emitted.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace strata {

class StopChecker {
 public:
  explicit StopChecker(std::vector<std::string> stop) : stop_(std::move(stop)) {}

  struct Result {
    std::string text;                  // safe to emit now
    std::optional<std::string> stop;   // the stop string found (generation ends)
  };
  // Appends new text; returns what may be emitted.
  Result push(const std::string& text);
  // End of generation: releases the held-back tail.
  std::string flush();

 private:
  std::vector<std::string> stop_;
  std::string pending_;
};

}  // namespace strata
