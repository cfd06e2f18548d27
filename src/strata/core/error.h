// Errors: strata::Error for bad input, config or files (the message says what to fix);
// STRATA_CHECK for broken invariants (aborts with file:line).
#pragma once

#if !defined(__CUDACC__)
#include <fmt/format.h>
#endif

#include <stdexcept>
#include <string>

namespace strata {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

#if !defined(__CUDACC__)  // fmt 9 does not compile under nvcc's C++20 mode
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}
#endif

[[noreturn]] void check_failed(const char* condition, const char* file, int line,
                               const std::string& detail);

}  // namespace strata

#define STRATA_CHECK(cond)                                          \
  do {                                                              \
    if (!(cond)) ::strata::check_failed(#cond, __FILE__, __LINE__, ""); \
  } while (0)

#if !defined(__CUDACC__)
#define STRATA_CHECK_MSG(cond, ...)                                                         \
  do {                                                                                      \
    if (!(cond)) ::strata::check_failed(#cond, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
  } while (0)
#else
#define STRATA_CHECK_MSG(cond, ...) STRATA_CHECK(cond)
#endif
