// BelowStatus: what a next-level Worker child tells its parent, unasked, about
// the children below it that it lost.
//
// A level-3 Worker that runs as a level-4 Worker's child can lose a chip while
// the lane between the two stays healthy, so the parent would go on saying the
// child is usable. The parent maps one BelowStatus page per next-level Worker
// child before it forks it; in the child, the Worker its lane serves publishes
// there how many children were lost below it and which (its own lanes, and what
// its own next-level children report), each time that changes, and rings the
// parent's doorbell. The parent reads the page as it drives its lanes (one
// atomic load per such lane when nothing changed), shows it in child_status(),
// and passes it on up when it is itself such a child.
//
// The page is a sequence lock with one writer (the child's engine, under its
// mutex): a reader skips a write in progress (the writer rings when it is done)
// and bounds what it reads; the page carries no pointers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "simpler/ipc/doorbell.h"
#include "simpler/ipc/shared_region.h"

namespace simpler {

inline constexpr size_t BELOW_TEXT_BYTES = 1000;

class BelowStatus {
public:
    // Maps the page (zeroed: nothing lost); std::runtime_error when mmap fails.
    BelowStatus();

    struct Report {
        uint32_t version = 0;  // moves with every publish
        uint32_t lost = 0;     // children lost below, at every level under
        std::string text;      // "chip 1: lost (CHILD_DIED: ...)"; "; " between entries
    };

    // Child side: the new status (text cut to BELOW_TEXT_BYTES - 1 bytes).
    void publish(uint32_t lost, std::string_view text) noexcept;
    // Parent side: the status when its version is not `seen`, else nullopt
    // (also while a write is in progress: never waits on the child).
    [[nodiscard]] std::optional<Report> read_if_changed(uint32_t seen) const;

private:
    struct Page;
    ipc::SharedRegion region_;
    Page* page_ = nullptr;
};

// In a next-level Worker child, before it serves: the page this process reports
// to and the parent's doorbell (both mapped before the fork). Only this
// process reports (report_up checks the pid), not the processes it forks.
void set_reporting_up(BelowStatus* status, const ipc::Doorbell* parent_bell) noexcept;

// Publishes and rings when this process reports up; false when it does not.
bool report_up(uint32_t lost, std::string_view text) noexcept;

}  // namespace simpler
