// What names a task at the engine's surface: its TaskId (deps/task_id.h), its
// kind (which table of callables it runs and on which children), and one member
// of a submit (its arguments and, for a next-level task, which child runs it).
// Small on purpose: a program that submits needs these, not the engine.
#pragma once

#include <cstdint>
#include <optional>

#include "simpler/deps/task_id.h"

namespace simpler {

class TaskArgs;

enum class TaskKind : uint8_t {
    NEXT_LEVEL = 0,  // runs on the next-level child (EngineConfig::next_level) named by its member's worker index
    SUB = 1,         // runs on any idle Python sub-worker
};

struct MemberSubmit {
    const TaskArgs* args = nullptr;
    std::optional<uint32_t> worker;  // NEXT_LEVEL: the next-level child's index; SUB: none (any idle sub-worker)
};

}  // namespace simpler
