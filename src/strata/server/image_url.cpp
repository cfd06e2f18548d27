#include "strata/server/image_url.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"

namespace strata::server {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

std::vector<uint8_t> data_url_bytes(const std::string& url, const std::string& what, const char* field) {
  const size_t comma = url.find(',');
  const std::string head = url.substr(0, comma);
  if (comma == std::string::npos || !head.starts_with("data:image/") || !head.ends_with(";base64"))
    throw bad_request(fmt::format("{}: a data URL must read data:image/<type>;base64,<data>", what), field);
  std::optional<std::vector<uint8_t>> bytes = decode_base64(std::string_view(url).substr(comma + 1));
  if (!bytes) throw bad_request(fmt::format("{}: the data URL's payload is not valid base64", what), field);
  return std::move(*bytes);
}

// A file:// path inside the allowed folder (symlinks resolved, so none leads out of it).
std::vector<uint8_t> local_file_bytes(const std::string& url, const ImageInputOptions& options,
                                      const std::string& what, const char* field) {
  if (options.allowed_local_media_path.empty())
    throw bad_request(fmt::format("{}: file:// URLs are refused; start the server with --allowed-local-media-path "
                                  "DIR to allow images under DIR", what), field);
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(options.allowed_local_media_path, ec);
  const fs::path path = fs::weakly_canonical(url.substr(7), ec);
  const auto [root_end, unused] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  if (ec || root_end != root.end() || !fs::is_regular_file(path, ec))
    throw bad_request(fmt::format("{}: {} is not a file under the allowed media folder", what, url.substr(7)), field);
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = base64_value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  if (bits >= 6) return std::nullopt;  // a lone trailing character
  return out;
}

RgbImage load_image_url(const std::string& url, const ImageInputOptions& options, const std::string& what,
                        const char* field) {
  std::vector<uint8_t> bytes;
  if (url.starts_with("data:")) bytes = data_url_bytes(url, what, field);
  else if (url.starts_with("file://")) bytes = local_file_bytes(url, options, what, field);
  else
    throw bad_request(fmt::format("{}: only data: URLs (base64) and, with --allowed-local-media-path, file:// URLs "
                                  "are taken; this server fetches no remote images", what), field);
  RgbImage image;
  try {
    image = decode_image(bytes, options.max_image_pixels);
  } catch (const ImageTooLarge& e) {
    throw bad_request(fmt::format("{}: {} (this server's --max-image-pixels)", what, e.what()), field);
  } catch (const Error& e) {
    throw bad_request(fmt::format("{}: {}", what, e.what()), field);
  }
  return image;
}

}  // namespace strata::server
