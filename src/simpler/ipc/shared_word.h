// SharedWord: a 32-bit value plus a count of the processes sleeping on it, the
// unit every cross-process wait in this layer is built from (the mailbox's
// request word, the doorbell).
//
// Publishing is a store (or increment) followed by a look at `sleepers`; only
// when someone sleeps does the publisher pay for the FUTEX_WAKE syscall. Both
// sides use sequentially consistent operations on the two fields, so either
// the publisher sees the sleeper or the sleeper sees the new value (no lost
// wake-up); the kernel's compare inside FUTEX_WAIT closes the remaining gap.
//
// Does not own the memory the word lives in (shared_region.h does) and does not
// decide when to spin (spin_wait.h). A peer process can write any value into
// either field; a corrupted `sleepers` can only cost a spurious syscall or a
// missed wake, which every waiter bounds with its deadline.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/ipc/futex.h"

namespace simpler::ipc {

struct SharedWord {
    uint32_t value;     // the published value (a sequence or a state)
    uint32_t sleepers;  // processes inside sleep_while_equal on this word
};
static_assert(std::is_trivially_copyable_v<SharedWord>);
static_assert(std::is_standard_layout_v<SharedWord>);
static_assert(sizeof(SharedWord) == 8);
static_assert(offsetof(SharedWord, value) == 0);
static_assert(offsetof(SharedWord, sleepers) == 4);
static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);

[[nodiscard]] inline uint32_t load_acquire(SharedWord& w) noexcept {
    return std::atomic_ref<uint32_t>(w.value).load(std::memory_order_acquire);
}

// Wakes every sleeper when there is one (and says whether there was). Call
// after the value changed.
inline bool wake_sleepers(SharedWord& w) noexcept {
    if (std::atomic_ref<uint32_t>(w.sleepers).load(std::memory_order_seq_cst) == 0) return false;
    futex_wake(&w.value, INT32_MAX);
    return true;
}

// Stores v (release, and ordered before the sleeper check) and wakes sleepers.
inline void publish(SharedWord& w, uint32_t v) noexcept {
    std::atomic_ref<uint32_t>(w.value).store(v, std::memory_order_seq_cst);
    (void)wake_sleepers(w);
}

// Increments the value (wrapping) and wakes sleepers; returns whether there
// was one to wake (the peer then answers only after its wake-up, which a
// spin_wait.h waiter can be told to cover).
inline bool bump(SharedWord& w) noexcept {
    std::atomic_ref<uint32_t>(w.value).fetch_add(1, std::memory_order_seq_cst);
    return wake_sleepers(w);
}

// Announces a sleeper, re-checks, and sleeps while value == expected, until a
// wake, a change or `deadline`. Returns the value seen afterwards; the caller
// compares it with `expected` (a wake-up may be spurious).
inline uint32_t sleep_while_equal(SharedWord& w, uint32_t expected, Deadline deadline) noexcept {
    std::atomic_ref<uint32_t> sleepers(w.sleepers);
    std::atomic_ref<uint32_t> value(w.value);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (value.load(std::memory_order_seq_cst) == expected) futex_wait(&w.value, expected, deadline);
    sleepers.fetch_sub(1, std::memory_order_seq_cst);
    return value.load(std::memory_order_acquire);
}

}  // namespace simpler::ipc
