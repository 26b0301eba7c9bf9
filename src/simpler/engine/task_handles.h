// TaskHandles: the handles of a batch (Worker::submit_many) without one object
// per task. A batch's tasks get consecutive ids in one run, so the batch is
// (first id, count, run); `step` lets a slice of it (every step-th task, or
// the tasks in reverse with a negative step) be one too. Element i is the task
// of id first + i * step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simpler/engine/task_handle.h"

namespace simpler {

struct TaskHandles {
    TaskId first = 0;
    int64_t step = 1;
    uint64_t count = 0;
    uint64_t run = 0;

    [[nodiscard]] size_t size() const noexcept { return static_cast<size_t>(count); }
    [[nodiscard]] bool empty() const noexcept { return count == 0; }
    // Unchecked: i < size().
    [[nodiscard]] TaskHandle operator[](size_t i) const noexcept {
        return TaskHandle{first + static_cast<TaskId>(static_cast<int64_t>(i) * step), run};
    }
};

}  // namespace simpler
