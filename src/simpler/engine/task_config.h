// TaskConfig: the engine's name for the CallConfig each task member carries
// (simpler/task_interface/call_config.h owns the layout, the write mask and
// its readers). The engine copies the caller's config per member and sets the
// member's write mask at submit (set_write_mask); nothing else here.
#pragma once

#include "simpler/task_interface/call_config.h"

namespace simpler {

using TaskConfig = CallConfig;

}  // namespace simpler
