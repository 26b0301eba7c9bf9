// TaskId: a task's number within its Worker, given at submit and counting up
// from 1 (0 names no task); the dependency tracker, the graph and the engine
// key their state by it, and a TaskHandle pairs it with its run.
#pragma once

#include <cstdint>

namespace simpler {

using TaskId = uint64_t;

}  // namespace simpler
