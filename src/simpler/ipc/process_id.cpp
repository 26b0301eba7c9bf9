#include "simpler/ipc/process_id.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace simpler::ipc {

namespace {

std::atomic<pid_t> cached_pid{0};  // 0: not read yet

void refresh_in_child() noexcept { cached_pid.store(getpid(), std::memory_order_relaxed); }

pid_t first_read() noexcept {
    // Registered once, before the first value is cached: a fork after this
    // point refreshes the child's copy.
    static const bool registered = pthread_atfork(nullptr, nullptr, refresh_in_child) == 0;
    const pid_t self = getpid();
    if (registered) cached_pid.store(self, std::memory_order_relaxed);
    return self;  // without the handler, nothing is cached and every call asks the kernel
}

}  // namespace

pid_t current_process_id() noexcept {
    const pid_t p = cached_pid.load(std::memory_order_relaxed);
    return p != 0 ? p : first_read();
}

}  // namespace simpler::ipc
