#include "simpler/engine/window_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "simpler/backing/owned_backing_table.h"

namespace simpler {

namespace {

// x rounded up to a multiple of `align` (a power of two); nullopt on overflow.
std::optional<uint64_t> round_up(uint64_t x, uint64_t align) noexcept {
    uint64_t r = 0;
    if (__builtin_add_overflow(x, align - 1, &r)) return std::nullopt;
    return r & ~(align - 1);
}

std::string chip_list(const std::vector<uint32_t>& chips) {
    std::string s;
    for (size_t i = 0; i < chips.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(chips[i]);
    }
    return s;
}

}  // namespace

WindowMemory::WindowMemory(uint32_t num_chips, uint64_t heap_bytes) {
    if (num_chips == 0) return;
    if (heap_bytes == 0) throw std::invalid_argument("window_heap_bytes: must be > 0 (got 0)");
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::optional<uint64_t> rounded = round_up(heap_bytes, std::max(page, WINDOW_ALIGN));
    if (!rounded || *rounded > (uint64_t{1} << 46))
        throw std::invalid_argument("window_heap_bytes: " + std::to_string(heap_bytes) + " is more than 64 TiB");
    heap_bytes_ = *rounded;
    used_.resize(num_chips);
    for (uint32_t i = 0; i < num_chips; ++i) {
        void* p =
            ::mmap(nullptr, heap_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            for (uint64_t base : heaps_) ::munmap(reinterpret_cast<void*>(base), heap_bytes_);
            heaps_.clear();
            throw std::runtime_error("window heap of chip " + std::to_string(i) + ": mmap of " +
                                     std::to_string(heap_bytes_) + " bytes failed: " + std::strerror(err));
        }
        heaps_.push_back(reinterpret_cast<uint64_t>(p));
    }
    words_per_page_ = (uint64_t{num_chips} + 63) / 64;
    table_bytes_ = uint64_t{num_chips} * (heap_bytes_ / WINDOW_ALIGN) * words_per_page_ * sizeof(uint64_t);
    members_bytes_ = table_bytes_ + NAME_ENTRIES * sizeof(NameEntry);  // the directory of names follows the bits
    void* t =
        ::mmap(nullptr, members_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t == MAP_FAILED) {
        const int err = errno;
        for (uint64_t base : heaps_) ::munmap(reinterpret_cast<void*>(base), heap_bytes_);
        heaps_.clear();
        throw std::runtime_error("window membership table: mmap of " + std::to_string(members_bytes_) +
                                 " bytes failed: " + std::strerror(err));
    }
    members_ = static_cast<uint64_t*>(t);
}

WindowMemory::~WindowMemory() {
    for (uint64_t base : heaps_) ::munmap(reinterpret_cast<void*>(base), heap_bytes_);
    if (members_ != nullptr) ::munmap(members_, members_bytes_);
}

void WindowMemory::seal() noexcept {
    sealed_ = true;
    for (uint64_t base : heaps_) ::mprotect(reinterpret_cast<void*>(base), heap_bytes_, PROT_NONE);
}

void WindowMemory::enter_chip() noexcept {
    if (members_ != nullptr) ::mprotect(members_, members_bytes_, PROT_READ);
}

uint64_t* WindowMemory::page_bits(uint32_t heap, uint64_t page) const noexcept {
    return members_ + (uint64_t{heap} * (heap_bytes_ / WINDOW_ALIGN) + page) * words_per_page_;
}

WindowMemory::NameEntry* WindowMemory::names() const noexcept {
    return reinterpret_cast<NameEntry*>(reinterpret_cast<char*>(members_) + table_bytes_);
}

void WindowMemory::name_locked(const Domain& d, bool live) noexcept {
    NameEntry& e = names()[d.info.id % NAME_ENTRIES];
    const uint64_t first = d.offset / WINDOW_ALIGN + 1;
    if (!live) {
        uint64_t mine = first;  // cleared only when the entry is still this domain's
        if (__atomic_load_n(&e.heaps, __ATOMIC_RELAXED) == heap_mask(d.info.workers))
            __atomic_compare_exchange_n(&e.first_page_plus1, &mine, uint64_t{0}, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&e.first_page_plus1, uint64_t{0}, __ATOMIC_RELEASE);
    const uint64_t mask = heap_mask(d.info.workers);
    if (mask == 0) return;  // a member slot past 63: no name in the directory
    std::memset(e.name, 0, sizeof e.name);
    std::memcpy(e.name, d.info.name.data(), std::min(d.info.name.size(), sizeof e.name - 1));
    __atomic_store_n(&e.pages, d.reserved / WINDOW_ALIGN, __ATOMIC_RELAXED);
    __atomic_store_n(&e.heaps, mask, __ATOMIC_RELAXED);
    __atomic_store_n(&e.first_page_plus1, first, __ATOMIC_RELEASE);
}

uint64_t WindowMemory::heap_mask(const std::vector<uint32_t>& heaps) noexcept {
    uint64_t mask = 0;
    for (uint32_t h : heaps) {
        if (h >= 64) return 0;
        mask |= uint64_t{1} << h;
    }
    return mask;
}

std::string WindowMemory::domain_name_at(uint64_t addr) const noexcept {
    if (members_ == nullptr) return {};
    for (uint32_t heap = 0; heap < heaps_.size() && heap < 64; ++heap) {
        const uint64_t base = heaps_[heap];
        if (addr < base || addr - base >= heap_bytes_) continue;
        const uint64_t page = (addr - base) / WINDOW_ALIGN;
        for (uint64_t i = 0; i < NAME_ENTRIES; ++i) {
            const NameEntry& e = names()[i];
            const uint64_t first = __atomic_load_n(&e.first_page_plus1, __ATOMIC_ACQUIRE);
            if (first == 0 || page + 1 < first || page + 1 - first >= __atomic_load_n(&e.pages, __ATOMIC_RELAXED) ||
                (__atomic_load_n(&e.heaps, __ATOMIC_RELAXED) & (uint64_t{1} << heap)) == 0)
                continue;
            return std::string(e.name, strnlen(e.name, sizeof e.name));
        }
        return {};
    }
    return {};
}

void WindowMemory::mark_locked(const Domain& d, bool members) noexcept {
    for (uint32_t heap : d.info.workers)
        for (uint64_t page = d.offset / WINDOW_ALIGN; page < (d.offset + d.reserved) / WINDOW_ALIGN; ++page) {
            uint64_t* bits = page_bits(heap, page);
            for (uint64_t w = 0; w < words_per_page_; ++w) __atomic_store_n(&bits[w], uint64_t{0}, __ATOMIC_RELAXED);
            if (!members) continue;
            for (uint32_t chip : d.info.workers)
                __atomic_fetch_or(&bits[chip / 64], uint64_t{1} << (chip % 64), __ATOMIC_RELAXED);
        }
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

void WindowMemory::check_request(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                                 const std::vector<WindowBufferSpec>& buffers,
                                 const std::vector<std::string>& lost) const {
    if (name.empty()) throw std::invalid_argument(operation_ + ": name must be a non-empty string");
    const std::string what = operation_ + " '" + name + "'";
    for (const auto& [id, d] : domains_) {
        if (d.info.name != name) continue;
        if (!d.releasing)
            throw std::invalid_argument(what + ": a domain of that name is live (" + slot_list(d.info.workers) +
                                        "); leave its block (or release() it) first, or choose another name");
        throw std::invalid_argument(what +
                                    ": a domain of that name was released, but tasks submitted before "
                                    "its release still run (" +
                                    slot_list(d.info.workers) + "); its name is free once its windows are");
    }
    if (workers.empty()) throw std::invalid_argument(what + ": workers must name at least one chip");
    for (size_t i = 0; i < workers.size(); ++i) {
        if (workers[i] >= heaps_.size())
            throw std::invalid_argument(what + ": workers[" + std::to_string(i) + "]=" + std::to_string(workers[i]) +
                                        " is not a chip of this Worker (it has " + std::to_string(heaps_.size()) +
                                        " chips)");
        for (size_t j = 0; j < i; ++j)
            if (workers[j] == workers[i])
                throw std::invalid_argument(what + ": chip " + std::to_string(workers[i]) +
                                            " is listed twice in workers (workers[" + std::to_string(j) +
                                            "] and workers[" + std::to_string(i) + "])");
        if (workers[i] < lost.size() && !lost[workers[i]].empty())
            throw std::invalid_argument(what + ": " + slot_name(workers[i]) + " is lost (" + lost[workers[i]] + ")");
    }
    if (window_size == 0) throw std::invalid_argument(what + ": window_size must be > 0");
    if (window_size > heap_bytes_)
        throw std::invalid_argument(what + ": window_size " + std::to_string(window_size) +
                                    " bytes is larger than a chip's window heap (" + std::to_string(heap_bytes_) +
                                    " bytes, the Worker option window_heap_bytes)");
    uint64_t end = 0;
    std::string layout;
    for (size_t i = 0; i < buffers.size(); ++i) {
        const WindowBufferSpec& b = buffers[i];
        if (b.name.empty())
            throw std::invalid_argument(what + ": buffers[" + std::to_string(i) + "]: name must be non-empty");
        for (size_t j = 0; j < i; ++j)
            if (buffers[j].name == b.name)
                throw std::invalid_argument(what + ": buffer name '" + b.name + "' appears twice (buffers[" +
                                            std::to_string(j) + "] and buffers[" + std::to_string(i) + "])");
        if (b.nbytes == 0) throw std::invalid_argument(what + ": buffer '" + b.name + "': nbytes must be > 0");
        const std::optional<uint64_t> at = round_up(end, WINDOW_BUFFER_ALIGN);
        if (!at || __builtin_add_overflow(*at, b.nbytes, &end)) end = UINT64_MAX;
        if (i > 0) layout += ", ";
        layout += b.name + " " + std::to_string(b.nbytes) + " B at " + (at ? std::to_string(*at) : "overflow");
    }
    if (end > window_size)
        throw std::invalid_argument(what + ": the buffers do not fit in window_size " + std::to_string(window_size) +
                                    " bytes (" + layout + "; each starts on " + std::to_string(WINDOW_BUFFER_ALIGN) +
                                    " bytes)");
}

std::optional<uint64_t> WindowMemory::common_gap(const std::vector<uint32_t>& workers, uint64_t bytes) const {
    // The union of the members' used ranges, in offset order; the first hole that fits.
    std::vector<std::pair<uint64_t, uint64_t>> used;
    for (uint32_t w : workers) used.insert(used.end(), used_[w].begin(), used_[w].end());
    std::sort(used.begin(), used.end());
    uint64_t at = 0;
    for (const auto& [offset, size] : used) {
        if (offset >= at && offset - at >= bytes) return at;
        at = std::max(at, offset + size);
    }
    if (at <= heap_bytes_ && heap_bytes_ - at >= bytes) return at;
    return std::nullopt;
}

WindowDomain WindowMemory::allocate(const std::string& name, const std::vector<uint32_t>& workers, uint64_t window_size,
                                    const std::vector<WindowBufferSpec>& buffers,
                                    const std::vector<std::string>& chip_lost_why) {
    std::lock_guard lock(mu_);
    check_request(name, workers, window_size, buffers, chip_lost_why);
    const uint64_t reserved = *round_up(window_size, WINDOW_ALIGN);  // window_size <= heap_bytes_ < 2^46
    const std::optional<uint64_t> offset = common_gap(workers, reserved);
    if (!offset) {
        std::string use;
        for (uint32_t w : workers) {
            uint64_t in_use = 0;
            for (const auto& [o, size] : used_[w]) in_use += size;
            if (!use.empty()) use += "; ";
            use += slot_name(w) + ": " + std::to_string(in_use) + " in use in " + std::to_string(used_[w].size()) +
                   " windows";
        }
        throw std::runtime_error(operation_ + " '" + name + "': the window heaps of " + slot_list(workers) +
                                 " have no common free range of " + std::to_string(reserved) + " bytes (each heap " +
                                 std::to_string(heap_bytes_) + " bytes, the Worker option window_heap_bytes; " + use +
                                 ")");
    }
    Domain d;
    d.offset = *offset;
    d.reserved = reserved;
    d.info.id = next_id_;
    d.info.name = name;
    d.info.workers = workers;
    d.info.window_size = window_size;
    uint64_t end = 0;
    for (const WindowBufferSpec& b : buffers) {
        const uint64_t at = *round_up(end, WINDOW_BUFFER_ALIGN);
        d.info.buffer_names.push_back(b.name);
        d.info.buffer_offsets.push_back(at);
        end = at + b.nbytes;
    }
    // Identities are minted last, each undone if a later one fails.
    try {
        for (uint32_t rank = 0; rank < workers.size(); ++rank) {
            const uint32_t chip = workers[rank];
            const uint64_t base = heaps_[chip] + d.offset;
            d.info.bases.push_back(base);
            std::vector<DeviceBacking>& mine = d.info.buffers.emplace_back();
            const uint32_t path_id = chip < chip_path_ids_.size() ? chip_path_ids_[chip] : 0;
            for (size_t k = 0; k < buffers.size(); ++k)
                mine.push_back(wrap_device_pointer(BackendKind::VMM_WINDOW, base + d.info.buffer_offsets[k],
                                                   buffers[k].nbytes, AccessMode::READWRITE, chip, owners_, nullptr,
                                                   path_id));
        }
    } catch (...) {
        for (const auto& mine : d.info.buffers)
            for (const DeviceBacking& b : mine) release_device_backing(b, owners_);
        throw;
    }
    ++next_id_;
    mark_locked(d, true);
    name_locked(d, true);
    for (uint32_t rank = 0; rank < workers.size(); ++rank) {
        used_[workers[rank]].emplace(d.offset, reserved);
        for (uint32_t k = 0; k < buffers.size(); ++k)
            buffers_.emplace(d.info.buffers[rank][k].descriptor.identity, BufferRef{d.info.id, rank, k});
    }
    return domains_.emplace(d.info.id, std::move(d)).first->second.info;
}

std::vector<CanonicalIdentity> WindowMemory::begin_release(uint64_t id) {
    std::lock_guard lock(mu_);
    auto it = domains_.find(id);
    if (it == domains_.end()) throw std::invalid_argument("release of domain " + std::to_string(id) + ": not live");
    if (it->second.releasing)
        throw std::invalid_argument("release of domain '" + it->second.info.name + "': already released");
    std::vector<CanonicalIdentity> identities;
    for (const auto& mine : it->second.info.buffers)
        for (const DeviceBacking& b : mine) identities.push_back(b.descriptor.identity);
    it->second.releasing = true;
    return identities;
}

void WindowMemory::zero_locked(const Domain& d) noexcept {
    // Punching the pages out of the shared mapping zeroes them for every
    // process that maps the heap (and gives the memory back); it works through
    // the seal (PROT_NONE), since it asks the kernel, not this process, to write.
    for (uint32_t heap : d.info.workers) {
        void* at = reinterpret_cast<void*>(heaps_[heap] + d.offset);
        if (::madvise(at, d.reserved, MADV_REMOVE) == 0) continue;
        // A kernel without hole punching on shared memory: write the zeros here.
        if (sealed_ && ::mprotect(at, d.reserved, PROT_READ | PROT_WRITE) != 0) continue;
        std::memset(at, 0, d.reserved);
        if (sealed_) ::mprotect(at, d.reserved, PROT_NONE);
    }
}

void WindowMemory::free_locked(Domain& d, bool zero) noexcept {
    name_locked(d, false);
    mark_locked(d, false);
    if (zero) zero_locked(d);
    for (uint32_t rank = 0; rank < d.info.workers.size(); ++rank) {
        used_[d.info.workers[rank]].erase(d.offset);
        for (const DeviceBacking& b : d.info.buffers[rank]) {
            buffers_.erase(b.descriptor.identity);
            release_device_backing(b, owners_);
        }
    }
}

void WindowMemory::finish_release(uint64_t id) noexcept {
    std::lock_guard lock(mu_);
    auto it = domains_.find(id);
    if (it == domains_.end() || !it->second.releasing) return;
    free_locked(it->second, /*zero=*/true);
    domains_.erase(it);
}

void WindowMemory::release_all() noexcept {
    std::lock_guard lock(mu_);
    for (auto& [id, d] : domains_) free_locked(d, /*zero=*/false);  // no chip is left to read them
    domains_.clear();
}

std::optional<uint32_t> WindowMemory::owner_of(const CanonicalIdentity& id) const {
    if (heaps_.empty()) return std::nullopt;
    return owners_.owner_of(id);
}

std::string WindowMemory::slot_name(uint32_t i) const {
    return i < slot_names_.size() ? slot_names_[i] : "chip " + std::to_string(i);
}

std::string WindowMemory::slot_list(const std::vector<uint32_t>& slots) const {
    if (slot_names_.empty()) return "chips " + chip_list(slots);
    std::string s = "members ";
    for (size_t i = 0; i < slots.size(); ++i) {
        if (i > 0) s += ", ";
        s += slot_name(slots[i]);
    }
    return s;
}

std::string WindowMemory::describe_locked(const Domain& d) const {
    return "domain '" + d.info.name + "' (" + slot_list(d.info.workers) + ")";
}

std::optional<std::string> WindowMemory::member_problem_if(
    const CanonicalIdentity& id, const std::function<bool(const std::vector<uint32_t>&)>& admits, const char* rule,
    const std::string& target) const {
    if (heaps_.empty()) return std::nullopt;
    std::lock_guard lock(mu_);
    auto it = buffers_.find(id);
    if (it == buffers_.end()) return std::nullopt;
    const Domain& d = domains_.at(it->second.domain);
    if (admits(d.info.workers)) return std::string{};
    return "window buffer '" + d.info.buffer_names[it->second.index] + "' of " +
           slot_name(d.info.workers[it->second.rank]) + " in " + describe_locked(d) + rule + target;
}

std::optional<std::string> WindowMemory::member_problem(const CanonicalIdentity& id, std::optional<uint32_t> chip,
                                                        const std::string& target) const {
    return member_problem_if(
        id,
        [&](const std::vector<uint32_t>& workers) {
            return chip && std::find(workers.begin(), workers.end(), *chip) != workers.end();
        },
        " may only be named by a task on a chip of that domain, not by ", target);
}

std::optional<std::string> WindowMemory::member_problem_in(const CanonicalIdentity& id, uint32_t first, uint32_t count,
                                                           const std::string& target) const {
    return member_problem_if(
        id,
        [&](const std::vector<uint32_t>& workers) {
            return std::any_of(workers.begin(), workers.end(),
                               [&](uint32_t slot) { return slot >= first && slot - first < count; });
        },
        " may only go to a child that holds a member chip, not to ", target);
}

std::string WindowMemory::descriptor_problem(const BufferDescriptor& d) const {
    if (heaps_.empty()) return {};
    std::lock_guard lock(mu_);
    auto it = buffers_.find(d.identity);
    if (it == buffers_.end()) return {};
    const Domain& dom = domains_.at(it->second.domain);
    const std::string buffer = "window buffer '" + dom.info.buffer_names[it->second.index] + "' of " +
                               slot_name(dom.info.workers[it->second.rank]) + " in " + describe_locked(dom);
    if (dom.releasing)
        return buffer +
               ": the domain was released (its block ended or release() was called); a task may not name "
               "it any more";
    const BufferDescriptor& r = dom.info.buffers[it->second.rank][it->second.index].descriptor;
    if (r.backend_kind != d.backend_kind || r.address_space != d.address_space || r.nbytes != d.nbytes ||
        descriptor_address(r) != descriptor_address(d))
        return "the descriptor disagrees with its owner's record (" + std::string(backend_kind_name(d.backend_kind)) +
               ", " + std::to_string(d.nbytes) + " B; " + buffer + " was handed out as " +
               backend_kind_name(r.backend_kind) + ", " + std::to_string(r.nbytes) + " B at another address)";
    if (!grant_within(static_cast<AccessMode>(d.access), static_cast<AccessMode>(r.access)))
        return std::string("the descriptor grants ") + access_mode_name(d.access) + ", but its owner granted " +
               access_mode_name(r.access) + " (" + buffer + ")";
    return {};
}

bool WindowMemory::contains(uint64_t addr, uint64_t nbytes) const noexcept {
    for (uint64_t base : heaps_)
        if (addr >= base && nbytes <= heap_bytes_ && addr - base <= heap_bytes_ - nbytes) return true;
    return false;
}

WindowAccess WindowMemory::access(uint32_t chip, uint64_t addr, uint64_t nbytes) const noexcept {
    if (nbytes == 0 || chip >= heaps_.size()) return WindowAccess::OUTSIDE;
    for (uint32_t heap = 0; heap < heaps_.size(); ++heap) {
        const uint64_t base = heaps_[heap];
        if (addr < base || nbytes > heap_bytes_ || addr - base > heap_bytes_ - nbytes) continue;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        const uint64_t first = (addr - base) / WINDOW_ALIGN;
        const uint64_t last = (addr - base + nbytes - 1) / WINDOW_ALIGN;
        for (uint64_t page = first; page <= last; ++page) {
            const uint64_t* bits = page_bits(heap, page);
            bool any = false;
            for (uint64_t w = 0; w < words_per_page_; ++w)
                any = any || __atomic_load_n(&bits[w], __ATOMIC_RELAXED) != 0;
            if (!any) return WindowAccess::OUTSIDE;
            if ((__atomic_load_n(&bits[chip / 64], __ATOMIC_RELAXED) & (uint64_t{1} << (chip % 64))) == 0)
                return WindowAccess::NOT_MEMBER;
        }
        return WindowAccess::MEMBER;
    }
    return WindowAccess::OUTSIDE;
}

WindowStats WindowMemory::stats(uint32_t chip) const {
    if (chip >= heaps_.size())
        throw std::invalid_argument("window memory stats: chip=" + std::to_string(chip) + ", this Worker has " +
                                    std::to_string(heaps_.size()) + " chips");
    std::lock_guard lock(mu_);
    WindowStats s;
    s.capacity_bytes = heap_bytes_;
    for (const auto& [offset, size] : used_[chip]) s.bytes_in_use += size;
    s.live_windows = used_[chip].size();
    return s;
}

WindowStats WindowMemory::total_stats() const {
    std::lock_guard lock(mu_);
    WindowStats s;
    s.capacity_bytes = heap_bytes_ * heaps_.size();
    for (const auto& used : used_) {
        for (const auto& [offset, size] : used) s.bytes_in_use += size;
        s.live_windows += used.size();
    }
    return s;
}

bool WindowMemory::releasing_named(const std::string& name) const {
    std::lock_guard lock(mu_);
    return std::any_of(domains_.begin(), domains_.end(),
                       [&](const auto& e) { return e.second.releasing && e.second.info.name == name; });
}

size_t WindowMemory::live_domains() const {
    std::lock_guard lock(mu_);
    return domains_.size();
}

}  // namespace simpler
