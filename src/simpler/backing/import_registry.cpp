#include "simpler/backing/import_registry.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/fork_region_table.h"
#include "simpler/backing/grant_fault.h"
#include "simpler/backing/identity_minter.h"
#include "simpler/backing/shm_name.h"

namespace simpler {

const char* import_refusal_name(ImportRefusal r) noexcept {
    switch (r) {
        case ImportRefusal::NONE: return "NONE";
        case ImportRefusal::INVALID_DESCRIPTOR: return "INVALID_DESCRIPTOR";
        case ImportRefusal::REGISTRY_CLOSED: return "REGISTRY_CLOSED";
        case ImportRefusal::DESCRIPTOR_MISMATCH: return "DESCRIPTOR_MISMATCH";
        case ImportRefusal::STALE_GENERATION: return "STALE_GENERATION";
        case ImportRefusal::SHM_MISSING: return "SHM_MISSING";
        case ImportRefusal::SHM_TOO_SMALL: return "SHM_TOO_SMALL";
        case ImportRefusal::NOT_A_FORK_REGION: return "NOT_A_FORK_REGION";
        case ImportRefusal::DEVICE_ON_HOST: return "DEVICE_ON_HOST";
        case ImportRefusal::DEVICE_WRONG_CHIP: return "DEVICE_WRONG_CHIP";
        case ImportRefusal::DEVICE_OWNER_UNKNOWN: return "DEVICE_OWNER_UNKNOWN";
        case ImportRefusal::REMOTE_UNSUPPORTED: return "REMOTE_UNSUPPORTED";
        case ImportRefusal::OS_ERROR: return "OS_ERROR";
        case ImportRefusal::WINDOW_OUTSIDE: return "WINDOW_OUTSIDE";
    }
    return "UNKNOWN";
}

size_t ImportRegistry::SlotKeyHash::operator()(const SlotKey& k) const noexcept {
    return std::hash<uint64_t>{}(k.owner * 0x9e3779b97f4a7c15ULL ^ k.buffer_id);
}

ImportRegistry::SlotKey ImportRegistry::slot_key(const CanonicalIdentity& id) noexcept {
    SlotKey k{};
    std::memcpy(&k.owner, id.owner_instance_id, sizeof k.owner);
    k.buffer_id = id.buffer_id;
    return k;
}

ImportRegistry::ImportRegistry(ImportRegistryConfig config) : config_(std::move(config)) {
    if (config_.owner_minter == nullptr) config_.owner_minter = &process_identity_minter();
    if (config_.fork_regions == nullptr) config_.fork_regions = &process_fork_regions();
}

ImportRegistry::~ImportRegistry() { close_unchecked(); }

ImportResult ImportRegistry::refuse(ImportRefusal r, std::string message) noexcept {
    ++stats_.refusals;
    ImportResult res;
    res.refusal = r;
    res.message = std::move(message);
    return res;
}

ImportResult ImportRegistry::try_import(const BufferDescriptor& d) noexcept {
    try {
        // Hashing any 32 identity bytes is in bounds, so the lookup may precede
        // validation: a descriptor equal to a cached (validated) one in every
        // validated field is valid, so a hit skips the validator.
        if (closed_) return refuse(ImportRefusal::REGISTRY_CLOSED, "ImportRegistry is closed");
        const auto it = entries_.find(d.identity);
        if (it != entries_.end() && it->second.descriptor == d) {
            ++stats_.receipts;
            ++stats_.hits;
            ImportResult res;
            res.backing = &it->second;
            return res;
        }
        const ValidationError e = validate_buffer_descriptor(d);
        if (!e.ok()) return refuse(ImportRefusal::INVALID_DESCRIPTOR, e.message());
        ++stats_.receipts;
        if (it != entries_.end())
            return refuse(ImportRefusal::DESCRIPTOR_MISMATCH,
                          "identity " + d.identity.to_string() + " is already imported under a different descriptor (" +
                              backend_kind_name(it->second.descriptor.backend_kind) + ", " +
                              std::to_string(it->second.descriptor.nbytes) + " B); refusing the " +
                              backend_kind_name(d.backend_kind) + " descriptor of " + std::to_string(d.nbytes) + " B");
        ImportResult gen = check_generation(d);
        if (!gen.ok()) return gen;
        ImportedBacking fresh;
        ImportResult res = resolve_new(d, fresh);
        if (!res.ok()) return res;
        // A newer generation of a slot means the owner released the older one.
        const SlotKey key = slot_key(d.identity);
        SlotState& slot = slots_[key];
        if (slot.newest_generation != 0 && slot.newest_generation < d.identity.generation) {
            CanonicalIdentity old = d.identity;
            old.generation = slot.newest_generation;
            const auto old_it = entries_.find(old);
            if (old_it != entries_.end()) {
                unmap(old_it->second);
                entries_.erase(old_it);
            }
        }
        slot.newest_generation = d.identity.generation;
        slot.newest_released = false;
        const auto [pos, inserted] = entries_.emplace(d.identity, fresh);
        (void)inserted;
        res.backing = &pos->second;
        return res;
    } catch (...) {
        return refuse(ImportRefusal::OS_ERROR, "ImportRegistry: out of memory");
    }
}

ImportResult ImportRegistry::check_generation(const BufferDescriptor& d) noexcept {
    const CanonicalIdentity& id = d.identity;
    const auto slot = slots_.find(slot_key(id));
    if (slot != slots_.end()) {
        const SlotState& s = slot->second;
        if (id.generation < s.newest_generation)
            return refuse(ImportRefusal::STALE_GENERATION,
                          "stale descriptor " + id.to_string() + ": generation " + std::to_string(id.generation) +
                              " of buffer_id " + std::to_string(id.buffer_id) + " is older than generation " +
                              std::to_string(s.newest_generation) + " already received");
        if (id.generation == s.newest_generation && s.newest_released)
            return refuse(ImportRefusal::STALE_GENERATION, "stale descriptor " + id.to_string() + ": generation " +
                                                               std::to_string(id.generation) + " of buffer_id " +
                                                               std::to_string(id.buffer_id) + " was released");
    }
    // Refused by its owner when the owner is this incarnation.
    const Liveness l = config_.owner_minter->check_live(id);
    if (l.status != LivenessStatus::LIVE && l.status != LivenessStatus::NOT_MINTED_HERE)
        return refuse(ImportRefusal::STALE_GENERATION, describe_liveness(id, l));
    return {};
}

ImportResult ImportRegistry::resolve_new(const BufferDescriptor& d, ImportedBacking& out) noexcept {
    const auto kind = static_cast<BackendKind>(d.backend_kind);
    // Built only on a refusal: the success path formats nothing.
    const auto who = [&d] {
        return std::string(backend_kind_name(d.backend_kind)) + " backing " + d.identity.to_string();
    };
    out.descriptor = d;
    out.nbytes = d.nbytes;
    switch (kind) {
        case BackendKind::REMOTE_SIDECAR:
            return refuse(ImportRefusal::REMOTE_UNSUPPORTED,
                          who() + ": REMOTE_SIDECAR is not supported here (no remote transport on this endpoint)");
        case BackendKind::VMM_WINDOW: {
            if (!config_.endpoint.is_chip)
                return refuse(ImportRefusal::DEVICE_ON_HOST,
                              who() + ": a window (address space DEVICE) cannot resolve on a host endpoint");
            const uint64_t addr = descriptor_address(d);
            if (!config_.window_range || !config_.window_range(addr, d.nbytes))
                return refuse(ImportRefusal::WINDOW_OUTSIDE, who() + ": [" + std::to_string(addr) + ", +" +
                                                                 std::to_string(d.nbytes) +
                                                                 ") lies outside the window heaps of chip " +
                                                                 std::to_string(config_.endpoint.chip_index));
            out.base = addr;
            return {};
        }
        case BackendKind::DEVICE_MALLOC: {
            if (!config_.endpoint.is_chip)
                return refuse(ImportRefusal::DEVICE_ON_HOST,
                              who() + ": a DEVICE backing cannot resolve on a host endpoint");
            const std::optional<uint32_t> owner =
                config_.device_owners ? config_.device_owners->owner_of(d.identity) : std::nullopt;
            if (!owner)
                return refuse(ImportRefusal::DEVICE_OWNER_UNKNOWN, who() +
                                                                       ": no owner chip is recorded for it on chip " +
                                                                       std::to_string(config_.endpoint.chip_index));
            if (*owner != config_.endpoint.chip_index)
                return refuse(ImportRefusal::DEVICE_WRONG_CHIP, who() + ": owned by chip " + std::to_string(*owner) +
                                                                    ", cannot resolve on chip " +
                                                                    std::to_string(config_.endpoint.chip_index));
            out.base = descriptor_address(d);
            return {};
        }
        case BackendKind::FORK_SHM:
        case BackendKind::FORK_COW: {
            const uint64_t base = descriptor_address(d);
            if (!config_.fork_regions->pin(d.identity, base, d.nbytes, kind))
                return refuse(ImportRefusal::NOT_A_FORK_REGION,
                              who() + ": address is not a pre-fork region of this process's owner lineage");
            out.base = base;
            out.pinned = true;
            return {};
        }
        case BackendKind::POSIX_SHM: break;
    }
    const std::string name(reinterpret_cast<const char*>(d.body), d.body_len);
    const bool read_only = d.access == static_cast<uint8_t>(AccessMode::READ);
    const int fd = shm_open(shm_syscall_path(name).c_str(), read_only ? O_RDONLY : O_RDWR, 0);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT)
            return refuse(ImportRefusal::SHM_MISSING, who() + ": no shm object '" + name + "' (generation " +
                                                          std::to_string(d.identity.generation) +
                                                          " released by its owner, or never created)");
        return refuse(ImportRefusal::OS_ERROR, who() + ": shm_open '" + name + "' failed: " + std::strerror(err));
    }
    struct stat st{};
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return refuse(ImportRefusal::OS_ERROR, who() + ": fstat '" + name + "' failed: " + std::strerror(err));
    }
    if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) < d.nbytes) {
        ::close(fd);
        return refuse(ImportRefusal::SHM_TOO_SMALL, who() + ": shm object '" + name + "' holds " +
                                                        std::to_string(st.st_size) + " B, smaller than nbytes " +
                                                        std::to_string(d.nbytes));
    }
    const int prot = read_only ? PROT_READ : PROT_READ | PROT_WRITE;
    void* p = config_.syscalls.mmap ? config_.syscalls.mmap(nullptr, d.nbytes, prot, MAP_SHARED, fd, 0)
                                    : ::mmap(nullptr, d.nbytes, prot, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED)
        return refuse(ImportRefusal::OS_ERROR, who() + ": mmap '" + name + "' failed: " + std::strerror(err));
    ++stats_.maps;
    out.base = reinterpret_cast<uint64_t>(p);
    out.mapped = true;
    return {};
}

const ImportedBacking& ImportRegistry::import_backing(const BufferDescriptor& d) {
    ImportResult r = try_import(d);
    if (r.ok()) return *r.backing;
    if (r.refusal == ImportRefusal::OS_ERROR) throw std::runtime_error(r.message);
    throw ImportRefused(r.refusal, r.message);
}

namespace {

uint64_t page_size() noexcept {
    static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return size;
}

bool read_only_grant(const BufferDescriptor& d) noexcept { return d.access == static_cast<uint8_t>(AccessMode::READ); }

bool mask_bit(std::span<const uint8_t> mask, size_t i) noexcept {
    if (mask.empty()) return true;
    return i / 8 < mask.size() && (mask[i / 8] & (1u << (i % 8))) != 0;
}

}  // namespace

uint64_t ImportRegistry::read_only_base(const ImportedBacking& cb) {
    auto& b = const_cast<ImportedBacking&>(cb);  // entries_ owns it; the cache is ours to fill
    if (b.ro_base != 0) return b.ro_base;
    const auto kind = static_cast<BackendKind>(b.descriptor.backend_kind);
    const auto os_error = [&b](const char* what) {
        return std::runtime_error(std::string(backend_kind_name(b.descriptor.backend_kind)) + " backing " +
                                  b.descriptor.identity.to_string() + ": " + what +
                                  " for its read-only mapping failed: " + std::strerror(errno));
    };
    const uint64_t page = page_size();
    const uint64_t first_page = b.base & ~(page - 1);
    const uint64_t end = b.base + b.nbytes;
    if (kind == BackendKind::POSIX_SHM && read_only_grant(b.descriptor)) {
        b.ro_base = b.base;  // opened O_RDONLY and mapped PROT_READ
    } else if (kind == BackendKind::POSIX_SHM || kind == BackendKind::FORK_SHM) {
        // A second mapping of the same shared pages, then made read-only.
        const uint64_t span = ((end + page - 1) & ~(page - 1)) - first_page;
        void* p = ::mremap(reinterpret_cast<void*>(first_page), 0, span, MREMAP_MAYMOVE);
        if (p == MAP_FAILED) throw os_error("mremap");
        if (::mprotect(p, span, PROT_READ) != 0) {
            const std::runtime_error e = os_error("mprotect");
            ::munmap(p, span);
            throw e;
        }
        b.ro_base = reinterpret_cast<uint64_t>(p) + (b.base - first_page);
        b.ro_pages = reinterpret_cast<uint64_t>(p);
        b.ro_pages_len = span;
        b.ro_mapped = true;
        ++stats_.maps;
    } else if (kind == BackendKind::FORK_COW) {
        b.ro_base = b.base;
        // A forked consumer holds a private copy: protecting it touches no one
        // else. The creating process keeps its own bytes writable.
        if (!config_.fork_regions->created_here(b.descriptor.identity)) {
            const bool own = config_.fork_regions->owns_pages(b.descriptor.identity);
            const uint64_t lo = own ? first_page : (b.base + page - 1) & ~(page - 1);
            const uint64_t hi = own ? (end + page - 1) & ~(page - 1) : end & ~(page - 1);
            if (hi > lo) {
                if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ) != 0) throw os_error("mprotect");
                b.ro_pages = lo;
                b.ro_pages_len = hi - lo;
                b.ro_protected = true;
            }
        }
    } else {
        return b.base;  // device memory: the chip's own arena, nothing to protect here
    }
    if (kind != BackendKind::FORK_COW || b.ro_protected)
        b.ro_listed = list_read_only_range(b.ro_base, b.nbytes, b.descriptor);
    return b.ro_base;
}

ChipTensor ImportRegistry::materialize(const Tensor& t, bool writable) {
    throw_if_invalid(validate_tensor(t));
    const ImportedBacking& b = import_backing(t.buffer);
    ChipTensor c{};
    c.buffer.addr = writable && !read_only_grant(t.buffer) ? b.base : read_only_base(b);
    c.buffer.size = t.buffer.nbytes;
    c.start_offset = t.byte_offset / data_type_element_size(t.dtype);
    std::memcpy(c.shapes, t.shapes, sizeof c.shapes);
    std::memcpy(c.strides, t.strides, sizeof c.strides);
    c.ndims = t.ndims;
    c.dtype = t.dtype;
    c.address_space = t.buffer.address_space;
    return c;
}

void ImportRegistry::materialize_args(std::span<const Tensor> tensors, std::span<const uint64_t> scalars,
                                      ChipStorageTaskArgs& out, std::span<const uint8_t> write_mask) {
    out.clear();
    for (size_t i = 0; i < tensors.size(); ++i) out.add_tensor(materialize(tensors[i], mask_bit(write_mask, i)));
    for (uint64_t s : scalars) out.add_scalar(s);
}

MappedArg ImportRegistry::map_arg(const Tensor& t, bool writable) {
    throw_if_invalid(validate_tensor(t));
    const ImportedBacking& b = import_backing(t.buffer);
    MappedArg a;
    a.read_only = !writable || read_only_grant(t.buffer);
    a.data = reinterpret_cast<uint8_t*>(a.read_only ? read_only_base(b) : b.base) + t.byte_offset;
    a.view_nbytes = t.extent_bytes();
    a.byte_offset = t.byte_offset;
    a.backing_nbytes = t.buffer.nbytes;
    a.ndims = t.ndims;
    std::memcpy(a.shapes, t.shapes, sizeof a.shapes);
    std::memcpy(a.strides, t.strides, sizeof a.strides);
    a.dtype = t.dtype;
    a.identity = t.buffer.identity;
    return a;
}

MappedArgs ImportRegistry::map_args(std::span<const Tensor> tensors, std::span<const uint64_t> scalars,
                                    std::span<const uint8_t> write_mask) {
    MappedArgs out;
    out.tensors.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) out.tensors.push_back(map_arg(tensors[i], mask_bit(write_mask, i)));
    out.scalars.assign(scalars.begin(), scalars.end());
    return out;
}

Tensor ImportRegistry::reexport(const Tensor& t) {
    throw_if_invalid(validate_tensor(t));
    ++stats_.reexports;
    return t;
}

BufferDescriptor ImportRegistry::reexport(const BufferDescriptor& d) {
    throw_if_invalid(validate_buffer_descriptor(d));
    ++stats_.reexports;
    return d;
}

void ImportRegistry::unmap(ImportedBacking& b) noexcept {
    if (b.ro_listed) delist_read_only_range(b.ro_base);
    if (b.ro_mapped) {
        ::munmap(reinterpret_cast<void*>(b.ro_pages), b.ro_pages_len);
        ++stats_.unmaps;
    }
    if (b.ro_protected) ::mprotect(reinterpret_cast<void*>(b.ro_pages), b.ro_pages_len, PROT_READ | PROT_WRITE);
    b.ro_base = b.ro_pages = b.ro_pages_len = 0;
    b.ro_listed = b.ro_mapped = b.ro_protected = false;
    if (b.pinned) {
        try {
            config_.fork_regions->unpin(b.descriptor.identity);
        } catch (...) {
            // unpin() allocates nothing; a failed lock is the only way here.
        }
        b.pinned = false;
    }
    if (!b.mapped) return;
    void* p = reinterpret_cast<void*>(b.base);
    if (config_.syscalls.munmap)
        config_.syscalls.munmap(p, b.nbytes);
    else
        ::munmap(p, b.nbytes);
    ++stats_.unmaps;
    b.mapped = false;
}

void ImportRegistry::add_export(const CanonicalIdentity& id) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) throw std::out_of_range("ImportRegistry: " + id.to_string() + " is not imported");
    ++it->second.exports;
}

void ImportRegistry::drop_export(const CanonicalIdentity& id) noexcept {
    const auto it = entries_.find(id);
    if (it != entries_.end()) {
        if (it->second.exports > 0) --it->second.exports;
        return;
    }
    const auto kept = kept_.find(id);
    if (kept == kept_.end()) return;
    if (--kept->second.exports > 0) return;
    unmap(kept->second);
    kept_.erase(kept);
}

bool ImportRegistry::forget(const CanonicalIdentity& id) noexcept {
    try {
        SlotState& s = slots_[slot_key(id)];
        if (id.generation >= s.newest_generation) {
            s.newest_generation = id.generation;
            s.newest_released = true;
        }
    } catch (...) {
        // Out of memory for the slot record: the entry still goes; only the
        // refusal of a late descriptor of this generation is lost.
    }
    const auto it = entries_.find(id);
    if (it == entries_.end()) return false;
    bool keep = it->second.exports > 0;
    if (keep) {
        try {
            kept_.emplace(id, it->second);
        } catch (...) {
            keep = false;  // cannot record it: leak the mapping rather than unmap under a live view
        }
        if (!keep) {
            entries_.erase(it);
            return true;
        }
    } else {
        unmap(it->second);
    }
    entries_.erase(it);
    return true;
}

std::vector<CanonicalIdentity> ImportRegistry::identities() const {
    std::vector<CanonicalIdentity> out;
    out.reserve(entries_.size());
    for (const auto& [id, b] : entries_) out.push_back(id);
    return out;
}

bool ImportRegistry::unregister(const CanonicalIdentity& id) {
    const auto live = entries_.find(id);
    if (live != entries_.end() && live->second.exports > 0)
        throw ExportsAliveError("cannot unregister " + id.to_string() + ": " + std::to_string(live->second.exports) +
                                " exported view(s) of its mapping are still alive");
    SlotState& s = slots_[slot_key(id)];
    if (id.generation >= s.newest_generation) {
        s.newest_generation = id.generation;
        s.newest_released = true;
    }
    const auto it = entries_.find(id);
    if (it == entries_.end()) return false;
    unmap(it->second);
    entries_.erase(it);
    return true;
}

void ImportRegistry::close() {
    if (closed_) return;
    for (const auto& [id, b] : entries_)
        if (b.exports > 0)
            throw ExportsAliveError("cannot close the ImportRegistry: " + std::to_string(b.exports) +
                                    " exported view(s) of " + id.to_string() + " are still alive");
    if (!kept_.empty())
        throw ExportsAliveError("cannot close the ImportRegistry: " + std::to_string(kept_.begin()->second.exports) +
                                " exported view(s) of the forgotten " + kept_.begin()->first.to_string() +
                                " are still alive");
    close_unchecked();
}

void ImportRegistry::close_unchecked() noexcept {
    if (closed_) return;
    for (auto& [id, b] : entries_) unmap(b);
    entries_.clear();
    for (auto& [id, b] : kept_) unmap(b);
    kept_.clear();
    closed_ = true;
}

}  // namespace simpler
