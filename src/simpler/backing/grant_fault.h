// Grant faults: turning a write to read-only granted bytes into a task error.
//
// A consumer maps READ-granted bytes, and the INPUT views of writable ones,
// read-only (import_registry.h). A write through such a mapping faults
// (SIGSEGV). The ImportRegistry lists every read-only range it maps here, with
// the buffer and the grant it stands for; a process that serves tasks installs
// the handler with a reporter (engine/worker.cpp: the child's mailbox). On a
// fault inside a listed range the handler formats
//   "write to read-only bytes of buffer <identity> (<BACKEND>, grants READ)
//    at byte offset <n>; <process> was ended ..."
// hands it to the reporter and ends the process with _exit(GRANT_FAULT_EXIT_STATUS):
// the faulting code cannot be resumed (a Python interpreter or a kernel in the
// middle of a store), so the child is lost and its owner reports the task
// failed with this message. A fault anywhere else is passed on to the handler
// that was installed before (or the default action) unchanged.
//
// The table is a fixed array (MAX_GRANT_FAULT_RANGES entries, an address range
// and a preformatted message each) that the handler reads without locks or
// allocation; a range that does not fit is not listed, and a write to it ends
// the process with a plain SIGSEGV. Mutations take a mutex and happen between
// tasks (when a consumer maps or unmaps), never while a handler runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simpler/task_interface/buffer.h"

namespace simpler {

inline constexpr size_t MAX_GRANT_FAULT_RANGES = 512;
inline constexpr int GRANT_FAULT_EXIT_STATUS = 86;

// Receives the message (not NUL-terminated) from inside the signal handler:
// must be async-signal-safe.
using GrantFaultReporter = void (*)(const char* message, size_t length) noexcept;

// Lists [begin, begin + nbytes) as read-only bytes of the backing d. False when
// the table is full (the range is then not listed).
bool list_read_only_range(uint64_t begin, uint64_t nbytes, const BufferDescriptor& d) noexcept;
void delist_read_only_range(uint64_t begin) noexcept;
[[nodiscard]] size_t listed_read_only_ranges() noexcept;

// Installs the SIGSEGV / SIGBUS handler in this process (idempotent; the
// reporter is replaced). `process` names this process in the message
// ("sub-worker 0", "chip 1"); at most 63 bytes are kept.
void install_grant_fault_handler(GrantFaultReporter reporter, const char* process);

// The message the handler would report for a fault at `addr` (empty when addr
// is in no listed range); for tests.
[[nodiscard]] std::string grant_fault_message(uint64_t addr);

}  // namespace simpler
