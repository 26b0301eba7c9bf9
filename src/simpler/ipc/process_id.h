// The calling process's id without a system call.
//
// getpid() is a system call on current glibc (~150 ns on this VM: as much as a
// whole hot hand-off), and the Worker asks it on every submit and every wait to
// refuse use from a forked copy. current_process_id() reads a cached copy
// instead. The cache is filled on first use and refreshed in every child made
// by fork() (a pthread_atfork child handler, which also runs for Python's
// os.fork and multiprocessing's fork start method). A process made by a raw
// clone system call that skips the atfork handlers and keeps running this
// program would read its parent's id: nothing in simpler makes one.
#pragma once

#include <sys/types.h>

namespace simpler::ipc {

pid_t current_process_id() noexcept;

}  // namespace simpler::ipc
