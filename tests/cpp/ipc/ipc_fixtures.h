// Helpers for the fork-based ipc tests: deadlines, an echo child loop, a blob.
// Every child body returns an exit status (0 = the child's own checks passed)
// and never touches gtest; the parent asserts on the status.
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "simpler/ipc/mailbox.h"
#include "simpler/ipc/spin_wait.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"

namespace ipc_test {

using namespace std::chrono_literals;
using simpler::ipc::Clock;
using simpler::ipc::Deadline;

inline Deadline after(std::chrono::milliseconds d) { return Clock::now() + d; }

// A child loop that serves tasks until shutdown: callable 1 succeeds, callable
// 2 fails with the blob's bytes as the message, callable 3 sleeps forever
// (the parent kills it), anything else is UNKNOWN_CALLABLE. Returns 0 on a
// clean shutdown, 3 when a wait timed out (the parent stopped talking).
inline int serve_echo(simpler::ipc::Mailbox& mb, simpler::ipc::SpinPolicy policy = {},
                      std::chrono::milliseconds idle_limit = std::chrono::milliseconds(20'000)) {
    using namespace simpler::ipc;
    SpinWaiter waiter(policy);
    for (;;) {
        switch (mb.wait_request(waiter, Clock::now() + idle_limit)) {
            case ChildWake::SHUTDOWN: return 0;
            case ChildWake::TIMED_OUT: return 3;
            case ChildWake::TASK: break;
        }
        const TaskView task = mb.begin_task();
        if (task.callable_id == 1) {
            mb.finish_ok();
        } else if (task.callable_id == 2) {
            mb.finish_failed(TaskError::TASK_FAILED,
                             std::string_view(reinterpret_cast<const char*>(task.blob.data()), task.blob.size()));
        } else if (task.callable_id == 3) {
            for (;;) ::pause();
        } else {
            mb.finish_failed(TaskError::UNKNOWN_CALLABLE, "no such callable");
        }
    }
}

inline std::vector<std::byte> bytes_of(std::string_view s) {
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
}

}  // namespace ipc_test
