// ChildStatus: what a Worker says of one child (Worker::child_states) —
// whether it is lost and why, and what a next-level Worker child reported
// lost below it (below_status.h). Python: simpler.ChildStatus.
#pragma once

#include <cstdint>
#include <string>

#include "simpler/engine/child_ref.h"

namespace simpler {

struct ChildStatus {
    ChildRef child;
    bool lost = false;
    std::string why;          // lost: how ("CHILD_DIED: child killed by signal 9 ...")
    uint32_t below_lost = 0;  // a usable next-level Worker child: children lost below it
    std::string below;        // ... and which ("chip 1: lost (...)"; "; " between entries)
    // "chip 1: lost (why)", "worker 0: usable; lost below it: <below>", "chip 0: usable".
    [[nodiscard]] std::string line() const;
};

}  // namespace simpler
