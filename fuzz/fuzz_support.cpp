#include "fuzz_support.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace strata::fuzz {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/strata-fuzz-XXXXXX";
    FUZZ_CHECK(mkdtemp(templ.data()) != nullptr, "cannot create a scratch folder");
    return templ;
  }();
  return dir;
}

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  FUZZ_CHECK(out.good(), path.c_str());
}

}  // namespace strata::fuzz
