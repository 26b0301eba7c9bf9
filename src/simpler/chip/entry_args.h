// EntryArgs: the chip runtime's entry-argument storage — the arguments of one
// chip orchestration after Runtime::set_orch_args adopted each ChipTensor into
// a working tensor. Same template and caps as ChipStorageTaskArgs, with the
// working tensor as element.
//
// Kept beside tensor.h rather than inside it: this header needs the argument
// template (task_args.h), which a kernel does not. Owns nothing it points at.
#pragma once

#include "simpler/chip/tensor.h"
#include "simpler/task_interface/task_args.h"

namespace simpler::chip {

using EntryArgs = StorageTaskArgs<Tensor, CHIP_MAX_TENSOR_ARGS, CHIP_MAX_SCALAR_ARGS>;

static_assert(std::is_trivially_copyable_v<EntryArgs>);
static_assert(offsetof(EntryArgs, tensors) == 0);
static_assert(offsetof(EntryArgs, scalars) == 128 * 256);
static_assert(offsetof(EntryArgs, tensor_count) == 128 * 256 + 8 * 128);

}  // namespace simpler::chip
