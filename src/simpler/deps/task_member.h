// TaskMember: one member of a submitted DAG node — its tensor arguments, their
// tags, and the chip it runs on. A plain task is a node of one member; a group
// (submit_next_level_group, submit_sub_group) is one node of N members.
//
// A view type: it borrows the caller's arrays for the duration of a call and
// owns nothing. Nothing in it is trusted; submit_checks.h validates it.
#pragma once

#include <cstdint>
#include <span>

#include "simpler/deps/edge_explanation.h"
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/tensor_arg_type.h"

namespace simpler {

struct TaskMember {
    std::span<const Tensor> tensors;
    std::span<const TensorArgType> tags;  // one per tensor
    int32_t target_chip = HOST_SCOPE;     // the chip the member runs on; HOST_SCOPE for a host worker
    // The member goes to a next-level Worker (an L4's L3 child): a VMM_WINDOW
    // tensor (a global domain's window) may travel there; that Worker's engine
    // judges which of its chips may name it.
    bool next_level = false;
};

// The scope a tensor of this member is keyed under: HOST_SCOPE for a HOST
// backing, WINDOW_SCOPE for a VMM_WINDOW backing (every chip of its domain
// names the same bytes), the target chip for other DEVICE backings.
constexpr int32_t argument_scope(const Tensor& t, int32_t target_chip) noexcept {
    if (t.buffer.address_space != static_cast<uint8_t>(AddressSpace::DEVICE)) return HOST_SCOPE;
    return t.buffer.backend_kind == static_cast<uint8_t>(BackendKind::VMM_WINDOW) ? WINDOW_SCOPE : target_chip;
}

}  // namespace simpler
