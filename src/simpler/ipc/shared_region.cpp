#include "simpler/ipc/shared_region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace simpler::ipc {

SharedRegion::SharedRegion(size_t bytes) {
    if (bytes == 0) throw std::invalid_argument("SharedRegion: size must be > 0");
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (bytes > SIZE_MAX - page) throw std::invalid_argument("SharedRegion: size too large");
    const size_t rounded = (bytes + page - 1) / page * page;
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        throw std::runtime_error("SharedRegion: mmap of " + std::to_string(rounded) +
                                 " bytes failed: " + std::strerror(errno));
    }
    data_ = p;
    size_ = rounded;
}

SharedRegion::SharedRegion(SharedRegion&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedRegion& SharedRegion::operator=(SharedRegion&& other) noexcept {
    if (this != &other) {
        reset();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

SharedRegion::~SharedRegion() { reset(); }

void SharedRegion::reset() noexcept {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace simpler::ipc
