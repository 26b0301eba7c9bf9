// WorkerProgress: a snapshot of what one Worker has done, for progress
// displays and logging (Worker::progress()). Counted where the work happens —
// the submit path, a child's result coming back, a lane being lost — and read
// under the engine mutex, so one snapshot is consistent; nothing is counted
// that the hot path did not already touch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simpler {

struct ChildProgress {
    std::string name;    // "chip 0", "sub-worker 1", "worker 0"
    uint64_t done = 0;   // members this child finished (failures included)
    bool running = false;  // a member is on the child now
    bool lost = false;     // the child is gone for good
};

struct WorkerProgress {
    uint64_t submitted = 0;   // tasks submitted since init()
    uint64_t unfinished = 0;  // submitted and not yet finished (queued, waiting or running)
    uint64_t lost = 0;        // children lost since init()
    std::vector<ChildProgress> children;  // lane by lane, in ChildKind order
};

}  // namespace simpler
