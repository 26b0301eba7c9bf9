// The raw cross-process hand-off baselines every runtime benchmark is compared
// with, measured in the same binary and run as the figure they frame: a
// two-process ping-pong over two words in a shared page, with both sides
// spinning (pure, or yielding after 2 us as SpinWaiter does), both sides
// always sleeping on a futex, or over two pipes; and the decode of a
// one-tensor argument blob alone. Real time per round trip.
//
// Owns nothing beyond each benchmark's own shared page and child, which it
// reaps; a child whose parent goes quiet for CHILD_IDLE_LIMIT exits. Trusts
// its peer (both sides are this code).
#pragma once

#include <benchmark/benchmark.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <span>
#include <vector>

#include "simpler/ipc/child_process.h"
#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"

namespace simpler::bench {

inline constexpr uint32_t STOP = 0xFFFFFFFFu;
inline constexpr std::chrono::milliseconds CHILD_IDLE_LIMIT{30'000};

struct alignas(64) PingPong {
    uint32_t ping;
    uint8_t _pad0[60];
    uint32_t pong;
    uint8_t _pad1[60];
};
static_assert(sizeof(PingPong) == 128);

inline std::atomic_ref<uint32_t> at(uint32_t& w) { return std::atomic_ref<uint32_t>(w); }

// Spins until w != seen; gives up after CHILD_IDLE_LIMIT (returns STOP).
inline uint32_t spin_change(uint32_t& w, uint32_t seen) {
    const auto give_up = ipc::Clock::now() + CHILD_IDLE_LIMIT;
    for (uint32_t n = 0;; ++n) {
        const uint32_t v = at(w).load(std::memory_order_acquire);
        if (v != seen) return v;
        ipc::cpu_pause();
        if ((n & 1023u) == 0 && ipc::Clock::now() > give_up) return STOP;
    }
}

// Spins in rounds of 16 pauses; after 2 us, yields the core between rounds.
inline uint32_t spin_yield_change(uint32_t& w, uint32_t seen, ipc::Deadline give_up) {
    const auto start = ipc::Clock::now();
    for (;;) {
        for (int i = 0; i < 16; ++i) {
            const uint32_t v = at(w).load(std::memory_order_acquire);
            if (v != seen) return v;
            ipc::cpu_pause();
        }
        const auto now = ipc::Clock::now();
        if (now > give_up) return STOP;
        if (now - start > std::chrono::microseconds(2)) sched_yield();
    }
}

inline uint32_t futex_change(uint32_t& w, uint32_t seen, ipc::Deadline deadline) {
    for (;;) {
        const uint32_t v = at(w).load(std::memory_order_acquire);
        if (v != seen) return v;
        if (ipc::futex_wait(&w, seen, deadline) == ipc::FutexWaitResult::TIMED_OUT) return STOP;
    }
}

// Reaps a benchmark's child; marks the benchmark failed unless it exited 0.
inline void finish_child(benchmark::State& state, ipc::ChildProcess& child) {
    const auto st = child.wait_exit(ipc::Clock::now() + std::chrono::seconds(10));
    if (!st || !WIFEXITED(*st) || WEXITSTATUS(*st) != 0) {
        child.stop(ipc::Clock::now());
        state.SkipWithError("child did not exit cleanly");
    }
}

// Both sides spin on the other's word.
inline void raw_spin_ping_pong(benchmark::State& state) {
    ipc::SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ipc::ChildProcess child = ipc::ChildProcess::spawn([pp] {
        uint32_t seen = 0;
        for (;;) {
            seen = spin_change(pp->ping, seen);
            if (seen == STOP) return 0;
            at(pp->pong).store(seen, std::memory_order_release);
        }
    });
    uint32_t i = 0;
    for (auto _ : state) {
        at(pp->ping).store(++i, std::memory_order_release);
        while (at(pp->pong).load(std::memory_order_acquire) != i) ipc::cpu_pause();
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    finish_child(state, child);
}

// The same with sched_yield() between spin rounds after 2 us, as SpinWaiter
// does: the baseline that survives an oversubscribed machine.
inline void raw_spin_yield_ping_pong(benchmark::State& state) {
    ipc::SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ipc::ChildProcess child = ipc::ChildProcess::spawn([pp] {
        uint32_t seen = 0;
        for (;;) {
            seen = spin_yield_change(pp->ping, seen, ipc::Clock::now() + CHILD_IDLE_LIMIT);
            if (seen == STOP) return 0;
            at(pp->pong).store(seen, std::memory_order_release);
        }
    });
    uint32_t i = 0;
    for (auto _ : state) {
        at(pp->ping).store(++i, std::memory_order_release);
        spin_yield_change(pp->pong, i - 1, ipc::NO_DEADLINE);
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    finish_child(state, child);
}

// Both sides always sleep on a futex and always wake the other.
inline void raw_futex_ping_pong(benchmark::State& state) {
    ipc::SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ipc::ChildProcess child = ipc::ChildProcess::spawn([pp] {
        uint32_t seen = 0;
        for (;;) {
            seen = futex_change(pp->ping, seen, ipc::Clock::now() + CHILD_IDLE_LIMIT);
            if (seen == STOP) return 0;
            at(pp->pong).store(seen, std::memory_order_release);
            ipc::futex_wake(&pp->pong, 1);
        }
    });
    uint32_t i = 0;
    for (auto _ : state) {
        at(pp->ping).store(++i, std::memory_order_release);
        ipc::futex_wake(&pp->ping, 1);
        futex_change(pp->pong, i - 1, ipc::NO_DEADLINE);
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    ipc::futex_wake(&pp->ping, 1);
    finish_child(state, child);
}

// One byte each way through two pipes.
inline void raw_pipe_ping_pong(benchmark::State& state) {
    int to_child[2];
    int to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
        state.SkipWithError("pipe failed");
        return;
    }
    ipc::ChildProcess child = ipc::ChildProcess::spawn([&] {
        char c = 0;
        while (read(to_child[0], &c, 1) == 1) {
            if (c == 'q') return 0;
            if (write(to_parent[1], &c, 1) != 1) return 1;
        }
        return 0;
    });
    char c = 'p';
    for (auto _ : state) {
        if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1) {
            state.SkipWithError("pipe i/o failed");
            break;
        }
    }
    c = 'q';
    (void)!write(to_child[1], &c, 1);
    finish_child(state, child);
    for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) close(fd);
}

// A 160-byte blob: one 256x256 FLOAT32 INPUT tensor on a POSIX shm backing and
// one scalar.
inline std::vector<std::byte> one_tensor_blob() {
    CanonicalIdentity id{};
    id.owner_instance_id[0] = 0xa1;
    id.buffer_id = 7;
    id.generation = 1;
    const char name[] = "simpler-bench";
    const BufferDescriptor d =
        make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST, AccessMode::READWRITE, 1 << 20,
                               {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
    const uint32_t shapes[2] = {256, 256};
    TaskArgs args;
    args.add_tensor(make_tensor(d, shapes, DataType::FLOAT32), TensorArgType::INPUT);
    args.add_scalar(42);
    return encode_blob(args);
}

// What a child does with a task: open the blob and validate every tensor.
inline bool decode(std::span<const std::byte> blob) noexcept {
    TaskArgsView view;
    if (!TaskArgsView::open(blob.data(), blob.size(), view).ok()) return false;
    Tensor t;
    for (int32_t i = 0; i < view.tensor_count(); ++i) {
        if (!view.tensor(i, t).ok()) return false;
    }
    benchmark::DoNotOptimize(t);
    return true;
}

inline void decode_one_tensor_blob(benchmark::State& state) {
    const std::vector<std::byte> blob = one_tensor_blob();
    for (auto _ : state) {
        if (!decode(blob)) state.SkipWithError("decode refused the blob");
    }
}

}  // namespace simpler::bench
