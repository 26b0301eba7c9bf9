// TaskHandle: what a submit returns — the engine's task id and the run it was
// submitted in. A run is everything submitted between two Worker::end_run()
// calls or returns of Worker::wait() (Python: one Worker.run() or
// Worker.submit()); ids keep counting across runs, so the id alone names a task
// within a Worker and the run says when it was made.
//
// A plain value; name() is the spelling every error and trace label uses.
#pragma once

#include <cstdint>
#include <string>

#include "simpler/deps/task_id.h"

namespace simpler {

struct TaskHandle {
    TaskId id = 0;
    uint64_t run = 0;

    // "task 3 of run 1".
    [[nodiscard]] std::string name() const { return "task " + std::to_string(id) + " of run " + std::to_string(run); }
    friend bool operator==(const TaskHandle&, const TaskHandle&) = default;
};

}  // namespace simpler
