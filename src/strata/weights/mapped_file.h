// MappedFile: a whole file mapped read-only (PROT_READ, MAP_PRIVATE) for the lifetime of
// the object. Weight readers hand out pointers into it, so it must outlive them. A file of
// zero bytes maps to data() == nullptr, size() == 0.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

class MappedFile {
 public:
  // Throws Error naming the path when it cannot be opened, is not a regular file, or
  // cannot be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;  // [size_] bytes, read-only
  int64_t size_ = 0;
};

}  // namespace strata
