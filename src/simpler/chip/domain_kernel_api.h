// What a kernel running in a communication domain uses on top of kernel_api.h:
// every rank's window base, and notify / wait on 32-bit words in window memory.
//
// The window heaps are shared by every chip process (MAP_SHARED), so a kernel
// on one chip may load and store a peer's window directly. DomainContext reads
// the scalars a task was handed from Domain.context(chip) in Python,
// [rank, size, window_base(rank 0), ..., window_base(rank size - 1)], and
// peer_address() turns an address in this rank's window into the address of
// the same offset in a peer's (windows are symmetric: same layout everywhere).
//
// window_notify / window_add / window_wait synchronise kernels on different
// chips through a word in a window: a plain atomic store (or add) plus a
// FUTEX_WAKE, and a bounded wait (a short spin, then FUTEX_WAIT with the time
// left). The futex is the shared kind, not FUTEX_PRIVATE: the word lives in
// memory several processes map. Kernels that wait for each other must run at
// the same time, so they must be on distinct chips with no dependency between
// their tasks (docs/internals/chip.md, "Kernels in a domain"); a wait whose notifier
// never comes ends at its deadline, and the kernel reports it with kernel_fail.
//
// Header-only: links nothing of simpler_core (Linux futex syscall only).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <ctime>

#include "simpler/chip/kernel_api.h"

namespace simpler::chip {

// A view over the domain scalars of one kernel call. `bases` points into the
// kernel's scalar array: valid for the kernel call only.
struct DomainContext {
    uint32_t rank = 0;
    uint32_t size = 0;
    const uint64_t* bases = nullptr;
};

// Reads a DomainContext from a->scalars[first ...]. Returns CHIP_OK, or fails
// the kernel (kernel_fail) naming what is wrong: too few scalars, a size of 0,
// a rank not below the size.
inline int32_t read_domain_context(const KernelArgs* a, uint32_t first, DomainContext* out) noexcept {
    if (a->scalar_count < first + 2)
        return kernel_fail(a, "domain context: expected [rank, size, bases...] from scalar %u, the task has %u scalars",
                           first, a->scalar_count);
    const uint64_t rank = a->scalars[first];
    const uint64_t size = a->scalars[first + 1];
    if (size == 0 || size > UINT32_MAX)
        return kernel_fail(a, "domain context: size %llu is not a domain size", static_cast<unsigned long long>(size));
    if (rank >= size)
        return kernel_fail(a, "domain context: rank %llu is not below the size %llu",
                           static_cast<unsigned long long>(rank), static_cast<unsigned long long>(size));
    if (uint64_t{a->scalar_count} < uint64_t{first} + 2 + size)
        return kernel_fail(
            a, "domain context: size %llu needs %llu window bases from scalar %u, the task has %u scalars",
            static_cast<unsigned long long>(size), static_cast<unsigned long long>(size), first + 2, a->scalar_count);
    out->rank = static_cast<uint32_t>(rank);
    out->size = static_cast<uint32_t>(size);
    out->bases = a->scalars + first + 2;
    return CHIP_OK;
}

// The address at the same offset in `peer`'s window as `own_addr` is in this
// rank's window; 0 when `peer` is not a rank of the domain.
inline uint64_t peer_address(const DomainContext& ctx, uint64_t own_addr, uint32_t peer) noexcept {
    if (peer >= ctx.size) return 0;
    return own_addr - ctx.bases[ctx.rank] + ctx.bases[peer];
}

// One round of a spin-wait: the CPU's pause hint where it has one.
inline void window_spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Stores `value` into *word (release) and wakes every waiter on it, in any process.
inline void window_notify(uint32_t* word, uint32_t value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Adds `delta` to *word (acquire-release) and wakes every waiter; returns the new value.
// With window_wait(word, n): a barrier of n kernels on one counter word.
inline uint32_t window_add(uint32_t* word, uint32_t delta) noexcept {
    const uint32_t now = __atomic_add_fetch(word, delta, __ATOMIC_ACQ_REL);
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    return now;
}

// Waits until *word reaches `expected` (*word >= expected, unsigned; loads
// acquire), at most `timeout_ms` milliseconds: spins briefly, then sleeps in
// FUTEX_WAIT with the time left. True once reached; false at the deadline.
// `observed` (if given) gets the last value read.
inline bool window_wait(const uint32_t* word, uint32_t expected, uint32_t timeout_ms,
                        uint32_t* observed = nullptr) noexcept {
    uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    for (int spin = 0; spin < 2000 && v < expected; ++spin) {
        window_spin_pause();
        v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    }
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int64_t deadline_ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec + int64_t{timeout_ms} * 1000000;
    while (v < expected) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        const int64_t left = deadline_ns - (int64_t{now.tv_sec} * 1000000000 + now.tv_nsec);
        if (left <= 0) break;
        const timespec rel{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
        // Sleeps only while the word still holds v (else EAGAIN at once); wakes on a notify, a signal or rel.
        syscall(SYS_futex, const_cast<uint32_t*>(word), FUTEX_WAIT, v, &rel, nullptr, 0);
        v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    }
    if (observed != nullptr) *observed = v;
    return v >= expected;
}

}  // namespace simpler::chip
