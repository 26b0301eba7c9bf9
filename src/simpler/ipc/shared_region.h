// SharedRegion: the move-only owner of one anonymous MAP_SHARED mapping.
//
// Created before fork, the mapping sits at the same address in the parent and
// in every child forked afterwards, so pointers into it are valid on both sides
// without any rewriting. Being anonymous, it has no name: nothing in /dev/shm
// exists to outlive the processes, and the kernel frees the pages when the last
// process that maps it unmaps or exits. Owns only the mapping, not the meaning
// of its bytes (mailbox.h, doorbell.h).
#pragma once

#include <cstddef>

namespace simpler::ipc {

class SharedRegion {
public:
    SharedRegion() noexcept = default;
    // Maps `bytes` (rounded up to whole pages) of zeroed shared memory; throws
    // std::invalid_argument for 0 bytes and std::runtime_error when mmap fails.
    explicit SharedRegion(size_t bytes);
    SharedRegion(SharedRegion&& other) noexcept;
    SharedRegion& operator=(SharedRegion&& other) noexcept;
    SharedRegion(const SharedRegion&) = delete;
    SharedRegion& operator=(const SharedRegion&) = delete;
    ~SharedRegion();

    [[nodiscard]] void* data() const noexcept { return data_; }
    [[nodiscard]] size_t size() const noexcept { return size_; }
    [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }

private:
    void reset() noexcept;

    void* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace simpler::ipc
