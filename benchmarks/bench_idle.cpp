// Idle cost of the ipc building blocks, measured from /proc over 10 s: a parent
// with four children (the shape of a Worker with 2 chips and 2 sub-workers)
// after some traffic, its scheduler thread asleep on the doorbell, its watcher
// thread asleep in poll(), each child asleep in its mailbox. Reported as the
// counter core_percent (share of one core used by the whole process tree).
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "simpler/ipc/child_process.h"
#include "simpler/ipc/child_watcher.h"
#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/process_cpu.h"

using namespace simpler::ipc;
using namespace std::chrono_literals;

namespace {

void BM_IdleTreeCpu(benchmark::State& state) {
    const auto interval = std::chrono::milliseconds(state.range(0));
    constexpr int CHILDREN = 4;
    Doorbell bell;
    std::vector<std::unique_ptr<Mailbox>> lanes;
    for (int i = 0; i < CHILDREN; ++i) lanes.push_back(std::make_unique<Mailbox>(MailboxConfig{}, bell));
    std::vector<ChildProcess> children;
    for (int i = 0; i < CHILDREN; ++i) {
        Mailbox* mb = lanes[i].get();
        children.push_back(ChildProcess::spawn([mb] {
            SpinWaiter waiter;
            for (;;) {
                const ChildWake w = mb->wait_request(waiter, Clock::now() + 120s);
                if (w != ChildWake::TASK) return w == ChildWake::SHUTDOWN ? 0 : 3;
                (void)mb->begin_task();
                mb->finish_ok();
            }
        }));
    }
    SpinWaiter waiter;
    for (int round = 0; round < 1000; ++round) {
        for (auto& mb : lanes) {
            uint64_t seq = 0;
            (void)mb->publish(1, CallConfig{}, {}, seq);
            (void)wait_result(*mb, bell, waiter, Clock::now() + 10s);
        }
    }
    std::vector<WatchedChild> watched;
    for (auto& c : children) watched.push_back({c.pid(), c.pidfd()});
    ChildWatcher watcher(watched, [&lanes, &bell](size_t i, int status) {
        lanes[i]->mark_child_exited(status);
        bell.ring();
    });
    std::atomic<bool> stop{false};
    std::thread scheduler([&] {
        SpinWaiter idle_waiter;
        while (!stop.load()) {
            const uint32_t seen = bell.sequence();
            if (stop.load()) break;
            bell.wait_past(seen, idle_waiter, Clock::now() + 120s);
        }
    });
    std::this_thread::sleep_for(100ms);
    TreeCpuUsage u;
    for (auto _ : state) u = measure_tree_cpu(getpid(), interval);
    stop.store(true);
    bell.ring();
    scheduler.join();
    watcher.stop();
    for (auto& mb : lanes) mb->request_shutdown();
    for (auto& c : children) c.stop(Clock::now() + 5s);
    state.counters["core_percent"] = 100.0 * u.core_fraction();
    state.counters["cpu_ms"] = 1000.0 * u.cpu_seconds;
    state.counters["processes"] = static_cast<double>(u.processes);
}

}  // namespace

BENCHMARK(BM_IdleTreeCpu)->Arg(10'000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
