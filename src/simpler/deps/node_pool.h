// NodePool: the memory resource behind the dependency tracker's small nodes
// (its key map, its task map and every region index's multimap): one free
// list per size class (16-byte steps up to MAX_POOLED bytes), blocks carved
// from CHUNK-byte chunks of the upstream resource. Allocating and freeing a
// node is a pop and a push; a block freed goes back to its class's list and
// is reused by the next node of that class. Larger or over-aligned requests
// (the maps' bucket arrays) go to the upstream resource as they are.
//
// Like std::pmr::unsynchronized_pool_resource, which it replaces on this path
// (its allocation searches a chunk's bitmap: 9% of a bulk submit's time), it
// keeps its chunks until it is destroyed, and it is not thread-safe: the
// tracker is used under its owner's lock.
#pragma once

#include <array>
#include <cstddef>
#include <memory_resource>
#include <vector>

namespace simpler {

class NodePool final : public std::pmr::memory_resource {
public:
    static constexpr size_t STEP = 16;
    static constexpr size_t MAX_POOLED = 512;
    static constexpr size_t CHUNK = 64 * 1024;

    explicit NodePool(std::pmr::memory_resource* upstream = std::pmr::get_default_resource()) noexcept
        : upstream_(upstream) {}
    NodePool(const NodePool&) = delete;
    NodePool& operator=(const NodePool&) = delete;
    ~NodePool() override;

    // Bytes taken from the upstream resource for pooled blocks (whole chunks).
    [[nodiscard]] size_t chunk_bytes() const noexcept { return chunks_.size() * CHUNK; }

private:
    struct FreeBlock {
        FreeBlock* next;
    };

    void* do_allocate(size_t bytes, size_t alignment) override;
    void do_deallocate(void* p, size_t bytes, size_t alignment) override;
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }
    static bool pooled(size_t bytes, size_t alignment) noexcept { return bytes <= MAX_POOLED && alignment <= STEP; }
    static size_t class_of(size_t bytes) noexcept { return bytes == 0 ? 0 : (bytes - 1) / STEP; }

    std::pmr::memory_resource* upstream_;
    std::array<FreeBlock*, MAX_POOLED / STEP> free_{};
    std::byte* cursor_ = nullptr;  // the unused rest of the newest chunk
    std::byte* limit_ = nullptr;
    std::vector<void*> chunks_;
};

}  // namespace simpler
