// Cross-process hand-off costs: one round trip parent -> child -> parent.
//
// Baselines, measured in the same run: a raw two-process spin ping-pong (two
// words, both sides spinning; once pure, once yielding after 2 us), a raw futex ping-pong (both sides always sleep
// and always wake), a pipe ping-pong, and decoding a one-tensor argument blob
// alone. Then the mailbox round trip (publish, child decodes the one-tensor
// blob with TaskArgsView, finish_ok, doorbell) in three regimes: hot (both
// waiters spin long enough that every hand-off lands while spinning), cold
// (no spinning: every hand-off wakes a sleeping process) and adaptive (the
// default SpinPolicy). Real time per round trip; the counter `slept` is the
// share of the parent's waits that reached the futex.
#include <benchmark/benchmark.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>

#include "simpler/ipc/child_process.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/futex.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/spin_wait.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"

using namespace simpler::ipc;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t STOP = 0xFFFFFFFFu;
constexpr auto CHILD_IDLE_LIMIT = 30'000ms;  // a child whose parent went quiet this long exits

struct alignas(64) PingPong {
    uint32_t ping;
    uint8_t _pad0[60];
    uint32_t pong;
    uint8_t _pad1[60];
};

std::atomic_ref<uint32_t> at(uint32_t& w) { return std::atomic_ref<uint32_t>(w); }

// Spins until w != seen; gives up after CHILD_IDLE_LIMIT (returns STOP).
uint32_t spin_change(uint32_t& w, uint32_t seen) {
    const auto give_up = Clock::now() + CHILD_IDLE_LIMIT;
    for (uint32_t n = 0;; ++n) {
        const uint32_t v = at(w).load(std::memory_order_acquire);
        if (v != seen) return v;
        cpu_pause();
        if ((n & 1023u) == 0 && Clock::now() > give_up) return STOP;
    }
}

uint32_t spin_yield_change(uint32_t& w, uint32_t seen, Deadline give_up) {
    const auto start = Clock::now();
    for (;;) {
        for (int i = 0; i < 16; ++i) {
            const uint32_t v = at(w).load(std::memory_order_acquire);
            if (v != seen) return v;
            cpu_pause();
        }
        const auto now = Clock::now();
        if (now > give_up) return STOP;
        if (now - start > 2us) sched_yield();
    }
}

uint32_t futex_change(uint32_t& w, uint32_t seen, Deadline deadline) {
    for (;;) {
        const uint32_t v = at(w).load(std::memory_order_acquire);
        if (v != seen) return v;
        if (futex_wait(&w, seen, deadline) == FutexWaitResult::TIMED_OUT) return STOP;
    }
}

void finish_child(benchmark::State& state, ChildProcess& child) {
    const auto st = child.wait_exit(Clock::now() + 10s);
    if (!st || !WIFEXITED(*st) || WEXITSTATUS(*st) != 0) {
        child.stop(Clock::now());
        state.SkipWithError("child did not exit cleanly");
    }
}

void BM_RawSpinPingPong(benchmark::State& state) {
    SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ChildProcess child = ChildProcess::spawn([pp] {
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
        while (at(pp->pong).load(std::memory_order_acquire) != i) cpu_pause();
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    finish_child(state, child);
}

// The same with sched_yield() between spin rounds after 2 us, as SpinWaiter
// does: the baseline that survives an oversubscribed machine.
void BM_RawSpinYieldPingPong(benchmark::State& state) {
    SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ChildProcess child = ChildProcess::spawn([pp] {
        uint32_t seen = 0;
        for (;;) {
            seen = spin_yield_change(pp->ping, seen, Clock::now() + CHILD_IDLE_LIMIT);
            if (seen == STOP) return 0;
            at(pp->pong).store(seen, std::memory_order_release);
        }
    });
    uint32_t i = 0;
    for (auto _ : state) {
        at(pp->ping).store(++i, std::memory_order_release);
        spin_yield_change(pp->pong, i - 1, NO_DEADLINE);
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    finish_child(state, child);
}

void BM_RawFutexPingPong(benchmark::State& state) {
    SharedRegion region(sizeof(PingPong));
    auto* pp = new (region.data()) PingPong{};
    ChildProcess child = ChildProcess::spawn([pp] {
        uint32_t seen = 0;
        for (;;) {
            seen = futex_change(pp->ping, seen, Clock::now() + CHILD_IDLE_LIMIT);
            if (seen == STOP) return 0;
            at(pp->pong).store(seen, std::memory_order_release);
            futex_wake(&pp->pong, 1);
        }
    });
    uint32_t i = 0;
    for (auto _ : state) {
        at(pp->ping).store(++i, std::memory_order_release);
        futex_wake(&pp->ping, 1);
        futex_change(pp->pong, i - 1, NO_DEADLINE);
    }
    at(pp->ping).store(STOP, std::memory_order_release);
    futex_wake(&pp->ping, 1);
    finish_child(state, child);
}

void BM_RawPipePingPong(benchmark::State& state) {
    int to_child[2];
    int to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
        state.SkipWithError("pipe failed");
        return;
    }
    ChildProcess child = ChildProcess::spawn([&] {
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

std::vector<std::byte> one_tensor_blob() {
    CanonicalIdentity id{};
    id.owner_instance_id[0] = 0xa1;
    id.buffer_id = 7;
    id.generation = 1;
    const char name[] = "simpler-bench";
    const BufferDescriptor d = make_buffer_descriptor(id, BackendKind::POSIX_SHM, AddressSpace::HOST,
                                                      AccessMode::READWRITE, 1 << 20,
                                                      {reinterpret_cast<const uint8_t*>(name), sizeof name - 1});
    const uint32_t shapes[2] = {256, 256};
    TaskArgs args;
    args.add_tensor(make_tensor(d, shapes, DataType::FLOAT32), TensorArgType::INPUT);
    args.add_scalar(42);
    return encode_blob(args);
}

// What the child does with a task: open the blob and validate every tensor.
bool decode(std::span<const std::byte> blob) noexcept {
    TaskArgsView view;
    if (!TaskArgsView::open(blob.data(), blob.size(), view).ok()) return false;
    Tensor t;
    for (int32_t i = 0; i < view.tensor_count(); ++i) {
        if (!view.tensor(i, t).ok()) return false;
    }
    benchmark::DoNotOptimize(t);
    return true;
}

void BM_DecodeOneTensorBlob(benchmark::State& state) {
    const std::vector<std::byte> blob = one_tensor_blob();
    for (auto _ : state) {
        if (!decode(blob)) state.SkipWithError("decode refused the blob");
    }
}

void mailbox_round_trip(benchmark::State& state, SpinPolicy child_policy, SpinPolicy parent_policy) {
    Doorbell bell;
    Mailbox mb(MailboxConfig{}, bell);
    ChildProcess child = ChildProcess::spawn([&mb, child_policy] {
        SpinWaiter waiter(child_policy);
        for (;;) {
            const ChildWake w = mb.wait_request(waiter, Clock::now() + CHILD_IDLE_LIMIT);
            if (w != ChildWake::TASK) return w == ChildWake::SHUTDOWN ? 0 : 3;
            const TaskView t = mb.begin_task();
            if (decode(t.blob)) {
                mb.finish_ok();
            } else {
                mb.finish_failed(TaskError::BAD_ARGUMENTS, "blob refused");
            }
        }
    });
    const std::vector<std::byte> blob = one_tensor_blob();
    SpinWaiter waiter(parent_policy);
    CallConfig cfg{};
    for (auto _ : state) {
        uint64_t seq = 0;
        if (mb.publish(1, cfg, blob, seq) != PublishStatus::OK) {
            state.SkipWithError("publish refused");
            break;
        }
        const std::optional<TaskResult> r = wait_result(mb, bell, waiter, Clock::now() + 10s);
        if (!r || !r->ok()) {
            state.SkipWithError("task failed or timed out");
            break;
        }
    }
    const SpinStats& s = waiter.stats();
    state.counters["slept"] = s.waits ? static_cast<double>(s.sleeps) / static_cast<double>(s.waits) : 0.0;
    state.counters["blob_bytes"] = static_cast<double>(blob.size());
    mb.request_shutdown();
    finish_child(state, child);
}

void BM_MailboxRoundTripHot(benchmark::State& state) {
    mailbox_round_trip(state, fixed_spin_policy(1ms), fixed_spin_policy(1ms));
}
void BM_MailboxRoundTripCold(benchmark::State& state) {
    mailbox_round_trip(state, never_spin_policy(), never_spin_policy());
}
void BM_MailboxRoundTripAdaptive(benchmark::State& state) { mailbox_round_trip(state, SpinPolicy{}, SpinPolicy{}); }

}  // namespace

BENCHMARK(BM_RawSpinPingPong)->UseRealTime();
BENCHMARK(BM_RawSpinYieldPingPong)->UseRealTime();
BENCHMARK(BM_RawFutexPingPong)->UseRealTime();
BENCHMARK(BM_RawPipePingPong)->UseRealTime();
BENCHMARK(BM_DecodeOneTensorBlob);
BENCHMARK(BM_MailboxRoundTripHot)->UseRealTime();
BENCHMARK(BM_MailboxRoundTripCold)->UseRealTime();
BENCHMARK(BM_MailboxRoundTripAdaptive)->UseRealTime();
