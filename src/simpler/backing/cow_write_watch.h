// CowWriteWatch: whether the process that made a FORK_COW region wrote it after
// children were forked from it.
//
// A FORK_COW region is private memory: a child forked from its creator holds the
// bytes as of the fork, so a byte the creator writes afterwards never reaches
// the child, and a task the child runs would read the old one. The creator
// watches each such region once it has forked (Worker::init): the whole pages of
// the region are write-protected in the creator, and its first write to one
// faults; the SIGSEGV handler marks the region written, makes its pages writable
// again and returns, so the write lands as if nothing happened. A partial first
// or last page (adopted memory shares those with other data of the process, so
// they are not protected) is kept as it was and compared instead. The engine
// then refuses a task naming a written region (ForkRegionTable::cow_write_problem).
//
// The table the handler reads is a fixed array (MAX_COW_WATCHES entries) read
// without locks or allocation; each entry names the process that watches it, so
// a forked child's inherited copy never acts. A fault outside every watched range
// (or in another process) goes to the handler installed before this one (or the
// default action). Limits: a write the kernel makes into a watched page (read(2)
// into it) fails with EFAULT instead of faulting; a SIGSEGV handler installed
// after the watch began (faulthandler.enable()) sees the fault first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simpler {

inline constexpr size_t MAX_COW_WATCHES = 4096;

struct CowWriteWatch {
    int slot = -1;  // the entry in this process's table; -1: not watching
    uint64_t head_at = 0, tail_at = 0;
    std::vector<uint8_t> head, tail;  // the partial edge pages' bytes when the watch began
};

// Starts watching [base, base + nbytes) in this process: every page of it when
// owns_pages (a runtime mapping), else the pages wholly inside it, and only when
// they are writable now (read-only memory cannot be written). Throws
// std::runtime_error when the table is full or the pages cannot be protected.
CowWriteWatch start_cow_write_watch(uint64_t base, uint64_t nbytes, bool owns_pages);

// True when this process wrote the region since the watch began.
[[nodiscard]] bool cow_written(const CowWriteWatch& w) noexcept;

// Ends the watch: the protected pages are writable again (in the process that
// watches them only; a forked child's copy is just forgotten). Call it before the
// region is unmapped or given back to its user.
void stop_cow_write_watch(CowWriteWatch& w) noexcept;

// Entries in use in this process's table (for tests).
[[nodiscard]] size_t cow_watches() noexcept;

}  // namespace simpler
