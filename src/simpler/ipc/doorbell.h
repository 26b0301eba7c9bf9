// Doorbell: the one shared word per parent that its children ring after
// publishing a result, so the parent thread driving the lanes sleeps on one
// address instead of polling N mailboxes.
//
// The word is a sequence counter (an event count), not a flag: the waiter
// reads sequence(), scans its mailboxes, and only then waits for the sequence
// to move past what it read. A ring that lands between the read and the wait
// moves the sequence, so the wait returns at once; no wake-up is lost and none
// needs to be consumed. Rings only ever add, so any number of children may ring
// concurrently. The doorbell carries no payload: what changed is found in the
// mailboxes, each of which is read as untrusted there (mailbox.h).
//
// Owns its shared page (created before fork, inherited by the children); does
// not own the children or the mailboxes.
#pragma once

#include <cstdint>
#include <optional>

#include "simpler/ipc/futex.h"
#include "simpler/ipc/shared_region.h"
#include "simpler/ipc/shared_word.h"
#include "simpler/ipc/spin_wait.h"

namespace simpler::ipc {

class Doorbell {
public:
    // Maps the doorbell page; std::runtime_error when mmap fails.
    Doorbell();

    [[nodiscard]] uint32_t sequence() const noexcept { return load_acquire(*word_); }
    // Bumps the sequence and wakes the parent if it sleeps. Async-signal-safe.
    void ring() const noexcept { bump(*word_); }
    // Waits until the sequence differs from `seen` or `deadline`; returns the
    // new sequence, or nullopt on timeout.
    // `peer_waking`: SpinWaiter::wait_change's (a publish this side made woke its child).
    std::optional<uint32_t> wait_past(uint32_t seen, SpinWaiter& waiter, Deadline deadline = NO_DEADLINE,
                                      bool peer_waking = false) const noexcept {
        return waiter.wait_change(*word_, seen, deadline, peer_waking);
    }

    [[nodiscard]] SharedWord* word() const noexcept { return word_; }

private:
    SharedRegion region_;
    SharedWord* word_ = nullptr;
};

}  // namespace simpler::ipc
