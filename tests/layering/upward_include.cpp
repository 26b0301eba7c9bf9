// Deliberately bad: a file in module task_interface's position that includes a
// header of engine, a module above it. Compiled by the Layering ctests against
// task_interface's include root, where it must fail with a missing header.
#include "simpler/engine/worker.h"
#include "simpler/task_interface/buffer.h"

int main() { return 0; }
