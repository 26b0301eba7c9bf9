// TaskPayload: one slot of the chip runtime's task ring — exactly
// TASK_PAYLOAD_SIZE (4864) bytes: a 640-byte header (kernel id, counts, tags,
// dependency bookkeeping), then CORE_MAX_TENSOR_ARGS working tensors embedded by
// value at TASKPAYLOAD_TENSOR_STRIDE, then CORE_MAX_SCALAR_ARGS scalars.
//
// A POD the runtime fills at submit and a core thread reads when it runs the
// kernel; it owns none of the bytes its tensors name. Successor lists live
// beside the ring in the runtime, not here. Counts are bounded by the runtime
// before a payload is filled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simpler/chip/tensor.h"
#include "simpler/task_interface/task_args.h"

namespace simpler::chip {

inline constexpr size_t TASK_PAYLOAD_HEADER_BYTES = 640;

enum class SlotState : uint32_t {
    FREE = 0,      // no task
    PENDING = 1,   // waiting on predecessors
    READY = 2,     // queued for a core
    RUNNING = 3,   // a core is running its kernel
};

struct TaskPayloadHeader {
    uint64_t task_id;                       // run-unique, increasing from 0
    uint32_t kernel_id;                     // index in the registry
    uint32_t tensor_count;                  // <= CORE_MAX_TENSOR_ARGS
    uint32_t scalar_count;                  // <= CORE_MAX_SCALAR_ARGS
    uint32_t slot;                          // this slot's index in the ring
    int32_t fanin_total;                    // predecessors found at submit
    int32_t fanin_remaining;                // predecessors not yet complete
    uint32_t state;                         // raw SlotState
    uint32_t _pad0;
    int32_t tags[CORE_MAX_TENSOR_ARGS];     // raw TensorArgType per tensor
    uint8_t _reserved[TASK_PAYLOAD_HEADER_BYTES - 40 - 4 * CORE_MAX_TENSOR_ARGS];
};

struct alignas(64) TaskPayload {
    TaskPayloadHeader header;
    Tensor tensors[CORE_MAX_TENSOR_ARGS];
    uint64_t scalars[CORE_MAX_SCALAR_ARGS];
};

static_assert(std::is_trivially_copyable_v<TaskPayloadHeader>);
static_assert(sizeof(TaskPayloadHeader) == TASK_PAYLOAD_HEADER_BYTES);
static_assert(offsetof(TaskPayloadHeader, task_id) == 0);
static_assert(offsetof(TaskPayloadHeader, kernel_id) == 8);
static_assert(offsetof(TaskPayloadHeader, tensor_count) == 12);
static_assert(offsetof(TaskPayloadHeader, scalar_count) == 16);
static_assert(offsetof(TaskPayloadHeader, slot) == 20);
static_assert(offsetof(TaskPayloadHeader, fanin_total) == 24);
static_assert(offsetof(TaskPayloadHeader, fanin_remaining) == 28);
static_assert(offsetof(TaskPayloadHeader, state) == 32);
static_assert(offsetof(TaskPayloadHeader, tags) == 40);
static_assert(std::is_trivially_copyable_v<TaskPayload>);
static_assert(std::is_standard_layout_v<TaskPayload>);
static_assert(sizeof(TaskPayload) == TASK_PAYLOAD_SIZE);
static_assert(alignof(TaskPayload) == 64);
static_assert(offsetof(TaskPayload, tensors) == TASK_PAYLOAD_HEADER_BYTES);
static_assert(offsetof(TaskPayload, tensors) % 64 == 0);
static_assert(sizeof(Tensor) == TASKPAYLOAD_TENSOR_STRIDE);
static_assert(offsetof(TaskPayload, scalars) ==
              TASK_PAYLOAD_HEADER_BYTES + TASKPAYLOAD_TENSOR_STRIDE * CORE_MAX_TENSOR_ARGS);

}  // namespace simpler::chip
