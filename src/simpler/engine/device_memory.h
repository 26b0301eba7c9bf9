// DeviceMemory: the DEVICE_MALLOC heaps of a Worker's simulated chips — one
// address range per chip, reserved before fork, allocated from the parent
// (alloc_child_tensor), and holding bytes only in that chip's process.
//
// Each heap is a chip::DeviceArena mapped before the children are forked, so
// every process has the range at the same address. After the forks the parent
// makes every heap inaccessible in itself (seal_in_parent) and keeps only the
// allocator's bookkeeping; chip child i makes every heap but its own
// inaccessible (enter_chip). A DEVICE pointer therefore holds bytes in exactly
// one process, as on real hardware, and the heaps' disjoint ranges say which
// chip an address belongs to (chip_of_range), which a chip child uses to check
// a received DEVICE descriptor against its own index.
//
// Lifetime: alloc() wraps the block in a DEVICE_MALLOC descriptor with a fresh
// identity and records its owner chip. A release is two steps, because queued
// or running tasks may still name the block: begin_release() makes the
// identity refused at submit from that moment (identity_problem), and
// finish_release() — run by the engine once every earlier task has finished —
// frees the block and the identity. Thread-safe (one mutex). Host layer:
// std::invalid_argument for a bad chip index, size or identity,
// std::runtime_error when a heap is exhausted (naming the chip and its use).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/device_wrappers.h"
#include "simpler/chip/device_arena.h"

namespace simpler {

inline constexpr uint64_t DEFAULT_DEVICE_HEAP_BYTES = uint64_t{256} << 20;

class DeviceMemory {
public:
    // Maps one heap of heap_bytes per chip (MAP_NORESERVE: untouched pages cost nothing).
    DeviceMemory(uint32_t num_chips, uint64_t heap_bytes);
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;

    // Parent, after the forks: no heap byte is reachable from here any more.
    void seal_in_parent() noexcept;
    // Chip child `chip`, after the fork: only its own heap stays reachable.
    void enter_chip(uint32_t chip) noexcept;

    // A block of nbytes on `chip`, as a DEVICE_MALLOC backing.
    DeviceBacking alloc(uint32_t chip, uint64_t nbytes, AccessMode access = AccessMode::READWRITE);
    // The chip that owns a live (or releasing) identity; nullopt otherwise.
    [[nodiscard]] std::optional<uint32_t> owner_of(const CanonicalIdentity& id) const;
    // The chip whose heap holds [addr, addr + nbytes) whole; nullopt when none does.
    [[nodiscard]] std::optional<uint32_t> chip_of_range(uint64_t addr, uint64_t nbytes) const noexcept;

    // Refuses the identity at submit from now on; std::invalid_argument when it
    // is not a live block of this DeviceMemory.
    void begin_release(const CanonicalIdentity& id);
    // Frees the block and its identity (after begin_release). No-op otherwise.
    void finish_release(const CanonicalIdentity& id) noexcept;
    // Frees every block and identity (the chips are gone: Worker::close()).
    void release_all() noexcept;
    // Empty when `id` is not a block being released, else why it is refused.
    [[nodiscard]] std::string identity_problem(const CanonicalIdentity& id) const;
    // identity_problem(d.identity), and for a block of this DeviceMemory: why d
    // disagrees with the descriptor alloc() handed out (backend, address,
    // nbytes, or a grant beyond the block's). Empty when d is not a block here.
    [[nodiscard]] std::string descriptor_problem(const BufferDescriptor& d) const;

    // The owner_worker_path_id alloc() stamps on chip i's blocks (0 until set: no path).
    void set_chip_path_ids(std::vector<uint32_t> ids) { chip_path_ids_ = std::move(ids); }

    [[nodiscard]] uint32_t num_chips() const noexcept { return static_cast<uint32_t>(heaps_.size()); }
    // Chip `chip`'s heap: its first address and its size in bytes (std::invalid_argument for a bad index).
    [[nodiscard]] std::pair<uint64_t, uint64_t> heap_range(uint32_t chip) const;
    [[nodiscard]] chip::ArenaStats stats(uint32_t chip) const;
    [[nodiscard]] size_t live_blocks() const;

private:
    struct Block {
        DeviceBacking backing;
        bool releasing = false;
    };
    void check_chip(uint32_t chip, const char* what) const;

    std::vector<std::unique_ptr<chip::DeviceArena>> heaps_;
    mutable std::mutex mu_;
    DeviceOwnerTable owners_;
    std::unordered_map<CanonicalIdentity, Block> blocks_;
    std::vector<uint32_t> chip_path_ids_;
};

}  // namespace simpler
