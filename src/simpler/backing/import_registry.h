// ImportRegistry: the consumer side of backings. Resolves a received
// BufferDescriptor to an address in this endpoint, mapping each identity at
// most once, and builds the three consumer forms of a Tensor: a ChipTensor
// (materialize), a MappedArg (map_arg, for Python sub-workers) and a
// forwarded Tensor that keeps the source identity with nothing mapped
// (reexport). READ grants and the views a task does not write are handed out
// in the backing's read-only form (read_only_base), listed in grant_fault.h.
//
// Refusals (each an ImportRefusal code with a message naming the identity):
// an invalid descriptor; a different descriptor under an identity already
// imported; a stale generation (older than one seen for the same buffer_id, or
// one unregistered here, or one the owner's minter reports released when the
// owner is this incarnation); a POSIX shm object that is missing or smaller
// than nbytes; a FORK_* address that is not a pre-fork region of this process
// (fork_region_table.h); a DEVICE backing on a host endpoint, on a chip other
// than its owner, or whose owner is unknown (device_owner_table.h); a
// VMM_WINDOW backing on a host endpoint or outside the window heaps (it
// resolves on any chip whose window heaps hold it: peers share windows);
// REMOTE_SIDECAR (not supported here). The registry never unlinks anything;
// unregister()/forget()/close() unmap only what it mapped. forget() is how an
// owner's free reaches a consumer (the Worker's forget message): a mapping a
// host export still refers to outlives it, outside the cache.
//
// Trust: a descriptor is either equal, in every validated field, to one this
// registry validated and cached (a hit: the identity lookup reads only the 32
// identity bytes, in bounds for any input), or it is validated before any other
// field is used. The
// try_* forms are noexcept and return the refusal as data; the others throw
// ImportRefused (std::invalid_argument) or std::runtime_error for OS failures.
// Not thread-safe: one registry per consuming endpoint thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

#include "simpler/backing/backing_owner.h"
#include "simpler/backing/mapped_arg.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args.h"

namespace simpler {

class IdentityMinter;
class ForkRegionTable;
class DeviceOwnerTable;

struct Endpoint {
    bool is_chip = false;
    uint32_t chip_index = 0;
    static constexpr Endpoint host() noexcept { return {}; }
    static constexpr Endpoint chip(uint32_t index) noexcept { return {true, index}; }
};

enum class ImportRefusal : uint8_t {
    NONE = 0,
    INVALID_DESCRIPTOR = 1,
    REGISTRY_CLOSED = 2,
    DESCRIPTOR_MISMATCH = 3,
    STALE_GENERATION = 4,
    SHM_MISSING = 5,
    SHM_TOO_SMALL = 6,
    NOT_A_FORK_REGION = 7,
    DEVICE_ON_HOST = 8,
    DEVICE_WRONG_CHIP = 9,
    DEVICE_OWNER_UNKNOWN = 10,
    REMOTE_UNSUPPORTED = 11,
    OS_ERROR = 12,
    WINDOW_OUTSIDE = 13,
};
const char* import_refusal_name(ImportRefusal r) noexcept;

class ImportRefused : public std::invalid_argument {
public:
    ImportRefused(ImportRefusal r, const std::string& message) : std::invalid_argument(message), refusal_(r) {}
    [[nodiscard]] ImportRefusal refusal() const noexcept { return refusal_; }

private:
    ImportRefusal refusal_;
};

// The mapping syscalls, as a test seam; an empty function means the real call.
struct ImportSyscalls {
    std::function<void*(void*, size_t, int, int, int, off_t)> mmap;
    std::function<int(void*, size_t)> munmap;
};

struct ImportRegistryConfig {
    Endpoint endpoint = Endpoint::host();
    IdentityMinter* owner_minter = nullptr;          // nullptr: process_identity_minter()
    ForkRegionTable* fork_regions = nullptr;         // nullptr: process_fork_regions(); pinned on import
    const DeviceOwnerTable* device_owners = nullptr; // nullptr: no DEVICE_MALLOC backing resolves
    // Whether [addr, addr + nbytes) lies inside this endpoint's window heaps
    // (window_memory.h); empty: no VMM_WINDOW backing resolves.
    std::function<bool(uint64_t, uint64_t)> window_range;
    ImportSyscalls syscalls;
};

struct ImportedBacking {
    uint64_t base = 0;  // address of byte 0 of the backing in this endpoint
    uint64_t nbytes = 0;
    bool mapped = false;  // this registry mapped it (and unmaps it)
    bool pinned = false;  // this registry pinned its fork region (and unpins it)
    int64_t exports = 0;  // live host exports of these bytes (add_export)
    BufferDescriptor descriptor{};
    // The read-only form (read_only_base): 0 until first asked for. For a
    // READ-granted POSIX shm object it is `base` (mapped PROT_READ); for a
    // writable shm object or a FORK_SHM region a second mapping of the same
    // pages (mremap of size 0) made PROT_READ; for a FORK_COW region in a
    // forked consumer `base` itself, made PROT_READ (the consumer's private
    // copy); in the process that created a FORK_COW region, `base` unchanged.
    // A base inside a page (adopted memory) keeps its offset in the page: the
    // second mapping covers the whole pages the backing touches; a FORK_COW
    // region that does not own its pages has only the pages wholly inside it
    // protected (the others may hold the process's other data).
    uint64_t ro_base = 0;
    uint64_t ro_pages = 0;       // start of the page span mapped or protected (0: none)
    uint64_t ro_pages_len = 0;   // its length in bytes
    bool ro_mapped = false;     // ro_base is a second mapping this registry unmaps
    bool ro_protected = false;  // base was made PROT_READ here (restored on unmap)
    bool ro_listed = false;     // ro_base is listed in the grant-fault table
};

struct ImportResult {
    ImportRefusal refusal = ImportRefusal::NONE;
    const ImportedBacking* backing = nullptr;  // set when ok(); owned by the registry
    std::string message;
    [[nodiscard]] bool ok() const noexcept { return refusal == ImportRefusal::NONE; }
};

struct ImportStats {
    uint64_t receipts = 0;   // import calls that reached the cache lookup
    uint64_t hits = 0;       // receipts answered from the cache
    uint64_t maps = 0;       // mmap calls made
    uint64_t unmaps = 0;
    uint64_t reexports = 0;
    uint64_t refusals = 0;
};

class ImportRegistry {
public:
    explicit ImportRegistry(ImportRegistryConfig config = {});
    ~ImportRegistry();
    ImportRegistry(const ImportRegistry&) = delete;
    ImportRegistry& operator=(const ImportRegistry&) = delete;

    // Resolves d (map-once per identity). The returned backing stays valid
    // until unregister(d.identity) or close().
    ImportResult try_import(const BufferDescriptor& d) noexcept;
    const ImportedBacking& import_backing(const BufferDescriptor& d);

    // Tensor -> ChipTensor: addr = backing base, size = nbytes,
    // start_offset = byte_offset / element size. Validates t first.
    // With writable false (an INPUT argument) or a READ grant the address is
    // the backing's read-only form (read_only_base), so a write through it
    // faults (grant_fault.h) instead of landing.
    ChipTensor materialize(const Tensor& t, bool writable = true);
    // write_mask: CallConfig's (bit i set: tensor i is written); empty: every
    // tensor as its grant allows.
    void materialize_args(std::span<const Tensor> tensors, std::span<const uint64_t> scalars, ChipStorageTaskArgs& out,
                          std::span<const uint8_t> write_mask = {});

    // Tensor -> MappedArg (host address at the view; read-only, and mapped so,
    // for READ grants and for writable false).
    MappedArg map_arg(const Tensor& t, bool writable = true);
    MappedArgs map_args(std::span<const Tensor> tensors, std::span<const uint64_t> scalars,
                        std::span<const uint8_t> write_mask = {});

    // The address of byte 0 of b's read-only form, made on first use (at most
    // one per backing) and listed in the grant-fault table. Throws
    // std::runtime_error when the OS refuses.
    uint64_t read_only_base(const ImportedBacking& b);

    // Forwarding: a validated copy that keeps the source identity; maps nothing.
    Tensor reexport(const Tensor& t);
    BufferDescriptor reexport(const BufferDescriptor& d);

    // Export accounting for host access paths (a Python MappedArg): while an
    // identity has live exports, unregister() and close() refuse with
    // ExportsAliveError. add_export throws std::out_of_range for an identity
    // that is not imported.
    void add_export(const CanonicalIdentity& id);
    void drop_export(const CanonicalIdentity& id) noexcept;

    // Drops the identity's entry (unmapping what this registry mapped) and
    // refuses its generation from now on; false when it was not imported.
    bool unregister(const CanonicalIdentity& id);
    // The owner freed the backing: like unregister(), but never refuses. While
    // host exports of the mapping are alive (a Python object still refers to
    // it) the mapping is kept, out of the cache, and unmapped at its last
    // drop_export(); false when the identity was not imported.
    bool forget(const CanonicalIdentity& id) noexcept;
    // The identities the cache holds now (forgotten mappings kept alive by
    // exports are not in it), in no particular order.
    [[nodiscard]] std::vector<CanonicalIdentity> identities() const;
    // Forgotten mappings still alive because of exports.
    [[nodiscard]] size_t kept_for_exports() const noexcept { return kept_.size(); }
    // Unmaps everything; later imports are refused. Idempotent. Both throw
    // ExportsAliveError (changing nothing) while exports are alive.
    void close();

    [[nodiscard]] bool closed() const noexcept { return closed_; }
    [[nodiscard]] size_t size() const noexcept { return entries_.size(); }
    [[nodiscard]] const ImportStats& stats() const noexcept { return stats_; }
    [[nodiscard]] const Endpoint& endpoint() const noexcept { return config_.endpoint; }

private:
    struct SlotKey {
        uint64_t owner;
        uint64_t buffer_id;
        bool operator==(const SlotKey&) const = default;
    };
    struct SlotKeyHash {
        size_t operator()(const SlotKey& k) const noexcept;
    };
    struct SlotState {
        uint32_t newest_generation = 0;
        bool newest_released = false;
    };

    ImportResult refuse(ImportRefusal r, std::string message) noexcept;
    ImportResult resolve_new(const BufferDescriptor& d, ImportedBacking& out) noexcept;
    ImportResult check_generation(const BufferDescriptor& d) noexcept;
    void unmap(ImportedBacking& b) noexcept;  // and unpin
    void close_unchecked() noexcept;
    static SlotKey slot_key(const CanonicalIdentity& id) noexcept;

    ImportRegistryConfig config_;
    std::unordered_map<CanonicalIdentity, ImportedBacking> entries_;
    // Forgotten while exported: unmapped at the last drop_export (or close()).
    std::unordered_map<CanonicalIdentity, ImportedBacking> kept_;
    std::unordered_map<SlotKey, SlotState, SlotKeyHash> slots_;
    ImportStats stats_;
    bool closed_ = false;
};

}  // namespace simpler
