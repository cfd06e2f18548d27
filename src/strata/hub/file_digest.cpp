#include "strata/hub/file_digest.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "strata/core/error.h"

namespace strata::hub {
namespace {

std::string digest_file(const std::filesystem::path& path, const EVP_MD* md, const std::string& prefix) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  STRATA_CHECK(ctx && EVP_DigestInit_ex(ctx.get(), md, nullptr) == 1);
  EVP_DigestUpdate(ctx.get(), prefix.data(), prefix.size());
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {} to check its checksum", path.string());
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), out, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  return hex;
}

bool is_lower_hex(const std::string& s) {
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::string sha256_file_hex(const std::filesystem::path& path) { return digest_file(path, EVP_sha256(), ""); }

std::string git_blob_sha1_file_hex(const std::filesystem::path& path) {
  const std::string header = "blob " + std::to_string(std::filesystem::file_size(path));
  return digest_file(path, EVP_sha1(), header + std::string(1, '\0'));
}

void verify_etag(const std::filesystem::path& path, const std::string& etag, const std::string& what) {
  if (!is_lower_hex(etag)) return;
  std::string actual;
  if (etag.size() == 64) actual = sha256_file_hex(path);
  else if (etag.size() == 40) actual = git_blob_sha1_file_hex(path);
  else return;
  if (actual != etag)
    fail("{}: the download's checksum is {} but the Hub says {}; the partial file was removed, run the "
         "command again to download it afresh",
         what, actual, etag);
}

}  // namespace strata::hub
