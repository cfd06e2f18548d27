// Checksums the Hub publishes as ETags: sha256 of an LFS file's bytes, or the git blob
// sha1 ("blob {size}\0" + bytes) of a small file kept in git. Lower-case hex.
#pragma once

#include <filesystem>
#include <string>

namespace strata::hub {

std::string sha256_file_hex(const std::filesystem::path& path);
std::string git_blob_sha1_file_hex(const std::filesystem::path& path);

// Throws an Error when `etag` is a sha256 (64 hex) or git sha1 (40 hex) that the file does
// not match; other ETag forms carry no checksum and pass.
void verify_etag(const std::filesystem::path& path, const std::string& etag, const std::string& what);

}  // namespace strata::hub
