// The control of upward_include.cpp: a file in module task_interface's
// position that includes only task_interface headers. Compiled by the Layering
// ctests against task_interface's include root, where it must compile.
#include "simpler/task_interface/buffer.h"
#include "simpler/task_interface/task_args_wire.h"

int main() { return simpler::MAX_TENSOR_DIMS == 5 ? 0 : 1; }
