// The kernel-facing tensor header of the simulated chip: brings ChipTensor (the
// resolved argument) and this runtime's working tensor, under the unqualified
// name `Tensor`, into a kernel or chip-orchestration translation unit.
//
// The global alias is legal only because the wire Tensor of
// task_interface/buffer.h never reaches such a unit; the wire-isolation lint
// (tests/lint/check_kernel_wire_isolation.py) keeps it so. Runtime internals use
// runtime_tensor.h (simpler::chip::Tensor) and never this alias.
#pragma once

#include "simpler/chip/runtime_tensor.h"
#include "simpler/task_interface/tensor.h"

using Tensor = simpler::chip::Tensor;
