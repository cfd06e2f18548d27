#include "strata/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace strata {

void check_failed(const char* condition, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "strata: invariant violated at %s:%d: %s %s\n", file, line, condition,
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata
