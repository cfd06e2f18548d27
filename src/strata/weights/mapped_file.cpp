#include "strata/weights/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/core/error.h"

namespace strata {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open {}: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot stat {}: {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{} is not a regular file", path);
  }
  size_ = static_cast<int64_t>(st.st_size);
  if (size_ > 0) {
    void* ptr = ::mmap(nullptr, static_cast<size_t>(size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (ptr == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("cannot map {} ({} bytes): {}", path, size_, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(ptr);
  }
  ::close(fd);  // the mapping keeps the file alive
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(size_));
}

}  // namespace strata
