#include "simpler/ipc/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace simpler::ipc {
namespace {

long futex_call(const uint32_t* word, int op, uint32_t val, const timespec* ts, uint32_t val3) noexcept {
    return syscall(SYS_futex, word, op, val, ts, nullptr, val3);
}

timespec to_timespec(Deadline deadline) noexcept {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    return ts;
}

[[noreturn]] void die(const char* what, int err) noexcept {
    std::fprintf(stderr, "simpler::ipc: %s failed: %s\n", what, std::strerror(err));
    std::abort();
}

}  // namespace

FutexWaitResult futex_wait(const uint32_t* word, uint32_t expected, Deadline deadline) noexcept {
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, which is
    // what lets EINTR be retried without recomputing a relative timeout.
    const bool bounded = deadline != NO_DEADLINE;
    const timespec ts = bounded ? to_timespec(deadline) : timespec{};
    for (;;) {
        if (bounded && Clock::now() >= deadline) return FutexWaitResult::TIMED_OUT;
        const long rc = futex_call(word, FUTEX_WAIT_BITSET, expected, bounded ? &ts : nullptr, FUTEX_BITSET_MATCH_ANY);
        if (rc == 0) return FutexWaitResult::WOKEN;
        const int err = errno;
        if (err == EAGAIN) return FutexWaitResult::VALUE_CHANGED;
        if (err == ETIMEDOUT) return FutexWaitResult::TIMED_OUT;
        if (err == EINTR) continue;
        die("FUTEX_WAIT_BITSET", err);
    }
}

int futex_wake(const uint32_t* word, int count) noexcept {
    const long rc = futex_call(word, FUTEX_WAKE, static_cast<uint32_t>(count), nullptr, 0);
    if (rc < 0) die("FUTEX_WAKE", errno);
    return static_cast<int>(rc);
}

}  // namespace simpler::ipc
