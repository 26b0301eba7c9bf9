// Helpers for the fork-based ipc tests: deadlines, an echo child loop, a blob.
// Every child body returns an exit status (0 = the child's own checks passed)
// and never touches gtest; the parent asserts on the status.
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/mailbox_ring.h"
#include "simpler/ipc/serve_tasks.h"
#include "simpler/ipc/spin_wait.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"

namespace ipc_test {

using namespace std::chrono_literals;
using simpler::ipc::Clock;
using simpler::ipc::Deadline;

inline Deadline after(std::chrono::milliseconds d) { return Clock::now() + d; }

// The test children's handler: callable 1 succeeds, 2 fails with the blob's
// bytes as the message, 3 sleeps forever (the parent kills it), 4 records its
// blob's first byte in `order` (when given; threads only) and succeeds,
// anything else is UNKNOWN_CALLABLE.
inline simpler::ipc::TaskOutcome echo(const simpler::ipc::TaskView& task, std::vector<int>* order = nullptr) {
    using namespace simpler::ipc;
    switch (task.callable_id) {
        case 1: return {};
        case 2:
            return {TaskError::TASK_FAILED,
                    std::string(reinterpret_cast<const char*>(task.blob.data()), task.blob.size())};
        case 3:
            for (;;) ::pause();
        case 4:
            if (order != nullptr && !task.blob.empty()) order->push_back(static_cast<int>(task.blob[0]));
            return {};
        default: return {TaskError::UNKNOWN_CALLABLE, "no such callable"};
    }
}

// A child loop that serves `echo` until shutdown. Returns 0 on a clean
// shutdown, 3 when no request came for idle_limit.
inline int serve_echo(simpler::ipc::Mailbox& mb, simpler::ipc::SpinPolicy policy = {},
                      std::chrono::milliseconds idle_limit = std::chrono::milliseconds(20'000)) {
    return simpler::ipc::serve_tasks(
        mb, [](const simpler::ipc::TaskView& task) { return echo(task); }, policy, idle_limit);
}

inline std::vector<std::byte> bytes_of(std::string_view s) {
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

// The ring's next result, waiting on the doorbell (a test failure after 10 s,
// answered TIMED_OUT so the test goes on to say what it expected).
inline simpler::ipc::TaskResult next_result(simpler::ipc::MailboxRing& ring, const simpler::ipc::Doorbell& bell) {
    using namespace simpler::ipc;
    SpinWaiter waiter;
    const Deadline guard = after(std::chrono::milliseconds(10'000));
    for (;;) {
        const uint32_t seen = bell.sequence();
        if (std::optional<TaskResult> r = ring.poll_result()) return *r;
        if (Clock::now() >= guard) {
            ADD_FAILURE() << "no result within 10 s";
            return TaskResult{TaskError::TIMED_OUT, 0, "test bound"};
        }
        bell.wait_past(seen, waiter, std::min(guard, ring.deadline()));
    }
}

}  // namespace ipc_test
