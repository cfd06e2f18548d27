// Shared access to the tokenizer fixtures: each tarball unpacked once into the test
// scratch folder (atomically: test processes run side by side), each tokenizer loaded once,
// expected.json parsed once. Header-only so the *_test.cpp glob needs no extra sources.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/tokenizer.h"
#include "test_support.h"

namespace strata::test {

// The folder holding <name>'s tokenizer.json, unpacked from the fixture tarball.
inline std::string tokenizer_dir(const std::string& name) {
  return unpack_fixture("tokenizers/" + name + ".tar.gz", "tokenizer_" + name);
}

inline const text::Tokenizer& fixture_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<text::Tokenizer>> cache;
  const std::string dir = tokenizer_dir(name);
  std::lock_guard lock(mutex);
  auto& slot = cache[name];
  if (!slot) slot = text::Tokenizer::from_file(dir);
  return *slot;
}

inline const nlohmann::json& tokenizer_expected() {
  static const nlohmann::json expected = [] {
    std::ifstream in(fixture_path("tokenizers/expected.json"));
    return nlohmann::json::parse(in);
  }();
  return expected;
}

}  // namespace strata::test
