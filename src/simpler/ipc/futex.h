// Futex wait and wake on a 32-bit word that may live in memory shared between
// processes (MAP_SHARED), so the futex is never FUTEX_PRIVATE.
//
// Defines the two syscalls' thin, noexcept wrappers and nothing else: which
// word to wait on, when to spin first and who counts sleepers belong to
// shared_word.h and spin_wait.h. The word is any naturally aligned uint32_t;
// these functions read it only through the kernel's own atomic compare.
#pragma once

#include <chrono>
#include <cstdint>

namespace simpler::ipc {

enum class FutexWaitResult : uint8_t {
    WOKEN = 0,          // a FUTEX_WAKE on the word ended the sleep (or a spurious wake-up)
    VALUE_CHANGED = 1,  // the word no longer held `expected` when the kernel looked
    TIMED_OUT = 2,      // the deadline passed first
};

// steady_clock and CLOCK_MONOTONIC are the same clock on Linux; deadlines are
// absolute so a retried wait never stretches its bound.
using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
inline constexpr Deadline NO_DEADLINE = Deadline::max();

// Sleeps while *word == expected, until woken or `deadline`. EINTR is retried
// (against the same absolute deadline); EAGAIN reports VALUE_CHANGED. Any
// other errno (EFAULT, EINVAL: a bad address) aborts the process, because it
// is a programming error that would otherwise turn into a busy loop.
FutexWaitResult futex_wait(const uint32_t* word, uint32_t expected, Deadline deadline = NO_DEADLINE) noexcept;

// Wakes up to `count` sleepers on word (INT32_MAX for all); returns how many
// were woken. Never fails for a valid address.
int futex_wake(const uint32_t* word, int count) noexcept;

}  // namespace simpler::ipc
