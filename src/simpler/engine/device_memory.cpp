#include "simpler/engine/device_memory.h"

#include <sys/mman.h>

#include <stdexcept>

#include "simpler/backing/identity_minter.h"
#include "simpler/backing/owned_backing_table.h"

namespace simpler {

DeviceMemory::DeviceMemory(uint32_t num_chips, uint64_t heap_bytes) {
    if (num_chips > 0 && heap_bytes == 0) throw std::invalid_argument("device_memory_bytes: must be > 0 (got 0)");
    heaps_.reserve(num_chips);
    for (uint32_t i = 0; i < num_chips; ++i) heaps_.push_back(std::make_unique<chip::DeviceArena>(heap_bytes));
}

void DeviceMemory::seal_in_parent() noexcept {
    for (const auto& h : heaps_) mprotect(reinterpret_cast<void*>(h->base()), h->capacity(), PROT_NONE);
}

void DeviceMemory::enter_chip(uint32_t chip) noexcept {
    for (uint32_t i = 0; i < heaps_.size(); ++i)
        if (i != chip) mprotect(reinterpret_cast<void*>(heaps_[i]->base()), heaps_[i]->capacity(), PROT_NONE);
}

void DeviceMemory::check_chip(uint32_t chip, const char* what) const {
    if (chip >= heaps_.size())
        throw std::invalid_argument(std::string(what) + ": worker=" + std::to_string(chip) + ", this Worker has " +
                                    std::to_string(heaps_.size()) + " chips");
}

DeviceBacking DeviceMemory::alloc(uint32_t chip, uint64_t nbytes, AccessMode access) {
    check_chip(chip, "alloc_child_tensor");
    if (nbytes == 0) throw std::invalid_argument("alloc_child_tensor: nbytes must be > 0");
    std::lock_guard lock(mu_);
    const uint64_t addr = heaps_[chip]->try_alloc(nbytes);
    if (addr == 0) {
        const chip::ArenaStats s = heaps_[chip]->stats();
        throw std::runtime_error("alloc_child_tensor: chip " + std::to_string(chip) + " has no free block of " +
                                 std::to_string(nbytes) + " bytes (device memory " + std::to_string(s.capacity_bytes) +
                                 " bytes, " + std::to_string(s.bytes_in_use) + " in use in " +
                                 std::to_string(s.live_allocations) + " blocks, largest free " +
                                 std::to_string(s.largest_free_block) + ")");
    }
    try {
        const uint32_t path_id = chip < chip_path_ids_.size() ? chip_path_ids_[chip] : 0;
        DeviceBacking b =
            wrap_device_pointer(BackendKind::DEVICE_MALLOC, addr, nbytes, access, chip, owners_, nullptr, path_id);
        blocks_.emplace(b.descriptor.identity, Block{b, false});
        return b;
    } catch (...) {
        heaps_[chip]->try_free(addr);
        throw;
    }
}

std::optional<uint32_t> DeviceMemory::owner_of(const CanonicalIdentity& id) const { return owners_.owner_of(id); }

std::pair<uint64_t, uint64_t> DeviceMemory::heap_range(uint32_t chip) const {
    check_chip(chip, "heap_range");
    return {heaps_[chip]->base(), heaps_[chip]->capacity()};
}

std::optional<uint32_t> DeviceMemory::chip_of_range(uint64_t addr, uint64_t nbytes) const noexcept {
    for (uint32_t i = 0; i < heaps_.size(); ++i)
        if (heaps_[i]->contains(addr, nbytes)) return i;
    return std::nullopt;
}

void DeviceMemory::begin_release(const CanonicalIdentity& id) {
    std::lock_guard lock(mu_);
    auto it = blocks_.find(id);
    if (it == blocks_.end())
        throw std::invalid_argument("release of device buffer " + id.to_string() +
                                    ": not a live alloc_child_tensor block of this Worker");
    if (it->second.releasing)
        throw std::invalid_argument("release of device buffer " + id.to_string() + ": already released");
    it->second.releasing = true;
}

void DeviceMemory::finish_release(const CanonicalIdentity& id) noexcept {
    std::lock_guard lock(mu_);
    auto it = blocks_.find(id);
    if (it == blocks_.end() || !it->second.releasing) return;
    const DeviceBacking& b = it->second.backing;
    heaps_[b.owner_chip]->try_free(descriptor_address(b.descriptor));
    release_device_backing(b, owners_);
    blocks_.erase(it);
}

void DeviceMemory::release_all() noexcept {
    std::lock_guard lock(mu_);
    for (auto& [id, block] : blocks_) {
        heaps_[block.backing.owner_chip]->try_free(descriptor_address(block.backing.descriptor));
        release_device_backing(block.backing, owners_);
    }
    blocks_.clear();
}

std::string DeviceMemory::identity_problem(const CanonicalIdentity& id) const {
    if (heaps_.empty()) return {};  // no chips, no blocks (heaps_ is fixed at construction)
    std::lock_guard lock(mu_);
    auto it = blocks_.find(id);
    if (it == blocks_.end() || !it->second.releasing) return {};
    return "device memory of chip " + std::to_string(it->second.backing.owner_chip) +
           " was released (its scope ended or it was freed); a task may not name it any more";
}

std::string DeviceMemory::descriptor_problem(const BufferDescriptor& d) const {
    if (heaps_.empty()) return {};
    std::lock_guard lock(mu_);
    auto it = blocks_.find(d.identity);
    if (it == blocks_.end()) return {};
    const BufferDescriptor& r = it->second.backing.descriptor;
    const std::string chip = "chip " + std::to_string(it->second.backing.owner_chip);
    if (it->second.releasing)
        return "device memory of " + chip +
               " was released (its scope ended or it was freed); a task may not name it any more";
    if (r.backend_kind != d.backend_kind || r.address_space != d.address_space || r.nbytes != d.nbytes ||
        descriptor_address(r) != descriptor_address(d))
        return "the descriptor disagrees with its owner's record (" + std::string(backend_kind_name(d.backend_kind)) +
               ", " + std::to_string(d.nbytes) + " B; device memory of " + chip + " was handed out as " +
               backend_kind_name(r.backend_kind) + ", " + std::to_string(r.nbytes) + " B at another address)";
    if (!grant_within(static_cast<AccessMode>(d.access), static_cast<AccessMode>(r.access)))
        return std::string("the descriptor grants ") + access_mode_name(d.access) + ", but its owner granted " +
               access_mode_name(r.access) + " (device memory of " + chip + ")";
    return {};
}

chip::ArenaStats DeviceMemory::stats(uint32_t chip) const {
    check_chip(chip, "device memory stats");
    return heaps_[chip]->stats();
}

size_t DeviceMemory::live_blocks() const {
    std::lock_guard lock(mu_);
    return blocks_.size();
}

}  // namespace simpler
