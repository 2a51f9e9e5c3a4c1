#include "system/mapped_file.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "system/error.hpp"

namespace abh {

MappedFile::MappedFile(const UniqueFd& fd, std::size_t size, const std::string& what) {
  if (size == 0) return;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (p == MAP_FAILED) throw Error("cannot map " + what + ": " + std::strerror(errno));
  data_ = p;
  size_ = size;
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  reset();
}

void MappedFile::reset() noexcept {
  // munmap of a mapping this object made cannot fail but for a kernel bug; nothing to do then.
  if (data_) (void)::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace abh
