// WindowMemory: the VMM_WINDOW heaps of a Worker's simulated chips and the
// communication domains carved from them (Orchestrator.allocate_domain).
//
// One window heap per chip, mapped MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE
// before the children are forked: every chip process sees every heap at the
// same address and the same bytes, so a kernel on chip 0 can store into chip
// 1's window (symmetric memory, as VMM windows are on real hardware). The
// parent makes the heaps inaccessible to itself after the forks (seal) and
// keeps only the bookkeeping, and so does every child that is not a chip; the
// chips keep every heap readable and writable.
//
// Membership: beside the heaps, a shared table says for every WINDOW_ALIGN page
// of every heap which chips are members of the domain carved there (a bit per
// chip). The parent writes it when a domain is carved and clears it when the
// windows are freed; a chip child only reads it (enter_chip makes it read-only
// there), so its import registry resolves a window range only when the chip is
// a member of the domain that owns every page of it (access()).
//
// A domain carves window_size bytes at the same offset in every member's heap
// (WINDOW_ALIGN-aligned) and lays its named buffers out inside, in order, each
// WINDOW_BUFFER_ALIGN-aligned; each (member, buffer) is a VMM_WINDOW
// descriptor with a fresh identity whose owner is that member. Every check is
// made before anything is allocated, and a refusal changes nothing.
//
// Lifetime: a release is two steps, as for device memory (device_memory.h):
// begin_release() refuses the domain's identities at submit from that moment,
// finish_release() — run by the engine once every earlier task has finished —
// zeroes the windows' bytes (the next domain carved there reads zeros, never
// this one's data), then frees the windows and the identities (the Worker then
// forgets them on every chip: a chip's import cache refuses a later descriptor
// of one, whatever lies at its address by then). A name is taken
// until its windows are freed: while the domain is live, and while it is
// releasing (releasing_named; Worker::allocate_domain waits that out).
//
// Global domains (an L4's allocate_global_domain): the L4 builds one
// WindowMemory whose "chips" are member slots, one per (L3 child, chip), before
// it forks its L3 children; set_slot_names makes the messages name them
// ("L3[1] chip 0"). Each L3 and its chips inherit the heaps and the shared
// membership table; the L4 alone carves and keeps the bookkeeping, so an L3
// judges a global window by access() on the shared table (its copy of the
// bookkeeping is the one of the fork: empty).
//
// Thread-safe (one mutex). Host layer: std::invalid_argument for a bad
// request (naming the field), std::runtime_error when the heaps have no room
// (naming the chips and their use).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simpler/backing/device_owner_table.h"
#include "simpler/backing/device_wrappers.h"

namespace simpler {

inline constexpr uint64_t DEFAULT_WINDOW_HEAP_BYTES = uint64_t{64} << 20;
inline constexpr uint64_t WINDOW_ALIGN = 4096;        // a window starts on a page
inline constexpr uint64_t WINDOW_BUFFER_ALIGN = 64;   // a buffer in a window starts on a cache line

struct WindowBufferSpec {
    std::string name;
    uint64_t nbytes = 0;
};

// One carved domain, as allocate() hands it out.
struct WindowDomain {
    uint64_t id = 0;  // this WindowMemory's handle for release
    std::string name;
    std::vector<uint32_t> workers;  // chip indices in rank order
    uint64_t window_size = 0;
    std::vector<uint64_t> bases;    // by rank: the window's device address on that chip
    std::vector<std::string> buffer_names;
    std::vector<uint64_t> buffer_offsets;  // by buffer: its offset in the window
    // buffers[rank][k]: buffer k of that rank's window, owned by that chip.
    std::vector<std::vector<DeviceBacking>> buffers;
};

// What a chip may do with a byte range of the window heaps (WindowMemory::access).
enum class WindowAccess : uint8_t {
    MEMBER = 0,      // inside windows whose domains count the chip among their members
    OUTSIDE = 1,     // not inside one window heap, or in pages no domain holds
    NOT_MEMBER = 2,  // in a domain's window, but the chip is not one of its members
};

struct WindowStats {
    uint64_t capacity_bytes = 0;
    uint64_t bytes_in_use = 0;  // windows carved on this chip (releasing ones until freed)
    uint64_t live_windows = 0;
};

class WindowMemory {
public:
    // Maps one shared heap of heap_bytes (rounded up to a page) per chip.
    // std::invalid_argument for heap_bytes 0 with chips; std::runtime_error
    // when the mapping fails.
    WindowMemory(uint32_t num_chips, uint64_t heap_bytes);
    ~WindowMemory();
    WindowMemory(const WindowMemory&) = delete;
    WindowMemory& operator=(const WindowMemory&) = delete;

    // The parent after the forks, and every child that is not a chip: no
    // window byte is reachable from this process any more.
    void seal() noexcept;
    // Chip child, after the fork: the membership table becomes read-only here.
    void enter_chip() noexcept;

    // Carves a domain. chip_lost_why[i], when not empty, is why chip i is
    // lost (it may not join); an empty vector: every chip is live.
    WindowDomain allocate(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                          const std::vector<WindowBufferSpec>& buffers,
                          const std::vector<std::string>& chip_lost_why = {});
    // Refuses the domain's identities at submit from now on and returns them
    // (for the chips' forget once the windows are freed); std::invalid_argument
    // when `id` is not a live domain.
    std::vector<CanonicalIdentity> begin_release(uint64_t id);
    // Zeroes and frees the windows and identities of a releasing domain. No-op otherwise.
    void finish_release(uint64_t id) noexcept;
    // Frees everything (the chips are gone).
    void release_all() noexcept;

    // The chip a window buffer belongs to, for a live or releasing identity.
    [[nodiscard]] std::optional<uint32_t> owner_of(const CanonicalIdentity& id) const;
    // nullopt when `id` is no window buffer of this WindowMemory; else empty
    // when a task on `chip` (nullopt: not a chip; `target` names it) may name
    // it — a member of its domain — or why not.
    [[nodiscard]] std::optional<std::string> member_problem(const CanonicalIdentity& id, std::optional<uint32_t> chip,
                                                            const std::string& target) const;
    // As member_problem, for a target that holds the slots [first, first +
    // count) (an L3 child of the L4 that owns these global windows): empty
    // when one of them is a member of the buffer's domain.
    [[nodiscard]] std::optional<std::string> member_problem_in(const CanonicalIdentity& id, uint32_t first,
                                                               uint32_t count, const std::string& target) const;
    // For a window buffer of this WindowMemory: why d is refused (released
    // domain, or a descriptor that disagrees with the one handed out). Empty otherwise.
    [[nodiscard]] std::string descriptor_problem(const BufferDescriptor& d) const;
    // True when [addr, addr + nbytes) lies inside one window heap.
    [[nodiscard]] bool contains(uint64_t addr, uint64_t nbytes) const noexcept;
    // Whether `chip` may name [addr, addr + nbytes): read from the shared
    // membership table, so it answers in a chip child too. nbytes 0 is OUTSIDE.
    [[nodiscard]] WindowAccess access(uint32_t chip, uint64_t addr, uint64_t nbytes) const noexcept;

    // The owner_worker_path_id allocate() stamps on chip i's buffers (0 until set: no path).
    void set_chip_path_ids(std::vector<uint32_t> ids) { chip_path_ids_ = std::move(ids); }

    // What messages call slot i instead of "chip i" (global windows: "L3[1] chip 0").
    void set_slot_names(std::vector<std::string> names) { slot_names_ = std::move(names); }
    // The call that carves this memory's domains, as its refusals name it
    // ("allocate_domain" unless set; a level-4 Worker's global windows are
    // carved by "allocate_global_domain").
    void set_operation(std::string name) { operation_ = std::move(name); }
    [[nodiscard]] const std::string& operation() const noexcept { return operation_; }
    [[nodiscard]] std::string slot_name(uint32_t i) const;
    // The name of the live domain whose window holds `addr`, from a small shared
    // directory the carving process writes (so it answers in a forked child
    // too); empty when none is known (released, or a member past slot 63).
    [[nodiscard]] std::string domain_name_at(uint64_t addr) const noexcept;
    // The sum of stats() over every chip (slot), and the live domains.
    [[nodiscard]] WindowStats total_stats() const;

    [[nodiscard]] uint32_t num_chips() const noexcept { return static_cast<uint32_t>(heaps_.size()); }
    [[nodiscard]] uint64_t heap_bytes() const noexcept { return heap_bytes_; }
    [[nodiscard]] WindowStats stats(uint32_t chip) const;
    [[nodiscard]] size_t live_domains() const;
    // True while a domain named `name` is released but its windows are not yet freed.
    [[nodiscard]] bool releasing_named(const std::string& name) const;

private:
    struct Domain {
        WindowDomain info;
        uint64_t offset = 0;
        uint64_t reserved = 0;  // window_size rounded up to WINDOW_ALIGN
        bool releasing = false;
    };
    struct BufferRef {
        uint64_t domain;
        uint32_t rank;
        uint32_t index;
    };
    void check_request(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                       const std::vector<WindowBufferSpec>& buffers, const std::vector<std::string>& lost) const;
    // The lowest offset free on every member for `bytes`; nullopt when none.
    [[nodiscard]] std::optional<uint64_t> common_gap(const std::vector<uint32_t>& workers, uint64_t bytes) const;
    // zero: the windows' bytes are zeroed first (zero_locked).
    void free_locked(Domain& d, bool zero) noexcept;
    void zero_locked(const Domain& d) noexcept;
    // Sets (or clears) the member bits of a domain's pages in every member's heap.
    void mark_locked(const Domain& d, bool members) noexcept;
    [[nodiscard]] uint64_t* page_bits(uint32_t heap, uint64_t page) const noexcept;
    [[nodiscard]] std::string describe_locked(const Domain& d) const;
    // member_problem's and member_problem_in's shared part: `admits` says from the
    // domain's member slots whether the target may name the buffer; `rule` ends the
    // refusal ("may only ... , not ") before the target's name.
    [[nodiscard]] std::optional<std::string> member_problem_if(
        const CanonicalIdentity& id, const std::function<bool(const std::vector<uint32_t>&)>& admits, const char* rule,
        const std::string& target) const;

    [[nodiscard]] std::string slot_list(const std::vector<uint32_t>& slots) const;
    // One entry of the shared directory of names, after the membership bits:
    // domain id % NAME_ENTRIES; a window's pages and the heaps that hold it.
    struct NameEntry {
        uint64_t first_page_plus1;  // 0: empty
        uint64_t pages;
        uint64_t heaps;  // a bit per heap (slot) below 64
        char name[40];
    };
    static constexpr uint64_t NAME_ENTRIES = 256;
    [[nodiscard]] NameEntry* names() const noexcept;
    void name_locked(const Domain& d, bool live) noexcept;
    [[nodiscard]] static uint64_t heap_mask(const std::vector<uint32_t>& heaps) noexcept;
    uint64_t table_bytes_ = 0;  // the membership bits; the directory follows

    std::vector<std::string> slot_names_;
    std::string operation_ = "allocate_domain";
    uint64_t heap_bytes_ = 0;
    bool sealed_ = false;  // seal() ran: this process cannot touch the heaps
    std::vector<uint64_t> heaps_;  // base address of chip i's heap
    // Membership table (shared): per heap, per page, words_per_page_ words of chip bits.
    uint64_t* members_ = nullptr;
    uint64_t members_bytes_ = 0;
    uint64_t words_per_page_ = 0;
    mutable std::mutex mu_;
    std::vector<std::map<uint64_t, uint64_t>> used_;  // per chip: window offset -> reserved bytes
    std::map<uint64_t, Domain> domains_;
    std::unordered_map<CanonicalIdentity, BufferRef> buffers_;
    DeviceOwnerTable owners_;
    std::vector<uint32_t> chip_path_ids_;
    uint64_t next_id_ = 1;
};

}  // namespace simpler
