// Helpers for the weights tests: a scratch folder per test, raw file writing for
// hand-built (malformed) safetensors files, and an Error-message matcher.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>

#include "strata/core/error.h"
#include "test_support.h"

namespace strata::test {

// An empty folder named after the running test.
inline std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir =
      temp_dir() + "/" + info->test_suite_name() + "_" + info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// 8-byte little-endian `header_bytes`, then `header`, then `num_data_bytes` bytes of data.
inline std::string raw_safetensors(std::string_view header, size_t num_data_bytes,
                                   uint64_t header_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(header_bytes >> (8 * i));
  out += header;
  for (size_t i = 0; i < num_data_bytes; ++i) out += static_cast<char>(i * 7 + 1);
  return out;
}

inline std::string raw_safetensors(std::string_view header, size_t num_data_bytes) {
  return raw_safetensors(header, num_data_bytes, header.size());
}

// Runs `fn`, expecting a strata::Error whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string_view> parts) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (std::string_view part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message lacks \"" << part << "\": " << message;
    return;
  }
  ADD_FAILURE() << "no strata::Error thrown";
}

}  // namespace strata::test
