// Helpers shared by the fuzz targets: a per-process scratch folder, and FUZZ_CHECK, which
// aborts (a libFuzzer crash) when a documented property of the code under test fails.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::fuzz {

// A fresh folder under $TMPDIR (or /tmp) for this process, created on first use.
const std::string& scratch_dir();
// Writes `size` bytes to `path`, replacing it; aborts when the write fails.
void write_file(const std::string& path, const void* data, size_t size);

}  // namespace strata::fuzz

#define FUZZ_CHECK(cond, what)                                                    \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s (%s)\n", __FILE__,     \
                   __LINE__, #cond, what);                                        \
      std::abort();                                                               \
    }                                                                             \
  } while (0)
